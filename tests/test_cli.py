"""End-to-end tests of the ``fastpamst`` command line, run as real subprocesses."""

import csv
import io
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

NAMES = ("exact_mst", "fast_pamst", "fast_pamst_gumbel", "post_processing", "pamst")
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


def assert_user_error(proc):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
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
    summary = proc.stderr.strip().splitlines()
    assert len(summary) == 1 and "seconds" in summary[0] and f"n = {N_DIST}" in summary[0]
    if algorithm == "exact":
        assert "NOT private" in summary[0]
    else:
        assert "rho = 0.1 zCDP" in summary[0] and "epsilon" in summary[0]


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
    proc = cli(MODULE, "bench", "--n", 200, 300, "--repeat", 1, "--json", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    for n in ("200", "300"):
        assert set(doc[n]) == set(NAMES) | {"numpy+scipy"}
        assert all(t > 0 for t in doc[n].values())
    assert math.isfinite(doc["fast_pamst_slope"])
    assert "numpy+scipy" in proc.stdout and "fast_pamst time ~ n^" in proc.stdout
