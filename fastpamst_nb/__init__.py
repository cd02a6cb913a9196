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
from .clustering import linkage_matrix, private_edge_weights, single_linkage
from .metrics import point_sensitivity
from .privacy import approx_dp_to_zcdp, zcdp_to_approx_dp
from .tree import SpanningTree

__version__ = "0.1.0"

# help() and tracebacks name the public home of the API, not its internal module
for _obj in (exact_mst, excess_weight, fast_pamst, pamst, post_processing, chow_liu,
             mi_sensitivity, mutual_information, private_edge_weights, single_linkage,
             linkage_matrix, point_sensitivity,
             approx_dp_to_zcdp, zcdp_to_approx_dp, SpanningTree):
    _obj.__module__ = __name__
del _obj

__all__ = [
    "SpanningTree",
    "approx_dp_to_zcdp",
    "chow_liu",
    "exact_mst",
    "excess_weight",
    "fast_pamst",
    "linkage_matrix",
    "mi_sensitivity",
    "mutual_information",
    "pamst",
    "point_sensitivity",
    "post_processing",
    "privacy",
    "private_edge_weights",
    "single_linkage",
    "zcdp_to_approx_dp",
]
