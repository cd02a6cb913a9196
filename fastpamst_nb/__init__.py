"""fastpamst_nb: fast private minimum spanning trees under rho-zCDP (Numba).

>>> import numpy as np, fastpamst_nb as fp
>>> W = np.random.default_rng(0).random((100, 100)); W = (W + W.T) / 2
>>> tree = fp.fast_pamst(W, rho=0.1, sensitivity=1e-5, rng=0)  # a fixed seed only to be reproducible

Only ``tree.edges`` is private; ``tree.weight`` is the true weight, for evaluation.
``tree.save(path)`` and ``tree.to_csv(path)`` write only the private release by default.
Real releases use ``rng=None`` (fresh entropy): one seed reused correlates releases.
"""

from . import privacy
from .api import exact_mst, excess_weight, fast_pamst, pamst, post_processing
from .chow_liu import chow_liu, mi_sensitivity, mutual_information
from .clustering import adjusted_rand_index, linkage_matrix, private_edge_weights, single_linkage
from .metrics import point_sensitivity
from .plan import Plan, plan
from .privacy import approx_dp_to_zcdp, zcdp_to_approx_dp
from .sensitivity import (centroid_distance_sensitivity, clipped_correlation, clipped_covariance,
                          correlation_sensitivity, count_sensitivity, covariance_sensitivity)
from .tree import SpanningTree

__version__ = "0.1.0"

# help() and tracebacks name the public home of the API, not its internal module
for _obj in (exact_mst, excess_weight, fast_pamst, pamst, post_processing, chow_liu,
             mi_sensitivity, mutual_information, private_edge_weights, single_linkage,
             approx_dp_to_zcdp, zcdp_to_approx_dp, SpanningTree, plan, Plan, adjusted_rand_index,
             linkage_matrix, point_sensitivity,
             centroid_distance_sensitivity, clipped_correlation, clipped_covariance,
             correlation_sensitivity, count_sensitivity, covariance_sensitivity):
    _obj.__module__ = __name__
del _obj

# help() shows the docstrings with their Sphinx roles as plain text (the HTML docs keep
# the links: docs/conf.py hands autodoc the originals); see _docstrings.py
import sys as _sys  # noqa: E402

from ._docstrings import plain_docstrings as _plain_docstrings  # noqa: E402

_plain_docstrings([_m for _name, _m in list(_sys.modules.items())
                   if _name == __name__ or _name.startswith(__name__ + ".")])
del _sys, _plain_docstrings

__all__ = [
    "Plan",
    "SpanningTree",
    "adjusted_rand_index",
    "approx_dp_to_zcdp",
    "centroid_distance_sensitivity",
    "chow_liu",
    "clipped_correlation",
    "clipped_covariance",
    "correlation_sensitivity",
    "count_sensitivity",
    "covariance_sensitivity",
    "exact_mst",
    "excess_weight",
    "fast_pamst",
    "linkage_matrix",
    "mi_sensitivity",
    "mutual_information",
    "pamst",
    "plan",
    "point_sensitivity",
    "post_processing",
    "privacy",
    "private_edge_weights",
    "single_linkage",
    "zcdp_to_approx_dp",
]
