"""Know before you spend: what a private spanning tree will cost in excess weight.

:func:`plan` answers, from public parameters only (n, m, rho, the sensitivity),
how much selection noise each Prim step adds and a bound on the excess weight
that holds with probability at least 0.95; given a public stand-in matrix (last
year's data, a simulation, public data of the same kind) it also runs a few
releases on it and compares them with a uniformly random spanning tree, the
"learned nothing" line. The bounds and their derivation are in the docstrings
of ``excess_bound`` and in docs/design.rst (:ref:`design-plan`).
"""

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import gammainc, gammaln

from . import privacy
from .api import _exact_edges
from .core import as_generator, check_positive
from .fast_release import _graph_release
from .graph import as_graph
from .pipeline import _edge_weights, _sign
from .random_tree import random_spanning_tree

__all__ = ["Plan", "excess_bound", "noise_scale", "plan"]

CONFIDENCE = 0.95  # the bounds hold with at least this probability
DEFAULT_RHOS = (0.01, 0.1, 1.0, 10.0)
# Chernoff parameters tried: any fixed t gives a valid bound, the grid only picks a good one
_T = np.concatenate([np.geomspace(1e-4, 0.5, 200), 1.0 - np.geomspace(0.5, 1e-6, 200)])


def _chernoff(k, log_mgf, failure):
    """Smallest x on the grid with exp(k log_mgf(t) - t x) <= failure: P(sum of k > x) <= failure.

    ``log_mgf(t)``: an upper bound on the conditional log moment generating function
    of each of the k summands given the past (so adapted sums are covered too).
    """
    t = _T
    with np.errstate(over="ignore", invalid="ignore"):
        x = (k * log_mgf(t) + math.log(1.0 / failure)) / t
    return float(np.nanmin(x))


def _max_exp_log_mgf(c):
    # the largest of c i.i.d. Exp(1): E exp(tY) = Gamma(c + 1) Gamma(1 - t) / Gamma(c + 1 - t), t < 1
    return lambda t: gammaln(c + 1.0) + gammaln(1.0 - t) - gammaln(c + 1.0 - t)


def _top_gumbel_sum(m, k, failure):
    """x with P(sum of the k largest of m i.i.d. standard Gumbels > x) <= failure.

    sum of the k largest <= k t0 + sum_e (G_e - t0)_+ for every t0, and
    E exp(u (G - t0)_+) = F(t0) + e^{-u t0} gamma(1 - u, e^{-t0}) with F the Gumbel
    CDF and gamma the lower incomplete gamma function (substitute y = e^{-g}).
    """
    best = math.inf
    u = _T
    for t0 in math.log(m / k) + np.linspace(-2.0, 4.0, 61):
        y = math.exp(-t0)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            mgf = np.exp(-y) + np.exp(-u * t0 + gammaln(1.0 - u)) * gammainc(1.0 - u, y)
            x = (m * np.log(mgf) + math.log(1.0 / failure)) / u
        best = min(best, k * t0 + float(np.nanmin(x)))
    return best


