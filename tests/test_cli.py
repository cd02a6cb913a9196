"""End-to-end tests of the ``fastpamst`` command line: real subprocesses, and ``main([...])`` in-process."""

import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys

import numba
import numpy as np
import pytest
import scipy.sparse as sp
from numba.core.registry import CPUDispatcher

import fastpamst_nb as fp
from fastpamst_nb import bench as fp_bench
from fastpamst_nb import cli as fp_cli
from fastpamst_nb import window as fp_window
from fastpamst_nb.dense_scan import _dense_scan
from fastpamst_nb.graph import kernel_view

NAMES = ("exact_mst", "fast_pamst", "fast_pamst_exponential", "post_processing", "pamst")
MODULE = [sys.executable, "-m", "fastpamst_nb.cli"]
# prefer the script installed next to this interpreter over any other one on PATH
_SCRIPT = shutil.which("fastpamst", path=os.pathsep.join([os.path.dirname(sys.executable),
                                                           os.environ.get("PATH", "")]))
PACKAGE = [sys.executable, "-m", "fastpamst_nb"]
ENTRY_POINTS = [pytest.param(MODULE, id="python-m-cli"),
                pytest.param([_SCRIPT], id="script",
                             marks=pytest.mark.skipif(_SCRIPT is None, reason="fastpamst script not installed"))]


def cli(cmd, *args):
    """Run the command line and return the CompletedProcess (text mode)."""
    return subprocess.run([*cmd, *map(str, args)], capture_output=True, text=True, timeout=600)


def uniform(n, seed):
    rng = np.random.default_rng(seed)
    W = np.triu(rng.random((n, n)), 1)
    return W + W.T


