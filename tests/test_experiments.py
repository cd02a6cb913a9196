"""The experiments module (sweeps, summaries, figures) and the notebooks in quick mode."""

import concurrent.futures
import glob
import json
import math
import os
import sys

import numpy as np
import pytest

from fastpamst_nb import experiments as ex
from fastpamst_nb import privacy

NS = (30, 60)
SEEDS = (0, 1)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))


@pytest.fixture(scope="module")
def serial_rows():
    return ex.run_sweep(ex.ALGORITHMS, NS, SEEDS, progress=False)


def _key(row):
    return (row["algorithm"], row["n"], row["rho"], row["sensitivity"], row["seed"])


def test_serial_sweep_shape(serial_rows):
    assert len(serial_rows) == len(ex.ALGORITHMS) * len(NS) * len(SEEDS)
    for row in serial_rows:
        assert tuple(row) == ex.COLUMNS
    assert {r["algorithm"] for r in serial_rows} == set(ex.ALGORITHMS)
    assert sorted({r["n"] for r in serial_rows}) == list(NS)
    # deterministic order: algorithm, n, seed
    assert [_key(r) for r in serial_rows] == [(a, n, 0.1, 1e-5, s) for a in ex.ALGORITHMS for n in NS for s in SEEDS]


def test_serial_sweep_values(serial_rows):
    for row in serial_rows:
        assert row["excess"] >= -1e-9
        assert row["seconds"] >= 0.0
        assert 0.0 < row["weight"] < row["n"]
        if row["algorithm"] == "exact":
            assert row["excess"] == 0.0
        if row["algorithm"].startswith("fast_pamst"):
            assert math.isfinite(row["bound"]) and row["bound"] > 0
            assert row["excess"] <= row["bound"]
        else:
            assert math.isnan(row["bound"])
    # every algorithm on the same (n, seed) sees the same matrix: same optimum
    best = {(r["n"], r["seed"]): r["weight"] for r in serial_rows if r["algorithm"] == "exact"}
    for row in serial_rows:
        assert row["weight"] - row["excess"] == pytest.approx(best[row["n"], row["seed"]], abs=1e-9)


def test_same_seed_same_weights(serial_rows):
    again = ex.run_sweep(["fast_pamst", "post_processing_paper", "pamst"], NS, SEEDS, progress=False)
    before = {_key(r): r["weight"] for r in serial_rows}
    for row in again:
        assert row["weight"] == before[_key(row)]


def test_process_pool_matches_serial(serial_rows):
    with concurrent.futures.ProcessPoolExecutor(max_workers=2) as pool:
        rows = ex.run_sweep(ex.ALGORITHMS, NS, SEEDS, executor=pool, progress=False)
    assert [_key(r) for r in rows] == [_key(r) for r in serial_rows]
    assert [r["weight"] for r in rows] == [r["weight"] for r in serial_rows]
    assert [r["excess"] for r in rows] == [r["excess"] for r in serial_rows]


def test_sweeps_rho_and_sensitivity_and_max_n():
    rows = ex.run_sweep(["fast_pamst", "pamst"], [20, 40], [3], rho=[0.1, 1.0], sensitivity=[1e-5, 1e-3],
                        progress=True, max_n={"pamst": 20})
    assert len(rows) == (2 + 1) * 2 * 2
    assert {(r["rho"], r["sensitivity"]) for r in rows} == {(0.1, 1e-5), (0.1, 1e-3), (1.0, 1e-5), (1.0, 1e-3)}
    assert max(r["n"] for r in rows if r["algorithm"] == "pamst") == 20


def test_unknown_algorithm_is_rejected():
    with pytest.raises(ValueError, match="unknown algorithm"):
        ex.run_sweep(["fastpamst"], [10], [0], progress=False)