def _cut_size(n, m):
    # a cut of a graph with n vertices and m edges crosses at most min(m, floor(n^2 / 4)) edges
    return max(1, min(m, (n * n) // 4))


def _noise_units(n, m, noise, failure):
    """The bound on the excess in units of 1/lam (the rounding term excluded)."""
    k = n - 1
    c = _cut_size(n, m)
    if noise == "exponential":
        return _chernoff(k, _max_exp_log_mgf(c), failure)
    # the exact MST of the per-edge noised weights (the gumbel engine): G(T') <= the k
    # largest of m Gumbels, G(T*) a sum of k i.i.d. standard Gumbels on the fixed edges of T*
    return (_top_gumbel_sum(max(m, k), k, failure / 2)
            + _chernoff(k, lambda t: gammaln(1.0 + t), failure / 2))


def _rate(rho, sensitivity, n, noise):
    """The engine's rate and discretization step: D_s at the default step for the
    exponential noise, the raw sensitivity (no step) for gumbel."""
    if noise == "gumbel":
        return privacy.gumbel_rate(rho, sensitivity, n), 0.0
    s = privacy.default_discretization(sensitivity)
    return privacy.fast_pamst_rate(rho, sensitivity, n, s, noise), s


def noise_scale(n, rho, sensitivity, noise="gumbel"):
    """The selection noise of one Prim step, 1 / lam, in the weights' units.

    Parameters
    ----------
    n : int
        Number of vertices (n - 1 selections share rho).
    rho : float
        zCDP budget (> 0).
    sensitivity : float
        l_inf sensitivity Delta of each weight (weights' units).
    noise : {"gumbel", "exponential"}

    Returns
    -------
    float
        1 / lam with lam = sqrt(8 rho / (n-1)) / (2 D_s) (gumbel) or
        sqrt(2 rho / (n-1)) / (2 D_s) (exponential), D_s <= (17/16) Delta the
        sensitivity of the discretized score at the default step; 0.0 for n < 2.
        Weight gaps much smaller than this are invisible to a release.
    """
    privacy.check_noise(noise)
    lam, _ = _rate(check_positive("rho", rho), check_positive("sensitivity", sensitivity), int(n), noise)
    return 0.0 if math.isinf(lam) else 1.0 / lam


def excess_bound(n, rho, sensitivity, noise="gumbel", *, m=None, confidence=CONFIDENCE):
    """A bound on a release's excess weight that holds with probability >= ``confidence``.

    Parameters
    ----------
    n : int
        Number of vertices.
    rho : float
        zCDP budget (> 0).
    sensitivity : float
        l_inf sensitivity Delta of each weight (weights' units).
    noise : {"gumbel", "exponential"}
        The ``noise`` of :func:`fastpamst_nb.fast_pamst` / :func:`fastpamst_nb.pamst`.
    m : int, optional
        Number of edges of the public topology; default the complete graph's n(n-1)/2.
    confidence : float, default 0.95
        1 - beta, the probability the bound holds (over the release's noise).

    Returns
    -------
    float
        B with P(w(T) - w(T*) <= B) >= confidence (for a maximum spanning tree
        w(T*) - w(T) <= B), in the weights' units; 0.0 for n < 2. From public
        parameters only: never the weights.

    Notes
    -----
    k = n - 1 selections, C = min(m, floor(n^2/4)) the largest cut, s the default
    step of the exponential noise (:func:`fastpamst_nb.privacy.default_discretization`;
    its rate uses D_s in place of Delta), lam the rate of the noise planned,
    beta = 1 - confidence.
    Every Prim step selects e_i from the cut where the lightest edge is f_i.

    * Pinot's lemma: the lightest cut edges of Prim's nested cuts can be matched
      to distinct edges of any MST T* crossing them (Hall's condition: k cuts
      split V into k + 1 layers that T* connects with >= k edges), so
      w(T) - w(T*) <= sum_i (w(e_i) - w(f_i)).
    * Exponential noise (report-noisy-max on scores s floor(-w/s), which lie in
      (-w - s, -w]): w(e_i) - w(f_i) < s + X_i / lam, X_i the largest of at most
      C i.i.d. Exp(1), whose moment generating function is
      Gamma(C+1) Gamma(1-t) / Gamma(C+1-t). A Chernoff bound on the sum of the k
      step maxima (fresh noise each step, so conditional MGFs multiply) gives
      B = k s + x / lam with exp(k log MGF(t) - t x) = beta.
    * Gumbel noise (the exponential mechanism, rate lam = sqrt(8 rho / k) / (2 Delta),
      no discretization): one Gumbel per edge and the exact MST T' of the noised
      weights. As T' minimises w - G/lam, w(T') - w(T*) <= (G(T') - G(T*)) / lam.
      G(T') is at most the sum of the k largest of m Gumbels, itself at most
      k t0 + sum_e (G_e - t0)_+ (Chernoff over the m edges, t0 on a grid); G(T*)
      is a sum of k i.i.d. Gumbels on the fixed edges of T* (lower tail). Each at
      beta / 2.

    The bound grows like n^1.5 Delta ln(n) / sqrt(rho): the paper's rate. It is
    a worst case over the weights; releases on weights with many near-ties (or
    on few distinct values) come close to it, spread-out weights stay far below.
    """
    privacy.check_noise(noise)
    rho = check_positive("rho", rho)
    sensitivity = check_positive("sensitivity", sensitivity)
    n = int(n)
    if n < 2:
        return 0.0
    m = n * (n - 1) // 2 if m is None else int(m)
    lam, s = _rate(rho, sensitivity, n, noise)
    return (n - 1) * s + _noise_units(n, m, noise, 1.0 - confidence) / lam


@dataclass(frozen=True, repr=False, eq=False)
class Plan:
    """What :func:`plan` returns: a table aligned with ``rho``.

    Attributes
    ----------
    n, m : int
        Vertices and edges of the (public) topology.
    sensitivity : float
    noise : str
    maximum : bool
    rho : ndarray (k,)
        The zCDP budgets planned (converted from epsilon/delta when given so).
    noise_scale : ndarray (k,)
        1 / lam, the selection noise of one step, in the weights' units.
    excess_bound : ndarray (k,)
        The excess weight bound holding with probability >= 0.95.
    simulated_excess : ndarray (k,) or None
        Median excess of releases on the stand-in (None without a stand-in).
    random_tree_excess : float or None
        Median excess of uniformly random spanning trees of the stand-in.
    mst_weight : float or None
        The stand-in's exact MST weight (a public stand-in's: for scale).
    target, target_rho : float or None
        The target excess and the smallest rho meeting it (inf if none does).
    releases : int
        Releases (and random trees) per median.
    """

    n: int
    m: int
    sensitivity: float
    noise: str
    maximum: bool
    rho: np.ndarray
    noise_scale: np.ndarray
    excess_bound: np.ndarray
    simulated_excess: np.ndarray | None = None
    random_tree_excess: float | None = None
    mst_weight: float | None = None
    target: float | None = None
    target_rho: float | None = None
    releases: int = 0

    def _rows(self):
        head = ["rho", "noise_scale", "excess_bound (95%)"]
        if self.simulated_excess is not None:
            head += ["simulated_excess", "vs random tree"]
        rows = [head]
        for i, r in enumerate(self.rho):
            row = [f"{r:.4g}", f"{self.noise_scale[i]:.4g}", f"{self.excess_bound[i]:.4g}"]
            if self.simulated_excess is not None:
                rt = self.random_tree_excess
                ratio = self.simulated_excess[i] / rt if rt else math.nan
                row += [f"{self.simulated_excess[i]:.4g}", f"{100 * ratio:.3g}%"]
            rows.append(row)
        return rows

    def _lines(self):
        kind = "complete graph" if self.m == self.n * (self.n - 1) // 2 else "topology"
        tree = "maximum" if self.maximum else "minimum"
        out = [f"plan: n = {self.n}, m = {self.m} ({kind}), sensitivity = {self.sensitivity:g}, "
               f"noise = {self.noise}, {tree} spanning tree"]
        notes = []
        if self.random_tree_excess is not None:
            notes.append(f"stand-in: exact tree weight {self.mst_weight:.4g}; a uniformly random spanning "
                         f"tree's excess {self.random_tree_excess:.4g} (learned nothing); medians of "
                         f"{self.releases}")
        if self.target is not None:
            notes.append(f"target excess {self.target:g}: smallest rho = {self.target_rho:.4g}"
                         + (" (simulated on the stand-in)" if self.simulated_excess is not None
                            else " (by the bound)"))
        return out, notes

    def __repr__(self):
        from .bench import align_table

        head, notes = self._lines()
        return "\n".join([*head, align_table(self._rows()), *notes])

    def _repr_html_(self):
        import html

        head, notes = self._lines()
        rows = self._rows()
        th = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
        paras = "".join(f"<p>{html.escape(t)}</p>" for t in [*head, *notes] if t)
        return f"<div>{paras}<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table></div>"

    def plot(self, ax=None):
        """Excess weight against rho (log-log): the bound, the simulated median, the random tree.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Drawn into a new figure when None.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        ImportError
            Without matplotlib (``pip install matplotlib``).
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError("Plan.plot needs matplotlib: python -m pip install matplotlib") from None
        if ax is None:
            _, ax = plt.subplots(figsize=(6, 4))
        ax.plot(self.rho, self.excess_bound, "k--", label="bound (95%)")
        if self.simulated_excess is not None:
            ax.plot(self.rho, self.simulated_excess, "o-", label=f"simulated (median of {self.releases})")
        if self.random_tree_excess is not None:
            ax.axhline(self.random_tree_excess, color="0.5", linestyle=":", label="random spanning tree")
        if self.target is not None:
            ax.axhline(self.target, color="C3", linewidth=0.8, label="target")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rho (zCDP)")
        ax.set_ylabel("excess weight")
        ax.set_title(f"n = {self.n}, sensitivity = {self.sensitivity:g}, noise = {self.noise}", fontsize=10)
        ax.legend(fontsize=8)
        return ax


def _edge_count(topology, n):
    """Edges of a public topology given beside an int n (its true / stored non-zero entries)."""
    import scipy.sparse as sp

    if sp.issparse(topology):
        t = sp.coo_matrix(topology)
        keep = (t.row != t.col) & (t.data != 0)
        rows, cols = t.row[keep], t.col[keep]
    else:
        t = np.asarray(topology)
        if t.dtype != np.bool_:
            raise TypeError(f"topology must be a boolean mask or a scipy.sparse pattern, got dtype {t.dtype}")
        rows, cols = np.nonzero(t)
        keep = rows != cols
        rows, cols = rows[keep], cols[keep]
    if t.shape != (n, n):
        raise ValueError(f"topology has shape {t.shape}, but n = {n}: give an (n, n) topology")
    pairs = np.unique(np.minimum(rows, cols).astype(np.int64) * n + np.maximum(rows, cols))
    if pairs.size < n - 1:
        raise ValueError(f"topology has {pairs.size} edges: a spanning tree of n = {n} vertices needs "
                         f"at least n - 1 = {n - 1}")
    return int(pairs.size)


def plan(n_or_weights, *, sensitivity, rho=None, epsilon=None, delta=None, noise="gumbel",
         target=None, rng=None, topology=None, n_releases=5, maximum=False):
    """Plan a release: the noise, a 95% bound on the excess, and (given a stand-in) a dry run.

    Parameters
    ----------
    n_or_weights : int, or weights (any form :func:`fastpamst_nb.fast_pamst` takes)
        The number of vertices, or a PUBLIC stand-in for the weights (last year's
        data, a simulation, public data of the same kind): never the private
        weights themselves, since nothing here is private.
    sensitivity : float
        l_inf sensitivity Delta of each weight (weights' units).
    rho : float or sequence of float, optional
        zCDP budgets to plan for. Default: (0.01, 0.1, 1, 10), or the target's rho.
    epsilon, delta : float (epsilon may be a sequence), optional
        An (epsilon, delta) budget in place of rho, converted as the releases do.
    noise : {"gumbel", "exponential"}, default "gumbel"
    target : float, optional
        An excess weight to reach: ``target_rho`` is the smallest rho whose bound
        (with a stand-in: whose simulated median excess) meets it, inf if none.
    rng : None, int, SeedSequence, BitGenerator or Generator
        Noise of the simulated releases and random trees (SPEC 7).
    topology : None, bool array_like (n, n) or scipy.sparse (n, n)
        The public edge set, as in :func:`fastpamst_nb.fast_pamst` (with an int n,
        only its edge count m is used).
    n_releases : int, default 5
        Releases (and random trees) per median, with a stand-in.
    maximum : bool, default False
        Plan a maximum spanning tree.

    Returns
    -------
    Plan
        ``rho``, ``noise_scale``, ``excess_bound`` (arrays aligned with rho);
        with a stand-in also ``simulated_excess``, ``random_tree_excess`` and
        ``mst_weight``; ``target_rho`` when a target is given. It prints as a
        table (and as HTML in Jupyter); ``.plot()`` draws excess against rho.

    Raises
    ------
    ValueError, TypeError
        Bad parameters (a non-positive sensitivity, rho, n_releases or target;
        both rho and epsilon; an unknown noise) or weights refused as by
        :func:`fastpamst_nb.fast_pamst`.

    Notes
    -----
    The bound is ``excess_bound`` of this module (its derivation is there and in
    the design notes): from n, m, rho and Delta only. A stand-in costs
    ``n_releases`` releases per rho, as many random trees and one exact MST,
    and with a target 16 to 24 more rounds of releases (a bisection on log rho
    with common random numbers).

    Examples
    --------
    >>> import fastpamst_nb as fp
    >>> p = fp.plan(2000, sensitivity=1e-5, rho=[0.01, 0.1, 1])
    >>> p.rho.tolist()
    [0.01, 0.1, 1.0]
    >>> bool(p.excess_bound[0] > p.excess_bound[2])
    True
    """
    privacy.check_noise(noise)
    sensitivity = check_positive("sensitivity", sensitivity)
    if isinstance(n_releases, (bool, np.bool_)) or not isinstance(n_releases, numbers.Integral) \
            or n_releases < 1:
        raise ValueError(f"n_releases must be a positive integer, got {n_releases!r}")
    if target is not None:
        target = check_positive("target", target)
    rhos = privacy.check_budgets(rho, epsilon, delta)
    if isinstance(n_or_weights, numbers.Integral) and not isinstance(n_or_weights, (bool, np.bool_)):
        n = int(n_or_weights)
        if n < 1:
            raise ValueError(f"n must be at least 1, got {n}")
        m = n * (n - 1) // 2 if topology is None else _edge_count(topology, n)
        graph = None
    else:
        graph = as_graph(n_or_weights, topology=topology)
        n, m = graph.n, graph.m
    gen = as_generator(rng)

    def bound(r):
        return excess_bound(n, r, sensitivity, noise, m=m)

    target_rho = None
    if target is not None:
        # the bound is k s + c / sqrt(rho) (lam grows like sqrt(rho); s = 0 for gumbel):
        # solved in closed form
        k_s = (n - 1) * _rate(1.0, sensitivity, n, noise)[1] if n > 1 else 0.0
        c = bound(1.0) - k_s
        rest = target - k_s
        target_rho = float((c / rest) ** 2) if rest > 0 and c > 0 else (0.0 if c == 0 else math.inf)
    sim = rt_excess = best = None
    if graph is not None:
        # the stand-in is validated once (above): the releases below run on its Graph
        best = _weight(graph, _exact_edges(graph, 0, _sign(maximum)))
        seed = np.random.SeedSequence(gen.integers(2**63, size=4))
        sgn = -1.0 if maximum else 1.0
        trees = [random_spanning_tree(graph, gen) for _ in range(n_releases)]
        rt_excess = float(np.median([sgn * (_weight(graph, e) - best) for e in trees])) if n > 1 else 0.0

        def simulate(r):
            # common random numbers: every rho sees the same seeds, so the medians are comparable
            g = np.random.default_rng(seed)
            out = [sgn * (_graph_release(graph, float(r), sensitivity, g, noise, maximum).weight - best)
                   for _ in range(n_releases)]
            return float(np.median(out))

        if target is not None:
            target_rho = _smallest_rho(simulate, target, target_rho)
        if rhos is None:
            rhos = np.array([target_rho]) if target is not None and math.isfinite(target_rho) \
                else np.array(DEFAULT_RHOS)
        sim = np.array([simulate(r) for r in rhos])
    elif rhos is None:
        rhos = np.array([target_rho]) if target is not None and math.isfinite(target_rho) and target_rho > 0 \
            else np.array(DEFAULT_RHOS)
    scale = np.array([noise_scale(n, r, sensitivity, noise) for r in rhos])
    bounds = np.array([bound(r) for r in rhos])
    return Plan(n=n, m=m, sensitivity=sensitivity, noise=noise, maximum=bool(maximum), rho=rhos,
                noise_scale=scale, excess_bound=bounds, simulated_excess=sim, random_tree_excess=rt_excess,
                mst_weight=best, target=target, target_rho=target_rho,
                releases=n_releases if graph is not None else 0)


def _weight(graph, edges):
    return float(_edge_weights(graph, edges).sum())


def _smallest_rho(simulate, target, rho_bound, steps=14):
    """Bisection on log rho for the smallest rho whose simulated excess meets the target.

    ``rho_bound``: the bound's answer, where the simulation almost surely meets it
    already; the search widens upwards if it does not.
    """
    hi = rho_bound if math.isfinite(rho_bound) and rho_bound > 0 else 1.0
    for _ in range(8):
        if simulate(hi) <= target:
            break
        hi *= 10.0
    else:
        return math.inf
    lo = hi * 1e-6
    if simulate(lo) <= target:
        return lo
    for _ in range(steps):
        mid = math.sqrt(lo * hi)
        if simulate(mid) <= target:
            hi = mid
        else:
            lo = mid
    return hi