def sparse_connected(n, seed):
    """A random connected sparse graph: a random spanning path plus extra random edges."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    rows = list(order[:-1]) + list(rng.integers(0, n, 3 * n))
    cols = list(order[1:]) + list(rng.integers(0, n, 3 * n))
    A = sp.coo_matrix((rng.random(len(rows)) + 0.1, (rows, cols)), shape=(n, n)).tocsr()
    A.setdiag(0)
    A.eliminate_zeros()
    return A.maximum(A.T).tocsr()


def read_edges(text):
    """Parse the default CSV (exactly two columns u,v); return a list of (u, v)."""
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["u", "v"], rows[:1]
    assert all(len(r) == 2 for r in rows), "a private release has exactly 2 columns"
    return [(int(u), int(v)) for u, v in rows[1:]]


def read_weighted(text, column):
    """Parse a 3-column CSV whose third column is named ``column``; return a list of (u, v, weight)."""
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["u", "v", column], rows[:1]
    assert all(len(r) == 3 for r in rows)
    return [(int(u), int(v), float(w)) for u, v, w in rows[1:]]


def assert_spanning_tree(edges, weight_of, n):
    """n - 1 edges that connect all n vertices (so no cycle), all edges of the matrix (weight != 0)."""
    assert len(edges) == n - 1
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u, v in edges:
        assert weight_of(u, v) != 0  # an edge of the input graph
        ru, rv = find(u), find(v)
        assert ru != rv, f"edge ({u}, {v}) closes a cycle"
        parent[ru] = rv


def stderr_lines(text):
    """The lines of stderr, without the progress note a run prints while numba compiles
    (a fresh environment, or kernels of a kind not compiled yet)."""
    return [x for x in text.strip().splitlines() if not x.startswith("fastpamst: compiling")]


def assert_user_error(proc):
    assert proc.returncode == 2, proc.stderr
    lines = stderr_lines(proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("fastpamst: error:"), proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("cmd", ENTRY_POINTS)
def test_demo_prints_every_algorithm(cmd):
    proc = cli(cmd, "demo", "--n", 200)
    assert proc.returncode == 0, proc.stderr
    rows = {line.split()[0]: line.split() for line in proc.stdout.splitlines() if line.split()[:1]
            and line.split()[0] in NAMES}
    assert set(rows) == set(NAMES), proc.stdout
    for name, cells in rows.items():
        assert len(cells) == 4, cells  # algorithm, seconds, tree weight, excess
        excess = float(cells[3])
        assert math.isfinite(excess) and excess >= -1e-9, cells
    assert float(rows["exact_mst"][3]) == 0.0
    assert "epsilon" in proc.stdout and "JIT" in proc.stdout
    # it prints weights because they are made up, and says so
    assert "synthetic" in proc.stdout and "a real release" in proc.stdout


# fast_pamst_gumbel and exact are covered by the seed and exact tests below
@pytest.mark.parametrize("algorithm", ["fast_pamst", "pamst", "post_processing"])
def test_run_dense_npy(tmp_path, algorithm):
    n = 40
    W = uniform(n, 1)
    np.save(tmp_path / "w.npy", W)
    out = tmp_path / "edges.csv"
    proc = cli(MODULE, "run", tmp_path / "w.npy", "--rho", 0.1, "--sensitivity", 1e-5,
               "--algorithm", algorithm, "--seed", 3, "--output", out)
    assert proc.returncode == 0, proc.stderr
    assert_spanning_tree(read_edges(out.read_text()), lambda u, v: W[u, v], n)
    assert algorithm in proc.stderr and f"n = {n}" in proc.stderr
    assert "rho = 0.1 zCDP" in proc.stderr


@pytest.mark.parametrize("cmd", ENTRY_POINTS)
def test_run_sparse_npz_to_stdout(tmp_path, cmd):
    n = 50
    A = sparse_connected(n, 2)
    sp.save_npz(tmp_path / "w.npz", A)
    proc = cli(cmd, "run", tmp_path / "w.npz", "--rho", 0.1, "--sensitivity", 1e-5, "--seed", 0)
    assert proc.returncode == 0, proc.stderr
    # A[u, v] is 0 for a non-edge, and every stored weight is >= 0.1, so this also checks the topology
    assert_spanning_tree(read_edges(proc.stdout), lambda u, v: A[u, v], n)


def test_run_exact_needs_no_budget_and_maximum(tmp_path):
    n = 30
    W = uniform(n, 4)
    np.save(tmp_path / "w.npy", W)
    lo = cli(MODULE, "run", tmp_path / "w.npy", "--algorithm", "exact")
    hi = cli(MODULE, "run", tmp_path / "w.npy", "--algorithm", "exact", "--maximum")
    assert lo.returncode == 0 and hi.returncode == 0, lo.stderr + hi.stderr
    rows_lo, rows_hi = read_edges(lo.stdout), read_edges(hi.stdout)
    for rows in (rows_lo, rows_hi):
        assert_spanning_tree(rows, lambda u, v: W[u, v], n)
    assert sum(W[u, v] for u, v in rows_hi) > sum(W[u, v] for u, v in rows_lo)
    for proc in (lo, hi):  # the exact tree is not private, and the summary says so
        assert "NOT private" in proc.stderr and "rho" not in proc.stderr
    # --weights true: the true weights, labelled and warned about
    tw = cli(MODULE, "run", tmp_path / "w.npy", "--algorithm", "exact", "--weights", "true")
    assert tw.returncode == 0, tw.stderr
    rows = read_weighted(tw.stdout, "true_weight")
    assert [(u, v) for u, v, _ in rows] == rows_lo
    assert all(w == W[u, v] for u, v, w in rows)  # the CSV keeps every digit
    assert "WARNING" in tw.stderr and "NOT private" in tw.stderr


def test_seed_reproduces_the_csv(tmp_path):
    n = 60
    W = uniform(n, 5)
    np.save(tmp_path / "w.npy", W)
    args = ["run", tmp_path / "w.npy", "--rho", 0.01, "--sensitivity", 1e-3,
            "--algorithm", "fast_pamst_gumbel", "--seed", 7]
    first = cli(MODULE, *args, "--output", tmp_path / "a.csv")
    second = cli(MODULE, *args)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert (tmp_path / "a.csv").read_text() == second.stdout
    assert_spanning_tree(read_edges(second.stdout), lambda u, v: W[u, v], n)
    # the noised weights are reproducible too, and leave the edges as they were
    noisy = [cli(MODULE, *args, "--weights", "private", "--weights-rho", 0.5) for _ in range(2)]
    assert all(p.returncode == 0 for p in noisy), noisy[0].stderr
    assert noisy[0].stdout == noisy[1].stdout
    assert [(u, v) for u, v, _ in read_weighted(noisy[0].stdout, "private_weight")] == read_edges(second.stdout)


def _asymmetric(tmp_path):
    W = uniform(10, 6)
    W[2, 7] += 0.5
    np.save(tmp_path / "asym.npy", W)
    return [tmp_path / "asym.npy", "--rho", 0.1, "--sensitivity", 1e-5]


def _missing(tmp_path):
    return [tmp_path / "nope.npy", "--rho", 0.1, "--sensitivity", 1e-5]


def _txt(tmp_path):
    np.savetxt(tmp_path / "w.txt", uniform(5, 0))
    return [tmp_path / "w.txt", "--rho", 0.1, "--sensitivity", 1e-5]


def _dense_npz(tmp_path):
    np.savez(tmp_path / "plain.npz", w=uniform(5, 0))  # an array archive, not a sparse matrix
    return [tmp_path / "plain.npz", "--rho", 0.1, "--sensitivity", 1e-5]


def _no_budget(tmp_path):
    np.save(tmp_path / "w.npy", uniform(5, 0))
    return [tmp_path / "w.npy", "--algorithm", "fast_pamst"]


def _ok(tmp_path):
    np.save(tmp_path / "w.npy", uniform(5, 0))
    return [tmp_path / "w.npy", "--rho", 0.1, "--sensitivity", 1e-5]


def _weights_rho_without_private(tmp_path):
    return [*_ok(tmp_path), "--weights-rho", 0.1]


def _weights_rho_with_true(tmp_path):
    return [*_ok(tmp_path), "--weights", "true", "--weights-rho", 0.1]


def _private_without_weights_rho(tmp_path):
    return [*_ok(tmp_path), "--weights", "private"]


def _private_bad_weights_rho(tmp_path):
    return [*_ok(tmp_path), "--weights", "private", "--weights-rho", -1]


def _private_weights_of_exact(tmp_path):
    return [*_ok(tmp_path), "--algorithm", "exact", "--weights", "private", "--weights-rho", 1]


def _unknown_weights(tmp_path):
    return [*_ok(tmp_path), "--weights", "noisy"]


@pytest.mark.parametrize("make_args", [_asymmetric, _missing, _txt, _dense_npz, _no_budget,
                                       _weights_rho_without_private, _weights_rho_with_true,
                                       _private_without_weights_rho, _private_bad_weights_rho,
                                       _private_weights_of_exact, _unknown_weights])
def test_run_user_errors_are_one_line(tmp_path, make_args):
    proc = cli(MODULE, "run", *make_args(tmp_path))
    assert_user_error(proc)
    assert proc.stdout == ""


def test_weights_rho_errors_name_the_problem(tmp_path):
    proc = cli(MODULE, "run", *_weights_rho_without_private(tmp_path))
    assert "--weights-rho" in proc.stderr and "--weights private" in proc.stderr
    proc = cli(MODULE, "run", *_private_without_weights_rho(tmp_path))
    assert "requires --weights-rho" in proc.stderr


# ----------------------------------------------------------------------------- what a release publishes

DISTINCTIVE = 123.456789  # every edge weighs this: it can only appear in the output if a weight leaks
N_DIST = 12


@pytest.fixture
def distinctive(tmp_path):
    W = np.full((N_DIST, N_DIST), DISTINCTIVE)
    np.fill_diagonal(W, 0.0)
    np.save(tmp_path / "w.npy", W)
    return [tmp_path / "w.npy", "--rho", 0.1, "--sensitivity", 0.01, "--seed", 0]


def weight_digits(text):
    """Traces of the true weights (each edge, the tree's total) in ``text``."""
    total = (N_DIST - 1) * DISTINCTIVE
    return [d for d in ("123.45", "123.46", f"{total:.6g}", f"{total:.4g}", f"{total:.3f}") if d in text]


@pytest.mark.parametrize("algorithm", ["fast_pamst", "fast_pamst_gumbel", "pamst", "post_processing", "exact"])
def test_default_release_is_edges_only(distinctive, algorithm):
    proc = cli(MODULE, "run", *distinctive, "--algorithm", algorithm)
    assert proc.returncode == 0, proc.stderr
    edges = read_edges(proc.stdout)  # exactly two columns, header u,v
    assert len(edges) == N_DIST - 1
    assert weight_digits(proc.stdout + proc.stderr) == []
    summary = stderr_lines(proc.stderr)
    assert len(summary) == 1 and f"n = {N_DIST}" in summary[0]
    assert "second" not in summary[0] and "time" not in summary[0]  # wall time is not private
    if algorithm == "exact":
        assert "NOT private" in summary[0]
    else:
        assert "rho = 0.1 zCDP" in summary[0] and "epsilon" in summary[0]


def test_summary_is_the_same_for_neighbouring_matrices(tmp_path):
    # issue 25 item 2: the summary holds no wall time, so neighbouring inputs (one entry
    # moved by the sensitivity) print the same summary; --timing prints it apart
    W = uniform(40, 3)
    V = W.copy()
    V[2, 7] = V[7, 2] = W[2, 7] + 0.01
    np.save(tmp_path / "w.npy", W)
    np.save(tmp_path / "v.npy", V)
    args = ("--rho", 0.1, "--sensitivity", 0.01, "--seed", 0)
    out = [cli(MODULE, "run", tmp_path / name, *args).stderr for name in ("w.npy", "v.npy")]
    assert out[0] == out[1] and "second" not in out[0] and "time" not in out[0]
    timed = cli(MODULE, "run", tmp_path / "w.npy", *args, "--timing")
    assert timed.returncode == 0, timed.stderr
    lines = timed.stderr.strip().splitlines()
    assert lines[0] == out[0].strip() and len(lines) == 2
    assert "wall time" in lines[1] and "NOT private" in lines[1]


def test_private_weights_column_and_total_budget(distinctive):
    proc = cli(MODULE, "run", *distinctive, "--weights", "private", "--weights-rho", 0.05)
    assert proc.returncode == 0, proc.stderr
    rows = read_weighted(proc.stdout, "private_weight")
    assert len(rows) == N_DIST - 1
    w = np.array([w for *_, w in rows])
    assert np.all(w != DISTINCTIVE)  # noised, not the true weights
    sigma = 0.01 * math.sqrt((N_DIST - 1) / (2 * 0.05))  # private_edge_weights' Gaussian mechanism
    assert np.all(np.abs(w - DISTINCTIVE) < 8 * sigma)
    assert "123.456789" not in proc.stdout + proc.stderr
    assert f"{(N_DIST - 1) * DISTINCTIVE:.6g}" not in proc.stderr
    # the edges are those of the default release with the same seed
    plain = cli(MODULE, "run", *distinctive)
    assert [(u, v) for u, v, _ in rows] == read_edges(plain.stdout)
    # the summary reports the total budget, and says it is the total
    assert "total" in proc.stderr and "rho = 0.15 zCDP" in proc.stderr
    assert "tree rho = 0.1" in proc.stderr and "weights rho = 0.05" in proc.stderr


def test_true_weights_only_on_request_with_a_warning(distinctive):
    proc = cli(MODULE, "run", *distinctive, "--weights", "true")
    assert proc.returncode == 0, proc.stderr
    rows = read_weighted(proc.stdout, "true_weight")
    assert all(w == DISTINCTIVE for *_, w in rows)
    assert "WARNING" in proc.stderr and "NOT private" in proc.stderr
    # still no total weight in the summary
    assert f"{(N_DIST - 1) * DISTINCTIVE:.6g}" not in proc.stderr


def test_help_shows_the_weights_options():
    proc = cli(MODULE, "run", "--help")
    assert proc.returncode == 0
    assert "--weights {none,private,true}" in proc.stdout and "--weights-rho" in proc.stdout


@pytest.mark.parametrize("cmd, args", [(MODULE, ["demo", "--rho", "-1"]), (PACKAGE, ["frobnicate"])])
def test_bad_arguments_are_one_line(cmd, args):
    assert_user_error(cli(cmd, *args))


def test_bench_writes_json(tmp_path):
    out = tmp_path / "out.json"
    proc = cli(MODULE, "bench", "--n", 200, 300, "--repeat", 1, "--sparse", 300, "--json", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    for n in ("200", "300"):
        assert set(doc[n]) == set(fp_bench.ALGORITHMS)
        assert all(t > 0 for t in doc[n].values())
    assert math.isfinite(doc["fast_pamst_slope"])
    assert doc["sparse"]["n"] == 300 and 5 * 300 <= doc["sparse"]["m"] <= 6 * 300
    assert doc["sparse"]["fast_pamst"] > 0 and doc["sparse"]["scipy_mst"] > 0
    assert "x floor" in proc.stdout and "fast_pamst_gumbel W*1000" in proc.stdout
    assert "fast_pamst time ~ n^" in proc.stdout and "x scipy)" in proc.stdout


def test_bench_shapes_prints_the_shapes_table(capsys):
    assert fp_cli.main(["bench", "--shapes", "--n", "120", "--sparse", "300", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "dense, n = 120" in out and "x floor" in out and "sparse, n = 300" in out and "x scipy" in out
    rows = [line.split("  ")[0] for line in out.splitlines()]
    for description, _ in fp_bench.SHAPES.values():
        assert rows.count(description) == 2  # a dense row and a sparse row


@pytest.mark.parametrize("args, message", [(["--n", "100", "200"], "one size"),
                                           (["--sparse", "3"], "--sparse must be 0"),
                                           (["--json", "x.json"], "not available with --shapes"),
                                           (["--sensitivity", "1e-5", "0"], "finite positive")])
def test_bench_shapes_usage_errors(capsys, monkeypatch, args, message):
    monkeypatch.setattr(fp_cli.bench, "run_shapes_bench", _must_not_run("the benchmark"))
    assert message in main_error(capsys, "bench", "--shapes", *args)


def test_bench_shapes_noise_levels_print_one_ratio_column_each(capsys, monkeypatch):
    # --sensitivity reaches run_shapes_bench; the table has a ratio column per level
    seen = {}

    def fake(n, sparse_n, repeat, log=None, sensitivities=None):
        seen.update(n=n, sparse_n=sparse_n, sensitivities=sensitivities)
        by_level = {d: (0.02 * (1 + i), 0.01) for i, d in enumerate(sensitivities)}
        return {"dense": {}, "sparse": {"uniform": by_level}, "n": n, "sparse_n": sparse_n, "rho": 0.1,
                "sensitivities": list(sensitivities), "repeat": repeat}

    monkeypatch.setattr(fp_cli.bench, "run_shapes_bench", fake)
    assert fp_cli.main(["bench", "--shapes", "--n", "0", "--sparse", "300", "--sensitivity", "1e-5", "0.1"]) == 0
    assert seen == {"n": 0, "sparse_n": 300, "sensitivities": [1e-5, 0.1]}
    out = capsys.readouterr().out
    assert "x scipy, 1e-05" in out and "x scipy, 0.1" in out and "dense" not in out
    assert [line.split()[-2:] for line in out.splitlines() if line.startswith("Uniform")] == [["2.0x", "4.0x"]]
    assert "only available with --shapes" in main_error(capsys, "bench", "--n", "8", "--sensitivity", "0.1")


def test_bench_floor_is_the_mst_weight():
    for n in (2, 3, 50):
        W = fp_bench.uniform_weights(n, seed=n)
        assert fp_bench.floor_prim(W) == pytest.approx(fp.exact_mst(W).weight, rel=1e-12)


def test_bench_sparse_topology_is_connected_and_symmetric():
    A = fp_bench.sparse_topology(500, seed=3)
    assert (A != A.T).nnz == 0 and A.diagonal().max() == 0
    assert A.data.min() > 0 and A.data.max() <= 1
    assert fp.exact_mst(A).edges.shape == (499, 2)  # raises if disconnected


# ----------------------------------------------------------------------------- in-process: issue 11's flags
# main([...]) runs the same code as the console script, without a Python start-up per case

N_IN = 40
BUDGET = ["--rho", 0.01, "--sensitivity", 1e-3]


def main_run(capsys, *args):
    """``fastpamst ARGS`` in this process: (exit status, stdout, stderr)."""
    code = fp_cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def main_error(capsys, *args):
    """The one error line of ``fastpamst ARGS``, after checking the error protocol."""
    code, out, err = main_run(capsys, *args)
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastpamst: error: "), err
    return lines[0]


def _must_not_run(what):
    def boom(*args, **kwargs):
        raise AssertionError(f"{what} ran before the usage error was reported")
    return boom


@pytest.fixture
def matrix(tmp_path):
    """A saved Uniform complete graph (N_IN vertices): (path as str, W)."""
    W = uniform(N_IN, 11)
    np.save(tmp_path / "w.npy", W)
    return str(tmp_path / "w.npy"), W


@pytest.fixture
def no_reading(monkeypatch):
    """Errors that need no data must come before the matrix is opened."""
    monkeypatch.setattr(fp_cli, "_load_weights", _must_not_run("reading the matrix"))


@pytest.fixture
def no_computing(monkeypatch):
    """Errors that need only the matrix's header must come before warm-up and computation."""
    monkeypatch.setattr(fp_cli, "_warm_up", _must_not_run("the JIT warm-up"))
    monkeypatch.setattr(fp_cli, "_release", _must_not_run("the release"))


# --- --epsilon / --delta

def test_epsilon_delta_runs_at_the_converted_rho(matrix, capsys):
    path, W = matrix
    rho = fp.approx_dp_to_zcdp(2.0, 1e-6)  # the library's default conversion
    code, by_eps, err = main_run(capsys, "run", path, "--epsilon", 2, "--delta", 1e-6,
                                 "--sensitivity", 1e-3, "--seed", 3)
    assert code == 0, err
    _, by_rho, _ = main_run(capsys, "run", path, "--rho", repr(rho), "--sensitivity", 1e-3, "--seed", 3)
    assert by_eps == by_rho  # same budget, same seed: the same tree
    edges = read_edges(by_eps)
    assert_spanning_tree(edges, lambda u, v: W[u, v], N_IN)
    lib = fp.fast_pamst(W, epsilon=2.0, delta=1e-6, sensitivity=1e-3, rng=3)
    assert edges == [tuple(e) for e in lib.edges.tolist()]
    # the summary reports rho, where it came from, and epsilon at the user's delta
    assert f"privacy budget rho = {rho:g} zCDP (converted from epsilon = 2, delta = 1e-06)" in err
    assert "i.e. epsilon = 2 at delta = 1e-06" in err


def test_epsilon_delta_with_private_weights_adds_a_rho(matrix, capsys):
    path, _ = matrix
    rho = fp.approx_dp_to_zcdp(2.0, 1e-6)
    code, out, err = main_run(capsys, "run", path, "--epsilon", 2, "--delta", 1e-6, "--sensitivity", 1e-3,
                              "--weights", "private", "--weights-rho", 0.5, "--seed", 0)
    assert code == 0, err
    assert len(read_weighted(out, "private_weight")) == N_IN - 1
    total = rho + 0.5
    assert f"total privacy budget rho = {total:g} zCDP (tree rho = {rho:g}" in err
    assert "weights rho = 0.5" in err
    assert f"epsilon = {fp.zcdp_to_approx_dp(total, 1e-6):.4g} at delta = 1e-06" in err


@pytest.mark.parametrize("args, expected", [
    (["--epsilon", 2, "--sensitivity", 1e-3], "--epsilon needs --delta D"),
    (["--delta", 1e-6, "--sensitivity", 1e-3], "--delta needs --epsilon E"),
    (["--rho", 0.1, "--epsilon", 2, "--delta", 1e-6, "--sensitivity", 1e-3], "not both"),
    (["--epsilon", 2, "--delta", 1.5, "--sensitivity", 1e-3], "--delta must lie strictly between 0 and 1"),
    (["--epsilon", -1, "--delta", 1e-6, "--sensitivity", 1e-3], "--epsilon must be a finite positive"),
    (["--rho", 0, "--sensitivity", 1e-3], "--rho must be a finite positive"),
    (["--rho", 0.1, "--sensitivity", -1], "--sensitivity must be a finite positive"),
    (["--sensitivity", 1e-3], "--rho R (or --epsilon E --delta D)"),
    (["--algorithm", "exact", "--epsilon", 2], "--epsilon needs --delta D"),
])
def test_budget_errors_come_before_reading(matrix, capsys, no_reading, args, expected):
    line = main_error(capsys, "run", matrix[0], *args)
    assert expected in line, line


# --- --noise

def test_noise_gumbel_is_what_fast_pamst_gumbel_and_the_library_run(matrix, capsys):
    path, W = matrix
    _, flag, err = main_run(capsys, "run", path, *BUDGET, "--noise", "gumbel", "--seed", 5)
    _, alias, alias_err = main_run(capsys, "run", path, *BUDGET, "--algorithm", "fast_pamst_gumbel", "--seed", 5)
    assert flag == alias  # the old algorithm name still selects gumbel
    lib = fp.fast_pamst(W, rho=0.01, sensitivity=1e-3, noise="gumbel", rng=5)
    assert read_edges(flag) == [tuple(e) for e in lib.edges.tolist()]
    assert "algorithm = fast_pamst, noise = gumbel" in err
    assert "algorithm = fast_pamst_gumbel, noise = gumbel" in alias_err
    _, _, default_err = main_run(capsys, "run", path, *BUDGET, "--seed", 5)
    assert "noise = gumbel" in default_err


def test_noise_reaches_pamst(matrix, capsys):
    path, W = matrix
    code, out, err = main_run(capsys, "run", path, *BUDGET, "--algorithm", "pamst", "--noise", "gumbel",
                              "--seed", 5)
    assert code == 0, err
    gumbel = fp.pamst(W, rho=0.01, sensitivity=1e-3, noise="gumbel", rng=5).edges.tolist()
    exponential = fp.pamst(W, rho=0.01, sensitivity=1e-3, noise="exponential", rng=5).edges.tolist()
    assert gumbel != exponential  # so the comparison below tells the two apart
    assert read_edges(out) == [tuple(e) for e in gumbel]
    assert "algorithm = pamst, noise = gumbel" in err


@pytest.mark.parametrize("algorithm, noise, expected", [
    ("post_processing", "gumbel", "--algorithm post_processing has no such noise"),
    ("exact", "exponential", "--algorithm exact has no such noise"),
    ("fast_pamst_gumbel", "exponential", "use --algorithm fast_pamst --noise exponential"),
])
def test_noise_errors(matrix, capsys, no_reading, algorithm, noise, expected):
    line = main_error(capsys, "run", matrix[0], *BUDGET, "--algorithm", algorithm, "--noise", noise)
    assert expected in line, line


# --- --discretization

def test_discretization_reaches_fast_pamst(matrix, capsys):
    path, W = matrix
    code, out, err = main_run(capsys, "run", path, *BUDGET, "--noise", "exponential", "--discretization",
                              0.25, "--seed", 5)
    assert code == 0, err
    kw = {"rho": 0.01, "sensitivity": 1e-3, "rng": 5, "noise": "exponential"}
    coarse = fp.fast_pamst(W, discretization=0.25, **kw).edges.tolist()
    fine = fp.fast_pamst(W, **kw).edges.tolist()
    assert coarse != fine  # so the comparison below tells them apart
    assert read_edges(out) == [tuple(e) for e in coarse]
    assert "discretization = 0.25" in err


@pytest.mark.parametrize("args, expected", [
    (["--algorithm", "pamst", "--discretization", 1], "--algorithm pamst does not discretize"),
    (["--algorithm", "exact", "--discretization", 1], "--algorithm exact does not discretize"),
    (["--noise", "exponential", "--discretization", 0], "--discretization must be a finite positive number"),
    (["--noise", "exponential", "--discretization", -0.5], "--discretization must be a finite positive number"),
])
def test_discretization_errors(matrix, capsys, no_reading, args, expected):
    line = main_error(capsys, "run", matrix[0], *BUDGET, *args)
    assert expected in line, line


# --- --start

@pytest.mark.parametrize("algorithm", ["fast_pamst", "pamst", "exact"])
def test_start_is_prims_first_vertex(matrix, capsys, algorithm):
    path, W = matrix
    code, out, err = main_run(capsys, "run", path, *BUDGET, "--algorithm", algorithm, "--start", 7,
                              "--seed", 2)
    assert code == 0, err
    edges = read_edges(out)
    assert_spanning_tree(edges, lambda u, v: W[u, v], N_IN)
    assert edges[0][0] == 7  # Prim's first edge leaves the start vertex
    fn = {"fast_pamst": lambda: fp.fast_pamst(W, rho=0.01, sensitivity=1e-3, start=7, rng=2),
          "pamst": lambda: fp.pamst(W, rho=0.01, sensitivity=1e-3, start=7, rng=2),
          "exact": lambda: fp.exact_mst(W, start=7)}[algorithm]
    assert edges == [tuple(e) for e in fn().edges.tolist()]
    assert "start = 7" in err


@pytest.mark.parametrize("args, expected", [
    (["--algorithm", "post_processing", "--start", 1], "--algorithm post_processing has none"),
    (["--start", -1], "--start must be a vertex index 0 <= K < n, got -1"),
])
def test_start_errors_without_data(matrix, capsys, no_reading, args, expected):
    line = main_error(capsys, "run", matrix[0], *BUDGET, *args)
    assert expected in line, line


@pytest.mark.parametrize("sparse", [False, True], ids=["npy", "npz"])
def test_start_out_of_range_is_checked_against_n_before_computing(tmp_path, capsys, no_computing, sparse):
    if sparse:
        path = tmp_path / "w.npz"
        sp.save_npz(path, sparse_connected(N_IN, 3))
    else:
        path = tmp_path / "w.npy"
        np.save(path, uniform(N_IN, 3))
    line = main_error(capsys, "run", path, *BUDGET, "--start", N_IN)
    assert f"--start {N_IN} is out of range" in line and f"n = {N_IN} vertices" in line
    assert f"0 <= K < {N_IN}" in line


# --- --version and --help

def test_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        fp_cli.main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"fastpamst {fp.__version__}\n"


def test_version_of_the_console_command():
    proc = cli(PACKAGE, "--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"fastpamst {fp.__version__}"


def test_help_shows_the_new_run_options(capsys):
    with pytest.raises(SystemExit):
        fp_cli.main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps at the terminal width
    for option in ("--epsilon E", "--delta D", "--noise {exponential,gumbel}", "--discretization S",
                   "--start K", "--symmetric {upper,lower}"):
        assert option in text, option
    assert "--weights-rho R zCDP budget" in text


# --- --output and --json are checked before computing

def _output_cases(tmp_path):
    (tmp_path / "a_file").write_text("x")
    (tmp_path / "a_dir").mkdir()
    return [
        (tmp_path / "missing" / "out.csv", "does not exist"),
        (tmp_path / "a_dir", "is a directory"),
        (tmp_path / "a_file" / "out.csv", "is a file, not a directory"),
    ]


def test_output_must_be_writable(matrix, tmp_path, capsys, no_reading):
    for target, expected in _output_cases(tmp_path):
        line = main_error(capsys, "run", matrix[0], *BUDGET, "--output", target)
        assert expected in line and "--output" in line, line
    line = main_error(capsys, "run", matrix[0], *BUDGET, "--output", matrix[0])
    assert "is the input matrix" in line
    assert np.load(matrix[0]).shape == (N_IN, N_IN)  # untouched


def test_bench_json_must_be_writable(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(fp_cli.bench, "run_bench", _must_not_run("the benchmark"))
    for target, expected in _output_cases(tmp_path):
        line = main_error(capsys, "bench", "--n", 100, "--json", target)
        assert expected in line and "--json" in line, line


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write read-only files")
def test_read_only_output_file_and_directory(matrix, tmp_path, capsys, no_reading, monkeypatch):
    ro_file = tmp_path / "ro.csv"
    ro_file.write_text("")
    ro_file.chmod(0o444)
    ro_dir = tmp_path / "ro_dir"
    ro_dir.mkdir()
    ro_dir.chmod(0o555)
    try:
        assert "is not writable" in main_error(capsys, "run", matrix[0], *BUDGET, "--output", ro_file)
        assert "is not writable" in main_error(capsys, "run", matrix[0], *BUDGET, "--output", ro_dir / "o.csv")
        monkeypatch.setattr(fp_cli.bench, "run_bench", _must_not_run("the benchmark"))
        assert "is not writable" in main_error(capsys, "bench", "--n", 100, "--json", ro_file)
    finally:
        ro_dir.chmod(0o755)


# --- the warm-up compiles what the run on a memmap calls

def _signatures():
    """Every compiled signature of every numba dispatcher of the package."""
    found = set()
    for name, module in list(sys.modules.items()):
        if name == "fastpamst_nb" or name.startswith("fastpamst_nb."):
            for attr, obj in vars(module).items():
                if isinstance(obj, CPUDispatcher):
                    found |= {(name, attr, sig) for sig in obj.signatures}
    return found


@pytest.mark.parametrize("kind", ["float64-C", "float32-F", "sparse", "float64-C-upper"])
def test_warm_up_compiles_what_the_run_calls(tmp_path, kind, monkeypatch):
    n = 200
    symmetric = "upper" if kind.endswith("-upper") else None  # --symmetric's own kernels
    W = uniform(n, 12) * 100.0  # with s = 1e-3: few buckets; s = 1e-10: too many (the queue's two builds)
    if kind == "sparse":
        path = tmp_path / "w.npz"
        sp.save_npz(path, sp.csr_matrix(W))
    else:
        path = tmp_path / "w.npy"
        np.save(path, np.asfortranarray(W.astype(np.float32)) if kind == "float32-F" else W)
    M = fp_cli._load_weights(str(path))
    if kind != "sparse":
        assert isinstance(M, np.memmap) and not M.flags.writeable
        view = np.asarray(M)
        view = view if view.flags.c_contiguous else view.T  # what the kernels get (W symmetric)
        # an ordinary float64 array is another numba type: the old warm-up could not cover this
        assert numba.typeof(view) != numba.typeof(fp_bench.uniform_weights(8, seed=0))
    kw = {"rho": 0.1, "sensitivity": 1e-3, "rng": 0, "symmetric": symmetric}
    calls = {
        "fast_pamst": [lambda: fp.fast_pamst(M, **kw)],  # gumbel, the default
        "fast_pamst_gumbel": [lambda: fp.fast_pamst(M, noise="gumbel", **kw)],
        "pamst": [lambda: fp.pamst(M, **kw)],
        "post_processing": [lambda: fp.post_processing(M, **kw)],
        "exact": [lambda: fp.exact_mst(M, symmetric=symmetric)],
    }
    for algorithm in fp_cli.ALGORITHMS:
        fp_cli._warm_up([algorithm], like=M, symmetric=symmetric)
        before = _signatures()
        if kind != "sparse" and symmetric is None:
            # what the kernels read: a read-only view, small float32 widened (graph.kernel_view);
            # with symmetric= they read a copy of one triangle (an ordinary array)
            assert any(sig[0] == numba.typeof(kernel_view(view)) for sig in _dense_scan.signatures)
        for call in calls[algorithm]:
            assert len(call().edges) == n - 1
        assert _signatures() == before, (algorithm, _signatures() - before)
    # --noise exponential: the queue's two builds (direct buckets; wide ones dense, compressed sparse)
    fp_cli._warm_up(["fast_pamst"], like=M, noise="exponential", symmetric=symmetric)
    before = _signatures()
    for s in (None, 1e-10):
        assert len(fp.fast_pamst(M, noise="exponential", discretization=s, **kw).edges) == n - 1
    assert _signatures() == before, ("fast_pamst exponential", _signatures() - before)
    if kind in ("float64-C", "float32-F"):
        # a validation samples the islands only from ISLANDS_MIN_ENTRIES entries (no tiny
        # warm-up release reaches it; the demo's n = 2000 paid its compilation): lowered
        # here, both of its paths (one island; islands found by a pass) must be warm too
        monkeypatch.setattr(fp_window, "ISLANDS_MIN_ENTRIES", 1)
        for s in (None, 1e-10):
            assert len(fp.fast_pamst(M, noise="exponential", discretization=s, **kw).edges) == n - 1
        assert _signatures() == before, ("islands' sample", _signatures() - before)


# --- --symmetric reads one triangle

def test_symmetric_reads_one_triangle(tmp_path, capsys):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((N_IN, 40))
    W = 1.0 - np.corrcoef(X)  # symmetric up to rounding only: the default refuses it
    W[np.tril_indices(N_IN, -1)] += 1e-15 * (np.abs(W[np.tril_indices(N_IN, -1)]) + 1.0)
    assert not np.array_equal(W, W.T)
    path = tmp_path / "corr.npy"
    np.save(path, W)
    code, _, err = main_run(capsys, "run", path, "--rho", 1, "--sensitivity", 0.01, "--seed", 0)
    assert code == 2 and err.count("\n") == 1
    assert "pass --symmetric upper (or lower) to read one triangle" in err  # the flag, not the keyword
    for triangle in fp_cli.SYMMETRIC:
        code, out, err = main_run(capsys, "run", path, "--rho", 1, "--sensitivity", 0.01, "--seed", 0,
                                  "--symmetric", triangle)
        assert code == 0, err
        lib = fp.fast_pamst(W, 1.0, 0.01, rng=0, symmetric=triangle)
        assert read_edges(out) == [tuple(e) for e in lib.edges.tolist()]
    # the other triangle is never read: NaN there is fine
    W[np.tril_indices(N_IN)] = np.nan
    np.save(path, W)
    code, out, err = main_run(capsys, "run", path, "--algorithm", "exact", "--symmetric", "upper")
    assert code == 0, err
    assert read_edges(out) == [tuple(e) for e in fp.exact_mst(W, symmetric="upper").edges.tolist()]


def test_symmetric_choices(matrix, capsys, no_reading):
    line = main_error(capsys, "run", matrix[0], "--algorithm", "exact", "--symmetric", "both")
    assert "--symmetric: invalid choice: 'both'" in line and "upper" in line and "lower" in line


# --- corrupt files get a message about the file

def _truncated(path):
    np.save(path, uniform(30, 0))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return "not a valid .npy file (truncated", "np.save"


def _truncated_condensed(path):
    np.save(path, np.arange(45.0))  # a pdist vector of n = 10, cut short
    path.write_bytes(path.read_bytes()[:-8])
    return "not a valid .npy file (truncated: the header announces a 45 array", "np.save"


def _random_bytes(path):
    path.write_bytes(np.random.default_rng(0).bytes(1000))
    return "not a valid .npy file (it does not start with the .npy signature", "np.save"


def _cut_header(path):
    np.save(path, uniform(30, 0))
    path.write_bytes(path.read_bytes()[:40])
    return "not a valid .npy file (unreadable header", "np.save"


def _empty(path):
    path.write_bytes(b"")
    return "not a valid .npy file (the file is empty)", "np.save"


def _pickled_objects(path):
    np.save(path, np.array([[0.0, "a"], ["a", None]], dtype=object), allow_pickle=True)
    return "holds Python objects", "save a numeric array with np.save"


def _not_square(path):
    np.save(path, np.zeros((3, 4)))
    return "the weight matrix must be square (n, n)", "got shape (3, 4)"


def _complex(path):
    np.save(path, np.zeros((3, 3), dtype=complex))
    return "holds dtype complex128; the weights must be real numbers", "astype(np.float64)"


@pytest.mark.parametrize("make", [_truncated, _truncated_condensed, _random_bytes, _cut_header, _empty, _pickled_objects,
                                  _not_square, _complex])
def test_corrupt_npy_is_reported_as_such(tmp_path, capsys, no_computing, make):
    path = tmp_path / "bad.npy"
    problem, fix = make(path)
    line = main_error(capsys, "run", path, *BUDGET)
    assert line.startswith(f"fastpamst: error: {path}: {problem}"), line
    assert fix in line, line
    assert "allow_pickle" not in line  # never numpy's advice to unpickle the file


def test_corrupt_npz_is_reported_as_such(tmp_path, capsys, no_computing):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"PK" + bytes(100))  # np.load would take it for a pickle
    line = main_error(capsys, "run", path, *BUDGET)
    assert f"{path}: not a valid .npz file (not a zip archive)" in line and "save_npz" in line
    np.savez(path, data=np.array([1, None], dtype=object), indices=np.array([0, 1]),
             indptr=np.array([0, 1, 2]), shape=np.array([2, 2]), format=np.array("csr"))
    line = main_error(capsys, "run", path, *BUDGET)
    assert "holds Python objects" in line and "allow_pickle" not in line


def test_bounds_clip_and_name_the_flag(tmp_path, capsys):
    # issue 25 item 4: the key-limit refusal names --bounds; with it the release runs
    W = uniform(10, 4)
    W[0, 5] = W[5, 0] = 2.0 ** 62
    path = tmp_path / "far.npy"
    np.save(path, W)
    args = ("run", path, "--rho", 1, "--sensitivity", 512, "--noise", "exponential", "--discretization", 1,
            "--seed", 0)
    code, _, err = main_run(capsys, *args)
    assert code == 2 and "--bounds LO HI" in err and "public range" in err
    code, out, err = main_run(capsys, *args, "--bounds", 0, 2.0 ** 61)
    assert code == 0, err
    assert len(read_edges(out)) == 9
    code, _, err = main_run(capsys, "run", path, "--rho", 1, "--sensitivity", 512, "--algorithm", "pamst",
                            "--bounds", 0, 1)
    assert code == 2 and "--bounds" in err


# --- fastpamst plan

def test_plan_from_n_prints_the_library_table(capsys):
    code, out, err = main_run(capsys, "plan", "--n", 2000, "--sensitivity", 1e-5, "--rho", 0.01, 0.1, 1)
    assert code == 0 and err == ""
    assert out.strip() == repr(fp.plan(2000, sensitivity=1e-5, rho=[0.01, 0.1, 1]))


def test_plan_on_a_stand_in(matrix, capsys):
    path, W = matrix
    code, out, _ = main_run(capsys, "plan", path, "--sensitivity", 1e-3, "--rho", 1, "--seed", 4,
                            "--target", 1.0, "--noise", "exponential")
    assert code == 0
    lib = fp.plan(W, sensitivity=1e-3, rho=1.0, rng=4, target=1.0, noise="exponential")
    assert out.strip() == repr(lib)
    assert "random spanning tree" in out and "smallest rho" in out


@pytest.mark.parametrize("args, expected", [
    (["--sensitivity", "1"], "give either --n N"),
    (["--n", "10", "STAND_IN", "--sensitivity", "1"], "not both"),
    (["--n", "10", "--sensitivity", "1", "--epsilon", "1"], "--epsilon needs --delta"),
    (["--n", "10", "--sensitivity", "1", "--rho", "1", "--epsilon", "1", "--delta", "1e-6"], "not both"),
    (["--n", "10", "--sensitivity", "0"], "sensitivity must be a finite positive number"),
    (["--n", "10"], "--sensitivity"),
])
def test_plan_errors(matrix, capsys, args, expected):
    args = [matrix[0] if a == "STAND_IN" else a for a in args]
    assert expected in main_error(capsys, "plan", *args)


# --- cold start: "compiling (first run only)" and --timing (issue 24, item 5)

def _fresh_kernel():
    """A tiny kernel that numba has never compiled, counted as the package's own."""
    from numba import njit

    scope = {"__name__": "fastpamst_nb._probe"}
    exec("def probe(x):\n    return x + 1\n", scope)
    return njit(scope["probe"])  # no cache: compiled on every first call in a process


def test_compile_watch_sees_only_real_compilations():
    from fastpamst_nb.core import CompileWatch

    probe, said = _fresh_kernel(), []
    with CompileWatch(lambda: said.append(1)) as watch:
        probe(1.0)
        probe(2.0)  # same types: no second compilation
    assert watch.compiled and said == [1] and watch.seconds > 0
    with CompileWatch(lambda: said.append(2)) as watch:
        probe(3.0)
        fp.exact_mst(uniform(5, 0))  # compiled (or loaded from the cache) earlier
    assert not watch.compiled and said == [1] and watch.seconds == 0.0


def test_run_says_compiling_only_when_it_compiles(matrix, capsys, monkeypatch):
    path, _ = matrix
    warm_up = fp_cli._warm_up
    probe = _fresh_kernel()

    def compiling_warm_up(*args, **kwargs):
        probe(1.0)
        return warm_up(*args, **kwargs)

    code, out, err = main_run(capsys, "run", path, *BUDGET, "--seed", 0)
    assert code == 0 and "compiling" not in err  # everything is compiled or cached by now
    monkeypatch.setattr(fp_cli, "_warm_up", compiling_warm_up)
    code, out2, err = main_run(capsys, "run", path, *BUDGET, "--seed", 0)
    assert code == 0 and out2 == out
    assert err.startswith("fastpamst: compiling (first run only"), err
    assert "timing" not in err  # times only with --timing


def test_timing_is_asked_for_and_labelled_not_private(matrix, capsys):
    path, _ = matrix
    code, out, err = main_run(capsys, "run", path, *BUDGET, "--seed", 0, "--timing")
    assert code == 0
    line = [x for x in err.splitlines() if "timing" in x]
    assert len(line) == 1 and "NOT private" in line[0], err
    assert "wall time" in line[0] and "numba compilation" in line[0], err


# --- inputs: a condensed .npy and a CSV matrix (issue 24, item 6)

def test_run_reads_a_condensed_npy_and_a_csv_matrix(matrix, tmp_path, capsys):
    from scipy.spatial.distance import squareform

    path, W = matrix
    code, ref, _ = main_run(capsys, "run", path, *BUDGET, "--seed", 0)
    assert code == 0
    np.save(tmp_path / "c.npy", squareform(W, checks=False))
    names = [f"v{i}" for i in range(N_IN)]
    plain = "\n".join(",".join(repr(x) for x in row) for row in W.tolist())
    with_names = ",".join(["", *names]) + "\n" + "\n".join(
        ",".join([name, *map(repr, row)]) for name, row in zip(names, W.tolist()))
    header_only = ",".join(names) + "\n" + plain
    for i, text in enumerate([plain, with_names, header_only]):
        (tmp_path / f"m{i}.csv").write_text(text + "\n")
    for f in ["c.npy", "m0.csv", "m1.csv", "m2.csv"]:
        code, out, err = main_run(capsys, "run", tmp_path / f, *BUDGET, "--seed", 0)
        assert code == 0 and out == ref, (f, err)


def test_bad_condensed_and_csv_inputs_are_one_line(tmp_path, capsys, no_computing):
    np.save(tmp_path / "v.npy", np.zeros(4))
    line = main_error(capsys, "run", tmp_path / "v.npy", *BUDGET)
    assert "not a condensed distance vector" in line and "pdist" in line
    (tmp_path / "r.csv").write_text("0,1\n1,0,2\n")
    line = main_error(capsys, "run", tmp_path / "r.csv", *BUDGET)
    assert "cannot read it as a CSV matrix" in line
    (tmp_path / "s.csv").write_text("0,1,2\n1,0,2\n")
    line = main_error(capsys, "run", tmp_path / "s.csv", *BUDGET)
    assert "must be square" in line
    (tmp_path / "e.csv").write_text("")
    assert "empty" in main_error(capsys, "run", tmp_path / "e.csv", *BUDGET)


def test_a_float32_matrix_too_large_to_widen_is_not_warmed_up(tmp_path, capsys, monkeypatch):
    from fastpamst_nb import graph

    # a 12 x 12 float32 matrix counts as large here: its release runs float32 kernels,
    # which a widened tiny matrix would not compile, so the warm-up skips it
    monkeypatch.setattr(graph, "_WIDEN_FLOAT32_MAX_ENTRIES", 100)
    W = uniform(12, 3).astype(np.float32)
    np.save(tmp_path / "w.npy", W)
    released = []
    release = fp_cli._release
    monkeypatch.setattr(fp_cli, "_release", lambda *a, **k: released.append(a[1].shape) or release(*a, **k))
    code, out, err = main_run(capsys, "run", tmp_path / "w.npy", *BUDGET, "--seed", 0, "--timing")
    assert code == 0 and released == [(12, 12)], err  # the real release only
    assert len(read_edges(out)) == 11 and "NOT private" in err


# --- --metric: points X (n, d)

@pytest.fixture
def points_file(tmp_path):
    X = np.random.default_rng(3).random((N_IN, 5))
    np.save(tmp_path / "x.npy", X)
    return str(tmp_path / "x.npy"), X


@pytest.mark.parametrize("algorithm, noise", [("fast_pamst", "gumbel"), ("fast_pamst", "exponential"),
                                              ("post_processing", None), ("exact", None)])
def test_run_points_with_metric_is_what_the_library_releases(points_file, capsys, algorithm, noise):
    path, X = points_file
    args = ["run", path, "--metric", "cityblock", "--algorithm", algorithm]
    if algorithm != "exact":
        args += ["--rho", "0.5", "--sensitivity", "0.1", "--seed", "4"]
    if noise:
        args += ["--noise", noise]
    assert fp_cli.main(args) == 0
    out, err = capsys.readouterr()
    kw = {"rho": 0.5, "sensitivity": 0.1, "rng": np.random.default_rng(4), "metric": "cityblock"}
    if algorithm == "exact":
        tree = fp.exact_mst(X, metric="cityblock")
    elif algorithm == "post_processing":
        tree = fp.post_processing(X, **kw)
    else:
        tree = fp.fast_pamst(X, noise=noise, **kw)
    assert read_edges(out) == [tuple(e) for e in tree.edges.tolist()]
    assert "metric = cityblock" in err and f"n = {N_IN}" in err


def test_run_points_minkowski_p(points_file, capsys):
    path, X = points_file
    assert fp_cli.main(["run", path, "--metric", "minkowski", "--p", "3", "--algorithm", "exact"]) == 0
    out, err = capsys.readouterr()
    assert read_edges(out) == [tuple(e) for e in fp.exact_mst(X, metric="minkowski", p=3).edges.tolist()]
    assert "p = 3" in err


@pytest.mark.parametrize("args, expected", [
    (["--p", "2"], "--p is the exponent of --metric minkowski"),
    (["--metric", "minkowski"], "needs --p"),
    (["--metric", "minkowski", "--p", "0.5"], "p >= 1"),
    (["--metric", "euclidean", "--symmetric", "upper"], "drop --symmetric"),
    (["--metric", "manhattan"], "invalid choice"),
])
def test_run_points_errors_without_data(points_file, capsys, no_reading, args, expected):
    path, _ = points_file
    assert fp_cli.main(["run", path, "--algorithm", "exact", *args]) == 2
    assert expected in capsys.readouterr().err


def test_run_points_errors_from_the_header(tmp_path, capsys, no_computing):
    np.save(tmp_path / "x3.npy", np.zeros((6, 3)))
    np.save(tmp_path / "x1.npy", np.zeros(6))
    sp.save_npz(tmp_path / "s.npz", sp.csr_matrix(np.eye(3)))
    cases = [(["x3.npy", "--metric", "haversine"], "d = 2 columns"),
             (["x1.npy", "--metric", "euclidean"], "shape (n, d)"),
             (["s.npz", "--metric", "euclidean"], "from a .npy file")]
    for args, expected in cases:
        assert fp_cli.main(["run", str(tmp_path / args[0]), *args[1:], "--algorithm", "exact"]) == 2
        assert expected in capsys.readouterr().err


def test_points_warm_up_compiles_what_the_run_calls(tmp_path):
    np.save(tmp_path / "x.npy", np.random.default_rng(0).random((300, 4)).astype(np.float32))
    M = fp_cli._load_weights(str(tmp_path / "x.npy"), "euclidean")
    assert not M.flags.writeable
    fp_cli._warm_up(["fast_pamst_gumbel"], like=M, noise="gumbel", metric="euclidean")
    before = _signatures()
    fp.fast_pamst(M, 0.1, 1e-3, rng=0, noise="gumbel", metric="euclidean")
    assert _signatures() == before, _signatures() - before


def test_run_points_in_a_subprocess(points_file):
    path, X = points_file
    res = cli(MODULE, "run", path, "--metric", "euclidean", "--algorithm", "fast_pamst_gumbel",
              "--rho", "1", "--sensitivity", "0.05", "--seed", "2")
    assert res.returncode == 0, res.stderr
    tree = fp.fast_pamst(X, 1.0, 0.05, rng=np.random.default_rng(2), metric="euclidean", noise="gumbel")
    assert read_edges(res.stdout) == [tuple(e) for e in tree.edges.tolist()]