def test_progress_without_tqdm(monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # import fails: the bar is silently off
    rows = ex.run_sweep(["exact"], [10], [0], progress=True)
    assert len(rows) == 1


def test_utility_bound_formula():
    n, rho, d = 1000, 0.1, 1e-5
    lam = privacy.fast_pamst_rate(rho, d, n, d, "exponential")
    expected = (n - 1) * (d + math.log((n - 1) * (n * n // 4) * n) / lam)
    assert ex.utility_bound(n, rho, d, discretization=d) == pytest.approx(expected)
    # leading term at the paper's s = Delta: 4 (n-1) Delta sqrt((n-1)/(2 rho)) ln(...),
    # the paper's form with n - 1
    assert 1 / lam == pytest.approx(4 * d * math.sqrt((n - 1) / (2 * rho)))
    # the default step 2**-21: D_s = 21 * 2**-21, almost Delta, so about half the bound
    s = 2.0 ** -21
    lam = privacy.fast_pamst_rate(rho, d, n, s, "exponential")
    assert 1 / lam == pytest.approx(2 * 21 * s * math.sqrt((n - 1) / (2 * rho)))
    assert ex.utility_bound(n, rho, d) == pytest.approx(
        (n - 1) * (s + math.log((n - 1) * (n * n // 4) * n) / lam))
    # the sweeps run the paper's setting
    assert ex._bound("fast_pamst", n, rho, d) == pytest.approx(expected)
    assert ex.utility_bound(n, rho, d, noise="gumbel") < ex.utility_bound(n, rho, d)
    assert ex.utility_bound(1, rho, d) == 0.0


def test_post_processing_paper_uses_paper_sigma():
    W = ex.uniform_weights(50, 0)
    tree = ex.post_processing_paper(W, 0.1, 1e-5, rng=0)
    assert tree.info["sigma"] == privacy.paper_gaussian_sigma(0.1, 1e-5, 50)
    assert tree.weight == pytest.approx(W[tree.edges[:, 0], tree.edges[:, 1]].sum())
    assert len(tree.edges) == 49


def test_summarize_and_columns(serial_rows):
    summary = ex.summarize(serial_rows)
    assert len(summary) == len(ex.ALGORITHMS) * len(NS)
    for s in summary:
        assert s["runs"] == len(SEEDS)
        assert s["excess_min"] <= s["excess_median"] <= s["excess_max"]
        assert s["seconds_min"] <= s["seconds_median"] <= s["seconds_max"]
    cols = ex.rows_to_columns(serial_rows)
    assert set(cols) == set(ex.COLUMNS)
    assert all(len(v) == len(serial_rows) for v in cols.values())
    ns, med = ex.series(summary, "exact", "excess_median")
    assert list(ns) == list(NS) and np.all(med == 0)
    assert "fast_pamst" in ex.format_table(summary)


def test_to_dataframe(serial_rows):
    try:
        import pandas  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pandas"):
            ex.to_dataframe(serial_rows)
    else:
        df = ex.to_dataframe(serial_rows)
        assert list(df.columns) == list(ex.COLUMNS) and len(df) == len(serial_rows)


def test_plots_write_png(serial_rows, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for plot, name in ((ex.plot_figure1, "f1.png"), (ex.plot_figure2, "f2.png")):
        fig = plot(serial_rows, tmp_path / name)
        plt.close(fig)
        with open(tmp_path / name, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_save_readme_figures_quick(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    out = ex.save_readme_figures(tmp_path / "docs", quick=True)
    for key in ("figure1", "figure2"):
        assert os.path.getsize(out[key]) > 1000


def test_quick_mode(monkeypatch):
    monkeypatch.setenv(ex.QUICK_ENV, "1")
    assert ex.quick_mode()
    assert max(ex.figure_config(1)["ns"]) <= 200 and max(ex.figure_config(2)["ns"]) <= 200
    monkeypatch.setenv(ex.QUICK_ENV, "0")
    assert not ex.quick_mode()


def _kernel_spec_dir(tmp_path):
    """A 'python3' kernelspec running this very interpreter; JUPYTER_PATH puts it first."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    return str(tmp_path / "jupyter")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[os.path.basename(p) for p in NOTEBOOKS])
def test_notebooks_execute_in_quick_mode(path, tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("FASTPAMST_QUICK", "1")
    monkeypatch.setenv("JUPYTER_PATH", _kernel_spec_dir(tmp_path))
    nb = nbformat.read(path, as_version=4)
    # run from the notebooks' folder, as Jupyter does (03 reads data/alarm_sample.npz); the
    # notebooks write no files
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                                     resources={"metadata": {"path": os.path.dirname(path)}})
    client.execute()  # raises CellExecutionError on any error
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors


def test_there_are_notebooks():
    names = {os.path.basename(p) for p in NOTEBOOKS}
    assert {"01-quickstart.ipynb", "02-paper-experiments.ipynb"} <= names
