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


def read_tree(text):
    """Parse the CSV; return a list of (u, v, weight)."""
    reader = csv.reader(io.StringIO(text))
    assert next(reader) == ["u", "v", "weight"]
    return [(int(u), int(v), float(w)) for u, v, w in reader]


def assert_spanning_tree(rows, weight_of, n):
    """n - 1 edges that connect all n vertices (so no cycle), with the matrix's weights."""
    assert len(rows) == n - 1
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for u, v, w in rows:
        assert w == weight_of(u, v)  # the CSV keeps every digit
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
    assert_spanning_tree(read_tree(out.read_text()), lambda u, v: W[u, v], n)
    assert algorithm in proc.stderr and f"n = {n}" in proc.stderr


@pytest.mark.parametrize("cmd", ENTRY_POINTS)
def test_run_sparse_npz_to_stdout(tmp_path, cmd):
    n = 50
    A = sparse_connected(n, 2)
    sp.save_npz(tmp_path / "w.npz", A)
    proc = cli(cmd, "run", tmp_path / "w.npz", "--rho", 0.1, "--sensitivity", 1e-5, "--seed", 0)
    assert proc.returncode == 0, proc.stderr
    # A[u, v] is 0 for a non-edge, and every stored weight is >= 0.1, so this also checks the topology
    assert_spanning_tree(read_tree(proc.stdout), lambda u, v: A[u, v], n)


def test_run_exact_needs_no_budget_and_maximum(tmp_path):
    n = 30
    W = uniform(n, 4)
    np.save(tmp_path / "w.npy", W)
    lo = cli(MODULE, "run", tmp_path / "w.npy", "--algorithm", "exact")
    hi = cli(MODULE, "run", tmp_path / "w.npy", "--algorithm", "exact", "--maximum")
    assert lo.returncode == 0 and hi.returncode == 0, lo.stderr + hi.stderr
    rows_lo, rows_hi = read_tree(lo.stdout), read_tree(hi.stdout)
    for rows in (rows_lo, rows_hi):
        assert_spanning_tree(rows, lambda u, v: W[u, v], n)
    assert sum(w for *_, w in rows_hi) > sum(w for *_, w in rows_lo)


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
    assert_spanning_tree(read_tree(second.stdout), lambda u, v: W[u, v], n)


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


@pytest.mark.parametrize("make_args", [_asymmetric, _missing, _txt, _dense_npz, _no_budget])
def test_run_user_errors_are_one_line(tmp_path, make_args):
    assert_user_error(cli(MODULE, "run", *make_args(tmp_path)))


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
