import os
import sys

import pytest

# tests import the slow references as `import naive`
sys.path.insert(0, os.path.dirname(__file__))

# The suite tests the INSTALLED package (the wheel `pip install ".[test]"` built, or an
# editable install), never the source tree by accident: `python -m pytest` run from the
# checkout puts the checkout first on sys.path, where `import fastpamst_nb` would find the
# sources and miss packaging mistakes (a module or data file left out of the wheel). So
# the checkout leaves sys.path before the package is imported, and the Python
# subprocesses the tests start (CLI, notebooks, README) get PYTHONSAFEPATH=1 (Python
# 3.11+), which keeps their working directory off sys.path too.
# test_packaging.py checks which copy was imported.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != ROOT]
os.environ["PYTHONSAFEPATH"] = "1"
try:
    import fastpamst_nb  # noqa: E402,F401  (pinned now: later sys.path changes cannot swap it)
except ImportError as exc:
    raise ImportError(f"fastpamst_nb is not installed in this environment ({exc}); the tests run "
                      "against the installed package: python -m pip install \".[test]\"") from None

# The nojit lane: tests fast enough to pass with NUMBA_DISABLE_JIT=1, where every kernel
# runs as plain Python (so coverage sees its lines). They run in the normal suite too;
#     NUMBA_DISABLE_JIT=1 python -m pytest -m nojit tests/
# runs the lane alone. Per file, the node-id substrings left out of it (too slow as Python).
NOJIT_LANE = {
    "test_options.py": (),
    "test_philox.py": (),
    "test_gumbel.py": ("chi_square", "table_path", "threads", "offset_keeps", "topology_and_max"),
    "test_exact.py": (),
    "test_topology.py": (),
    "test_validation.py": (),
    "test_privacy.py": (),
    "test_naive.py": (),
    "test_clustering.py": (),
    "test_chow_liu.py": (),
    "test_sensitivity.py": (),
    "test_inputs.py": ("test_integer_conversion_is_exact_and_checked_in_blocks",),
    "test_queue.py": ("[layered]",),
    "test_sampler.py": ("test_one_selection_matches_brute_force_rnm[1.0-inf-",
                        "test_one_selection_matches_brute_force_rnm[0.0--1.0-"),
    "test_tree.py": ("test_repr[pamst]", "test_repr[pamst-gumbel]"),
    "test_baselines.py": ("_law",),
    "test_fast_pamst.py": ("matches_exact_rnm", "matches_softmax", "chi_square",
                           "test_non_default_discretization_on_dense_weights",
                           "whatever_the_validation_threads"),
    # the chi-squares, n > 2 * BLOCK and the subprocesses (threads, RSS) need compiled kernels
    "test_points.py": ("across_blocks", "_law", "one_to_four_threads", "allocates_no_matrix"),
    "test_hard_inputs.py": (
        # a Python kernel is interrupted inside its first step: the test needs a compiled one
        "test_ctrl_c_stops_a_long_release",
        "law_across_large_gaps", "test_neighbouring_inputs_release_laws",
        "test_wide_buckets_sized_by_the_validation_window",
        "test_maximum_tree_across_a_large_gap", "test_releases_run_in_chunks[pamst",
        "test_cli_run_on_a_metre_distance_matrix", "keys_near_2_53_and_a_non_dyadic_rate",
    ),
}


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "nojit: in the NUMBA_DISABLE_JIT=1 lane (kernels run as Python, for line coverage); "
        "select it with -m nojit",
    )


def pytest_collection_modifyitems(config, items):
    for item in items:
        skip = NOJIT_LANE.get(os.path.basename(str(item.fspath)))
        if skip is not None and not any(s in item.nodeid for s in skip):
            item.add_marker(pytest.mark.nojit)
