"""The public method functions: one function per registered method.

Each is a thin, documented front for :func:`pysdcmicro.microaggregate` with its method
chosen by its registered name and that method's options as keyword-only parameters; the
algorithm modules hold the cores only. :func:`microaggregate_blocked` is the large-data
path's front. They sit above the facade: only the package's ``__init__``, the front ends
(command line, bridges) and, lazily, :mod:`pysdcmicro.large`'s public name import this module.

The registry's readers are re-exported here (``all_methods``, ``get_method``...): imported
from this module, they see every built-in method, whatever was imported before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._api import microaggregate
from ._context import Context
from ._errors import InvalidInputError
from ._registry import all_improvements, all_methods, get_improvement, get_method
from ._result import Solution
from .constructive import _vmdav
from .large._blocked import DEFAULT_REPAIR_PASSES

__all__ = ["mdav", "vmdav", "mu_approx", "mhm", "tsp_mhm", "compress_tsp_mhm", "icsm", "two_swap",
           "column_generation", "decomposition", "auto", "microaggregate_blocked", "all_methods",
           "all_improvements", "get_method", "get_improvement"]


def mdav(X, k, *, variables=None, scaling="standardize", improve=None, rng=None, time_limit=None,
         progress=None, missing="keep", missing_distance="imputed"):
    """Microaggregate with MDAV (fixed group size ``k``).

    The fixed-size Maximum Distance to Average Vector heuristic, with the groups of
    sdcMicro's ``microaggregation(method = "mdav")``, ties included (checked cell by cell,
    see the parity page of the docs).

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Records; never modified.
    k : int
        Minimum group size (>= 2, <= n). Every group has k records except the last one,
        which has k..2k-1.
    variables, scaling, improve, rng, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`. MDAV is deterministic: ``rng`` only
        matters for a randomized ``improve`` step.
    missing_distance : {"imputed", "sdcmicro"}, default "imputed"
        How records with missing cells are grouped (``missing="keep"``). ``"imputed"``:
        MDAV on z-scores where a missing cell is imputed by regression on the record's
        other columns (see ``missing`` in :func:`pysdcmicro.microaggregate`). ``"sdcmicro"``: the
        groups sdcMicro 5.8.1's ``microaggregation(method = "mdav")`` makes (rule found
        by black-box experiments, see :mod:`pysdcmicro.constructive._mdav_missing`):
        z-scores over the observed cells with the population sd, a cell missing in one
        record of a pair costs the column's squared range, missing in both costs 0, and a
        genuine ``-999`` counts as missing (sdcMicro's code for NA; warned once per
        column; its released value is the group mean of the other members, as sdcMicro).
        This mode standardizes the columns itself (whatever ``scaling`` says) and is
        MDAV's own grouping without missing cells.

    Returns
    -------
    MicroaggregationResult

    Notes
    -----
    Time O(n^2 d / k), memory O(n d). Ties, as sdcMicro breaks them: squared distances
    within 1e-9 of each other (relative) are equal; the farthest record is the lowest row
    among equals, and among equally near records the highest rows come first.

    References
    ----------
    J. Domingo-Ferrer, J. M. Mateo-Sanz, "Practical data-oriented microaggregation for
    statistical disclosure control", IEEE TKDE 14 (2002) 189-201.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import mdav
    >>> X = np.array([[1.0, 2.0], [1.1, 2.1], [0.9, 1.9], [5.0, 5.0], [5.2, 5.1], [4.9, 5.2]])
    >>> res = mdav(X, 3)
    >>> res.labels.tolist()
    [0, 0, 0, 1, 1, 1]
    >>> round(res.information_loss, 4)
    0.2746
    """
    return microaggregate(X, k, method="mdav", variables=variables, scaling=scaling, improve=improve,
                          rng=rng, time_limit=time_limit, progress=progress, missing=missing,
                          missing_distance=missing_distance)


def vmdav(X, k, *, gamma=_vmdav.DEFAULT_GAMMA, variables=None, scaling="standardize", improve=None, rng=None,
          time_limit=None, progress=None):
    """Microaggregate with V-MDAV (variable group size).

    Groups are built one at a time from the record farthest from the data centroid, as in
    MDAV, and then extended with nearby records while the next candidate is much closer to
    the group than to the other unassigned records (``d_in < gamma * d_out``), up to 2k-1.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Records; never modified.
    k : int
        Minimum group size (>= 2, <= n).
    gamma : float, default 0.5
        Extension parameter, >= 0. ``0`` never extends (fixed size k, plus left-overs);
        larger values extend more. Solanas and Martinez-Balleste suggest about 0.2 for
        scattered data and about 1.1 for clustered data.
    variables, scaling, improve, rng, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`. V-MDAV is deterministic: ``rng`` only
        matters for a randomized ``improve`` step. When ``time_limit`` runs out, the groups
        still to build are not extended and the result has ``status="limit"``.

    Returns
    -------
    MicroaggregationResult
        Groups have k..2k-1 records, except that the fewer than k records left at the end
        join the group with the nearest centroid, so a group can have up to 3k-2 records.

    Notes
    -----
    The whole-data centroid is computed once; each group starts at the unassigned record
    farthest from it, takes its k-1 nearest unassigned records, then grows by the
    unassigned record ``e_min`` nearest to any member while ``d_in < gamma * d_out``
    (``d_in``: distance from ``e_min`` to the group; ``d_out``: from ``e_min`` to its
    nearest other unassigned record; Euclidean distances on the standardized data).
    With ``gamma = 0`` this is not MDAV: seeds follow the fixed order of distance to the
    data centroid and one group is built per step.

    Ties: the record with the lowest row position wins (farthest, nearest, closest to the
    group); a left-over record joins the lowest-numbered of equally near groups.

    Default ``gamma = 0.5``, by measurement: on the 12 CASC instances (Tarragona, Census,
    EIA; k = 3, 4, 5, 10) the geometric mean of IL relative to MDAV is 0.979 at 0.5 against
    1.017 at 0.2; on scattered synthetic data 0.5 is within 1% of 0.2, on clustered data
    mostly better. The best gamma varies by instance: for the lowest IL, try several. The
    README's "V-MDAV details" lists the gammas that reproduce published IL values.

    Time O(n^2 d / k) for the seeds (as MDAV) plus the extension, O(n^2 d) in the worst
    case (scattered data in many dimensions); memory O(n d): no n x n distance matrix.
    Distances are screened with BLAS and every decision re-made with exact differences.

    References
    ----------
    A. Solanas, A. Martinez-Balleste, "V-MDAV: a multivariate microaggregation with
    variable group size", COMPSTAT 2006, 917-925.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import vmdav
    >>> X = np.array([[0.0, 0.0], [0.1, 0.0], [0.0, 0.1], [0.1, 0.1],   # three clusters of 4
    ...               [4.0, 4.0], [4.1, 4.0], [4.0, 4.1], [4.1, 4.1],
    ...               [8.0, 0.0], [8.1, 0.0], [8.0, 0.1], [8.1, 0.1]])
    >>> res = vmdav(X, 3)
    >>> res.labels.tolist()
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]
    >>> round(res.information_loss, 4)
    0.0468
    >>> fixed = vmdav(X, 3, gamma=0)  # no extension: groups of 3 mix the clusters
    >>> fixed.group_sizes.tolist(), round(fixed.information_loss, 4)
    ([3, 3, 3, 3], 24.0929)
    """
    return microaggregate(X, k, method="vmdav", gamma=gamma, variables=variables, scaling=scaling,
                          improve=improve, rng=rng, time_limit=time_limit, progress=progress)


def mu_approx(X, k, *, randomized=True, variables=None, scaling="standardize", improve=None, rng=None,
              time_limit=None, progress=None):
    """Microaggregate with mu-Approx (Domingo-Ferrer, Sebe and Solanas 2008).

    FOREST links every record to one of its k-1 nearest neighbours until every tree has at
    least k records; DECOMPOSE-COMPONENT splits trees above max(2k-1, 3k-5) records (with
    Steiner vertices); groups above 2k-1 records are split by the MDAV bipartition.
    Groups have k..2k-1 records.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Records; never modified.
    k : int
        Minimum group size (>= 2, <= n).
    randomized : bool, default True
        ``True``: the paper's randomized version (the one of its Section 6), every choice
        drawn from ``rng``. ``False``: the fixed rule described in the module notes.
    variables, scaling, improve, rng, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`. mu-Approx runs to completion in one pass;
        it does not stop early for ``time_limit``.

    Returns
    -------
    MicroaggregationResult
        ``info`` holds ``approximation_factor_sse`` (Theorem 2: 2(2k-1)max(2k-1,3k-5)^2,
        a worst-case bound for the step-2 partition, given as information),
        ``approximation_factor_euclidean`` (Theorem 1), ``step2_group_sizes`` (group
        sizes before step 3), ``decompose_cases`` and ``edges_used_once``.

    Notes
    -----
    Time: KD-tree neighbours O(n log n) expected (low dimension), FOREST near-linear,
    DECOMPOSE O(s) per split of a tree of s records (O(s^2/k) per tree at worst), step 3
    O(k^2 d) per split group. Memory O(n k); no n x n matrix.
    :func:`mu_approx_structure` returns the forest, the trees and both partitions.

    References
    ----------
    J. Domingo-Ferrer, F. Sebe, A. Solanas, "A polynomial-time approximation to optimal
    multivariate microaggregation", Computers & Mathematics with Applications 55 (2008)
    714-732. G. Aggarwal et al., "Approximation algorithms for k-anonymity", Journal of
    Privacy Technology (2005) (procedures FOREST and DECOMPOSE-COMPONENT).

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import mu_approx
    >>> X = np.array([[1.0, 2.0], [1.1, 2.1], [0.9, 1.9], [5.0, 5.0], [5.2, 5.1], [4.9, 5.2]])
    >>> res = mu_approx(X, 3, rng=0)
    >>> res.labels.tolist()
    [0, 0, 0, 1, 1, 1]
    >>> res.info["approximation_factor_sse"]
    250
    """
    return microaggregate(X, k, method="mu-approx", randomized=randomized, variables=variables,
                          scaling=scaling, improve=improve, rng=rng, time_limit=time_limit,
                          progress=progress)


_MHM_COMMON_DOC = """
    X : DataFrame or array_like of shape (n, p)
        Records; never modified.
    k : int
        Minimum group size (>= 2, <= n); groups have k..2k-1 records.
    circular : bool, default False
        Read the order as a cycle (Tour2Assignment): the last records may be grouped with
        the first ones; the best of the 2k-1 rotations is taken. With a TSP ordering the
        closed tour is shortened instead of the open path.
    solver : {"ils", "ortools"}, default "ils"
        Path search (see :func:`pysdcmicro.univariate.tsp_path`).
    iterations : int or None
        Path search budget: kicks of the iterated local search (default 5 n) or OR-Tools'
        solution limit.
    neighbours : int, default 10
        Candidate-list length of the path search. The deprecated spelling ``neighbors`` still works, with a
        ``FutureWarning``.
    select : {"sse", "length"}, default "sse"
        Which path to group along: ``"length"``, the shortest path found (plain C-MHM);
        ``"sse"``, among the best paths at about ten checkpoints of the search (all of
        them short), the one whose optimal grouping has the least SSE. Near-optimal paths
        of almost equal length give groupings up to ~1 IL point apart on the CASC sets,
        so scoring a few of them by the real objective pays.
    variables, scaling, improve, rng, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`. ``rng`` seeds the path search; a time
        limit stops the path search early (status "limit") and the grouping is made along
        the best path found so far."""


def mhm(X, k, *, ordering="mdav", circular=False, solver="ils", iterations=None, neighbours=10, select="sse",
        variables=None, scaling="standardize", improve=None, rng=None, time_limit=None, progress=None, **deprecated):
    """Microaggregate with MHM: optimal groups of consecutive records along an ordering.

    Parameters
    ----------
    {common}
    ordering : {"mdav", "npn", "pca", "tsp"} or callable, default "mdav"
        ``"mdav"``: the order in which MDAV (group size k) groups the records; ``"npn"``:
        nearest point next; ``"pca"``: first principal component; ``"tsp"``: a short
        Hamiltonian path (as in :func:`tsp_mhm`); or any ``f(Z, ctx)`` returning a
        permutation of the rows of the standardized data ``Z``.

    Returns
    -------
    MicroaggregationResult
        ``info["path_length"]``: Euclidean length of the order on the standardized data.

    Notes
    -----
    The grouping is the optimal partition of the ordered records into runs of k..2k-1
    (Hansen and Mukherjee 2003): O(n k d) time with prefix sums, O(n (d + k)) memory.

    References
    ----------
    J. Domingo-Ferrer, A. Martinez-Balleste, J. M. Mateo-Sanz, F. Sebe, "Efficient
    multivariate data-oriented microaggregation", The VLDB Journal 15 (2006) 355-369.
    S. L. Hansen, S. Mukherjee, "A polynomial algorithm for optimal univariate
    microaggregation", IEEE TKDE 15 (2003) 1043-1044.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import mhm
    >>> X = np.array([[1.0, 2.0], [1.1, 2.1], [0.9, 1.9], [5.0, 5.0], [5.2, 5.1], [4.9, 5.2]])
    >>> res = mhm(X, 3, ordering="pca")
    >>> res.labels.tolist()
    [0, 0, 0, 1, 1, 1]
    """
    return microaggregate(X, k, method="mhm", variables=variables, scaling=scaling, improve=improve, rng=rng,
                          time_limit=time_limit, progress=progress,
                          **_with_deprecated("mhm", deprecated, ordering=ordering, circular=circular, solver=solver,
                                             iterations=iterations, neighbours=neighbours, select=select))


def tsp_mhm(X, k, *, circular=False, solver="ils", iterations=None, neighbours=10, select="sse", variables=None,
            scaling="standardize", improve=None, rng=None, time_limit=None, progress=None, **deprecated):
    """Microaggregate with C-MHM: optimal groups along a short Hamiltonian path.

    Parameters
    ----------
    {common}

    Returns
    -------
    MicroaggregationResult
        ``info["path_length"]`` (open path length on the standardized data) and
        ``info["tsp"]`` (search facts: start length, seed, kicks, OR-Tools settings).

    Notes
    -----
    The path comes from :func:`pysdcmicro.univariate.tsp_path`; the grouping is the optimal
    partition into runs of k..2k-1 along it (Hansen and Mukherjee 2003).

    References
    ----------
    A. Maya-Lopez, F. Casino, A. Solanas, "Improving multivariate microaggregation through
    Hamiltonian paths and optimal univariate microaggregation", Symmetry 13 (2021) 916.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import tsp_mhm
    >>> X = np.array([[1.0, 2.0], [1.1, 2.1], [0.9, 1.9], [5.0, 5.0], [5.2, 5.1], [4.9, 5.2]])
    >>> res = tsp_mhm(X, 3, rng=0)
    >>> sorted(res.group_sizes.tolist()), round(res.information_loss, 4)
    ([3, 3], 0.2746)
    """
    return microaggregate(X, k, method="tsp-mhm", variables=variables, scaling=scaling, improve=improve, rng=rng,
                          time_limit=time_limit, progress=progress,
                          **_with_deprecated("tsp-mhm", deprecated, circular=circular, solver=solver,
                                             iterations=iterations, neighbours=neighbours, select=select))


def compress_tsp_mhm(X, k, *, compression=2, within="path", circular=False, solver="ils", iterations=None,
                     neighbours=10, select="sse", variables=None, scaling="standardize", improve=None, rng=None, time_limit=None,
                     progress=None, **deprecated):
    """Microaggregate with Compress-TSP-MHM (Algorithm 1 of Maya-Lopez et al. 2022).

    Parameters
    ----------
    {common}
    compression : int, default 2
        Compression ratio c: MDAV groups of c records are replaced by their centroids
        before the path search (the paper uses 2..5; 1 is plain C-MHM).
    within : {"path", "centroid", "index"}, default "path"
        Order of a compressed group's records in the decompressed path: ``"path"``, along
        the direction from the previous to the next centroid on the path (ours);
        ``"centroid"``, ascending distance to the data set's centroid (the paper's rule);
        ``"index"``, ascending row (the authors' public R code). On Census (c = 2, 3, 5;
        k = 3, 5, 10) ``"path"`` gave shorter decompressed paths and lower IL in all nine
        cells (e.g. c = 3, k = 5: 8.37 against 8.96 with the paper's rule).

    Returns
    -------
    MicroaggregationResult
        ``info["path_length"]`` (decompressed path over all records),
        ``info["centroid_path_length"]``, ``info["n_centroids"]``.

    Notes
    -----
    MDAV compression O(n^2 d / c), path search over n / c centroids, decompression O(n d),
    grouping O(n k d).

    References
    ----------
    A. Maya-Lopez, A. Martinez-Balleste, F. Casino, "A compression strategy for an
    efficient TSP-based microaggregation", Expert Systems with Applications 213 (2023)
    118980.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import compress_tsp_mhm
    >>> X = np.array([[1.0, 2.0], [1.1, 2.1], [0.9, 1.9], [5.0, 5.0], [5.2, 5.1], [4.9, 5.2]])
    >>> res = compress_tsp_mhm(X, 3, compression=2, rng=0)
    >>> sorted(res.group_sizes.tolist())
    [3, 3]
    """
    return microaggregate(X, k, method="compress-tsp-mhm", variables=variables, scaling=scaling, improve=improve,
                          rng=rng, time_limit=time_limit, progress=progress,
                          **_with_deprecated("compress-tsp-mhm", deprecated, compression=compression, within=within,
                                             circular=circular, solver=solver, iterations=iterations,
                                             neighbours=neighbours, select=select))


for _f in (mhm, tsp_mhm, compress_tsp_mhm):
    if _f.__doc__:
        _f.__doc__ = _f.__doc__.replace("    {common}", _MHM_COMMON_DOC.strip("\n"))
del _f


def icsm(X, k, *, max_restarts=0, perturbation=20, restart_scope="region", region_groups=30, pool_size=100,
         cycle_groups=1, max_iterations=None, variables=None, scaling="standardize", rng=None, time_limit=None,
         progress=None):
    """Microaggregate with ICSM (Iterative Constraint Satisfaction), optionally with restarts.

    Starts from MDAV and alternates (i) Tour2Assignment: the groups are chained into a
    tour and cut optimally into runs of k..2k-1 records along it (circular
    Hansen-Mukherjee), which lets group sizes change; (ii) SimpleHeuristic: the
    ``pool_size`` best improving migrations (1-opt) and exchanges (2-opt) applied greedily
    on disjoint groups; until neither improves. Then (iii) ComplexHeuristic looks for a
    negative cycle of moves through several groups (n-opt) and the loop restarts, until no
    cycle is found. Restarts then perturb the best partition and search again.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Records; never modified.
    k : int
        Minimum group size; groups have k..2k-1 records.
    max_restarts : int or None, default 0
        Restarts after the first run; ``None`` restarts until ``time_limit`` (then needed).
    perturbation : int, default 20
        Records whose groups are shuffled at each restart (the paper changes the groups of
        up to 20 records).
    restart_scope : {"region", "full"}, default "region"
        ``"region"``: the perturbed records are the ``perturbation`` nearest to a random
        record, and ICSM re-optimises only the ``region_groups`` groups nearest to it (a
        sub-problem of ~``region_groups * k`` records, so a restart costs tens of milliseconds and
        does not grow with n); a final full ICSM pass then runs across region borders.
        ``"full"``: records chosen uniformly at random and ICSM re-run on all the data
        (section 5.3 of the paper, which perturbs MDAV's partition instead of the best one;
        each restart costs a full run).
    region_groups : int, default 30
        Groups in a region.
    pool_size : int, default 100
        Size pn of the move pool of SimpleHeuristic (the paper's setting).
    cycle_groups : int, default 1
        ComplexHeuristic looks for a negative cycle through the lowest-Score group (the
        paper) or through the first of this many groups in increasing Score that has one.
    max_iterations : int, optional
        Rounds of the first run (inner iterations plus n-opt moves).
    variables, scaling, rng, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`. ``rng`` drives the restarts; without
        restarts ICSM is deterministic.

    Returns
    -------
    MicroaggregationResult
        ``info`` holds ``rounds``, ``first_run_sse``, ``restarts`` and
        ``improving_restarts``.

    Notes
    -----
    The SSE change of every move has a closed form in O(d) (see
    :mod:`pysdcmicro.local_search._state`). Each record's nearest records are found once (a
    k-d tree); every round evaluates the migrations and exchanges between each group and
    its nearest groups, the n-opt cycles along the same neighbour lists, and the tour
    through the nearest-record lists, in compiled kernels: O(n L k d) per round for L
    neighbour groups (16 up to k = 6, 4k - 8 above), no n x n matrix. With a time limit,
    region restarts stop early enough to leave the final pass twice the first run's time
    (at most 5% of the limit); their number depends on the machine's speed, so use
    ``max_restarts`` for reproducible runs.

    The SimpleHeuristic pool holds the pn most improving moves (the paper adds the first
    pn found in scan order).

    References
    ----------
    R. Mortazavi, S. Jalili, ICSM (Iterative Constraint Satisfaction for Microaggregation),
    ISC International Journal of Information Security (ISeCure), 2015, Algorithms 2-5,
    equations 3-8, Tables 2 and 4.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import icsm
    >>> X = np.random.default_rng(0).normal(size=(60, 3))
    >>> res = icsm(X, 3)
    >>> res.status, int(res.group_sizes.min()), int(res.group_sizes.max()) <= 5
    ('done', 3, True)
    >>> res2 = icsm(X, 3, max_restarts=20, rng=1)
    >>> res2.information_loss <= res.information_loss
    True
    """
    return microaggregate(X, k, method="icsm", variables=variables, scaling=scaling, rng=rng,
                          time_limit=time_limit, progress=progress, max_restarts=max_restarts,
                          perturbation=perturbation, restart_scope=restart_scope, region_groups=region_groups,
                          pool_size=pool_size, cycle_groups=cycle_groups, max_iterations=max_iterations)


def _given_labels(labels: Any) -> Any:
    """A method core that returns the caller's partition (checked against n and k)."""

    def given(Z: np.ndarray, k: int, ctx: Context) -> Solution:
        arr = np.asarray(labels)
        n = Z.shape[0]
        if arr.ndim != 1 or arr.shape[0] != n:
            raise InvalidInputError(f"`labels` must hold one group label per record ({n}); got shape {arr.shape}.")
        _, lab = np.unique(arr, return_inverse=True)
        lab = lab.reshape(-1).astype(np.int64)
        sizes = np.bincount(lab)
        if sizes.min() < k:
            g = int(np.argmin(sizes))
            raise InvalidInputError(
                f"`labels` must form groups of at least k={k} records; group {np.unique(arr)[g].tolist()!r} has {int(sizes[g])}.")
        return Solution(labels=lab)

    return given


def two_swap(X, labels, k, *, one_opt=False, max_iterations=None, variables=None, scaling="standardize",
             time_limit=None, progress=None):
    """Improve a k-partition by best-improvement swaps of two records (and migrations).

    Repeatedly applies the swap of two records in different groups that lowers the SSE
    the most, until no swap lowers it (Castro, Gentile and Spagnolo-Arrizabalaga 2022,
    Fig. 1). Group sizes never change, so a partition with groups of k..2k-1 records keeps
    them. With ``one_opt=True`` the search also considers moving one record from a group
    of more than ``k`` records to a group of fewer than ``2k - 1`` (ICSM's 1-opt move).

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Records; never modified.
    labels : array_like of shape (n,) or str
        The starting partition (one group label per record, every group with at least
        ``k`` records), or the name of a method whose partition is improved (e.g.
        ``"mdav"``).
    k : int
        Minimum group size.
    one_opt : bool, default False
        Also apply migrations of single records (sizes stay within k..2k-1).
    max_iterations : int, optional
        Stop after this many moves (status ``"limit"``).
    variables, scaling, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`.

    Returns
    -------
    MicroaggregationResult
        ``info["two_swap_moves"]`` is the number of moves applied.

    Notes
    -----
    The SSE change of swapping ``x`` (group A, ``a`` records) and ``y`` (group B, ``b``
    records) is ``e(x, B) - e(x, A) + e(y, A) - e(y, B) - (1/a + 1/b) |x - y|^2`` with
    ``e(x, G) = |x - centroid(G)|^2``: O(d) per pair, and one matrix product per block of
    records. Every record keeps its best partner, and after a move only the pairs of the
    two groups touched are re-evaluated, so a move costs O(k n d) instead of the O(n^2 d)
    full scan. Memory O(n d + 256 n): no n x n matrix. The moves and their order are those
    of Fig. 1's best-improvement loop (between equal gains, the lowest record index first).

    References
    ----------
    J. Castro, C. Gentile, E. Spagnolo-Arrizabalaga, "An optimization-based decomposition
    heuristic for the microaggregation problem", PSD 2022, LNCS 13463, section 3.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import two_swap
    >>> X = np.array([[0.0], [1.0], [10.0], [11.0], [0.5], [10.5]])
    >>> res = two_swap(X, [0, 0, 0, 1, 1, 1], 3)
    >>> res.labels.tolist(), res.info["two_swap_moves"]
    ([0, 0, 1, 1, 0, 1], 1)
    """
    improve = ("two-swap", {"one_opt": one_opt, "max_iterations": max_iterations})
    method = labels if isinstance(labels, str) else _given_labels(labels)
    return microaggregate(X, k, method=method, improve=improve, variables=variables, scaling=scaling,
                          time_limit=time_limit, progress=progress)


def _with_deprecated(method: str, deprecated: dict, **options: Any) -> dict:
    """``options`` plus the deprecated option names given (the facade warns and renames
    them): an option left at its default gives way to the deprecated name given for it."""
    if not deprecated:
        return options
    spec = get_method(method)
    for old in deprecated:
        new = spec.renamed.get(old)
        if new in options and new in spec.options and options[new] == spec.options[new].default:
            del options[new]
    return {**options, **deprecated}


def column_generation(X, k, *, variables=None, scaling="standardize", improve=None, rng=None,
                      time_limit=None, progress=None, **options):
    """Microaggregate by column generation, with a certified lower bound.

    Solves the LP relaxation of the set-partitioning model (one column per group of
    ``k..2k-1`` records, cost its SSE) by column generation, reports the Lagrangian lower
    bound it proves, and returns the best integer partition of the generated groups (never
    worse than the MDAV-based seeds).

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
    k : int
    variables, scaling, improve, rng, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`.
    **options
        The fields of ``ColumnGenerationOptions`` (``pysdcmicro.optimization``), the one
        list of this method's options with each default and meaning; ``pysdcmicro methods``
        prints them. The most used: ``max_iterations``, ``pricing_time`` /
        ``pricing_deterministic_time`` (limit per CP-SAT pricing call), ``mip``,
        ``mip_time`` / ``mip_deterministic_time``, ``cut_rounds`` (subset-row cuts after a
        solved LP) and ``n_jobs`` (CP-SAT search threads; None or 0: 1, -1: every available
        core; the deprecated name ``workers`` still works, with a ``FutureWarning``).

    Returns
    -------
    MicroaggregationResult
        ``lower_bound`` (IL percent, proven) and ``gap`` are set.

    Notes
    -----
    The bound is valid at every iteration, not only at convergence: for any duals ``pi``,
    ``sum(pi) + min{sum_s r_s n_s : sum_s s n_s = n}`` bounds the optimum from below when
    ``r_s`` bounds the reduced cost of every size-``s`` group. ``r_s`` comes from CP-SAT's
    proven bound on an integer-scaled pricing model (coefficients rounded down, so the scaled
    objective never exceeds the true one) or from per-record bounds; charging each anchor
    (lowest-index member) once, ``sum(pi)`` plus the ``floor(n/k)`` most negative per-anchor
    bounds is valid too. Before any LP, ``u_i = min_s a_i(s)/(2s)`` (``a_i(s)``: sum of the
    ``s-1`` smallest squared distances from record ``i``) is dual feasible, so ``sum(u)``
    is a bound (``info["nn_bound"]``). When exact pricing at the master's duals does not
    finish, a bound search prices exactly at points between the latest dual-feasible centre
    and those duals, where pricing is much cheaper, and keeps the best bound found
    (``info["bound_search"]``: one ``(step, bound, dual feasible)`` per step).
    With ``smoothing=alpha > 0``, pricing (heuristic and exact) runs at ``alpha * centre +
    (1 - alpha) * pi``, the centre being the duals with the best Lagrangian bound so far
    (only groups negative at ``pi`` enter the pool; every exact round proves a bound at its
    point, listed in ``info["priced_bounds"]``); when no group is
    negative at the master's duals (a mis-pricing) ``alpha`` is halved (0 below 0.125) and
    the pricing repeated, and the LP counts as solved when the centre's bound reaches the
    master's value. When the LP is not solved, the record ascent
    (:func:`pysdcmicro.optimization._pricing.record_ascent`) proves ``sum(pi) + sum_i m_i`` with ``m_i`` a lower bound
    on the least ``rc(C)/|C|`` over the groups containing record ``i``, from branch and bounds
    stopped at a node budget (valid whatever the budget), and climbs through the dual-feasible
    points ``pi + m`` (``info["record_ascent"]``: one ``(bound, nodes, complete)`` per step).
    After a solved LP, subset-row cuts ``sum_C floor(|C cap T|/2) x_C <= 1`` on triples ``T``
    raise the bound above the LP value: for any ``pi`` and any cut multipliers ``sigma <= 0``,
    ``sum(pi) + sum(sigma)`` plus a lower bound on the reduced costs with the penalties
    ``-sum_T sigma_T floor(|C cap T|/2)`` (>= 0) bounds the optimum
    (``info["subset_row_cuts"]``: the bound before and after, the rounds, cuts, seconds).
    ``info["bound_source"]`` names the argument behind the reported bound
    ("neighbour", "Lagrangian (master duals)", "Lagrangian (smoothed duals)", "Lagrangian
    (bound search)", "Lagrangian (truncated pricing, record ascent)", "LP value (...)",
    "Lagrangian (subset-row cuts)", "LP value with subset-row cuts", or the
    MIP's optimality proof) and ``info["found_by"]``
    the step that found the partition. Under a time limit the time left after the MIP goes
    to ICSM restarts from the best partition, unless the bound proves it optimal.
    Heuristic pricing costs O(n L^2 (d + k)) per iteration for ``L`` candidates per record;
    exact pricing builds an (m x m) distance block for the m records it keeps (m <=
    ``exact_max_records``).

    References
    ----------
    J. Castro, C. Gentile, E. Spagnolo-Arrizabalaga, "An algorithm for the microaggregation
    problem using column generation", Computers & Operations Research 144 (2022) 105817;
    "An optimization-based decomposition heuristic for the microaggregation problem",
    PSD 2022, LNCS 13463, 3-14 (model (6)-(7)).

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import column_generation
    >>> X = np.array([[0.0, 0.1], [0.2, 0.0], [0.1, 0.2], [3.0, 3.1], [3.2, 2.9], [2.9, 3.0],
    ...               [6.0, 0.1], [6.1, 0.3], [5.9, 0.0]])
    >>> res = column_generation(X, 3, rng=0, pricing_deterministic_time=5.0,
    ...                         mip_deterministic_time=5.0)
    >>> res.labels.tolist()
    [0, 0, 0, 1, 1, 1, 2, 2, 2]
    >>> bool(res.lower_bound <= res.information_loss + 1e-9), res.gap < 1e-4  # percent
    (True, True)
    """
    return microaggregate(X, k, method="column-generation", variables=variables, scaling=scaling,
                          improve=improve, rng=rng, time_limit=time_limit, progress=progress, **options)


def decomposition(X, k, *, variables=None, scaling="standardize", improve=None, rng=None,
                  time_limit=None, progress=None, **options):
    """Microaggregate with the decomposition heuristic (column generation on subsets).

    Steps (Castro, Gentile and Spagnolo-Arrizabalaga 2022, Sect. 2): the better of MDAV
    and V-MDAV; local search; a split into ``s' <= s`` subsets of about ``n/s`` records
    along the groups found; column generation with an integer step on each subset (worker
    processes when ``n_jobs`` > 1); the union; local search again. With a
    ``time_limit`` the method keeps improving until the deadline: the local search is ICSM
    with restarts by default (it takes the time left after the subsets); with another local
    search, new rounds split the best partition along a path from another group and
    re-solve the subsets, and after two rounds without a gain ICSM with restarts takes the
    rest of the time.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
    k : int
    variables, scaling, improve, rng, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`. ``time_limit`` is split: with ICSM
        restarts (the default) half for step 3, half of the rest across the subsets, the
        remainder for step 7; with another local search 20 % for step 3, 85 % of the rest
        for the subsets, the remainder for step 7 and further rounds.
    **options
        ``s`` (number of subsets; default by ``k``: 2 for k <= 3, 5 for k <= 5, else 10,
        chosen by measurement, see ``benchmarks/results/decomposition.md``), ``step3``
        (run step 3), ``local_search`` (steps 3 and 7: "icsm-restarts" (default): ICSM with
        restarts until the step's share of ``time_limit``, one ICSM run without a limit;
        "two-swap" as in the paper; "icsm": one ICSM run; "none"), ``split`` ("path":
        groups ordered along a path over their centroids; "sequential": in the order step 3
        returns them, as in the paper), ``n_jobs`` (worker processes for the subsets:
        None, 0 or -1 = every core; 1 = in-process; the deprecated name ``processes`` still
        works, with a ``FutureWarning``), ``subset_time_limit`` (seconds per subset),
        ``max_rounds`` (rounds of steps 4-7; default: 1 without a time limit, until the
        deadline with one), and the column-generation budgets ``max_iterations``,
        ``pricing_deterministic_time``, ``mip_time``, ``mip_deterministic_time`` (when
        given, the subsets' MIP runs in CP-SAT, which takes deterministic limits;
        otherwise HiGHS).

    Returns
    -------
    MicroaggregationResult
        ``info`` holds the SSE after steps 2, 3, 5 and 7 of the first round, each subset's
        result, and one entry per round (``info["rounds"]``).

    Notes
    -----
    No global lower bound: each subset's bound is a bound for that subset only. Results do
    not depend on ``n_jobs`` (each subset gets its own seed drawn from ``rng``) unless a
    wall-clock limit stops a subset. The local search and V-MDAV are used
    when registered; otherwise the steps that need them are skipped and ``message`` says so.

    References
    ----------
    J. Castro, C. Gentile, E. Spagnolo-Arrizabalaga, "An optimization-based decomposition
    heuristic for the microaggregation problem", PSD 2022, LNCS 13463, 3-14.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import decomposition
    >>> X = np.random.default_rng(0).normal(size=(40, 2))
    >>> res = decomposition(X, 3, s=2, n_jobs=1, rng=0, pricing_deterministic_time=5.0)
    >>> int(res.group_sizes.min()) >= 3, res.status
    (True, 'done')
    """
    return microaggregate(X, k, method="decomposition", variables=variables, scaling=scaling,
                          improve=improve, rng=rng, time_limit=time_limit, progress=progress, **options)


def auto(X, k, *, effort="full", n_jobs=None, variables=None, scaling="standardize", improve=None, rng=None,
         time_limit=None, progress=None, **deprecated):
    """Microaggregate with the best partition the time allows (the default method).

    Without ``time_limit``, a fixed amount of work that depends on ``n``, ``d`` and ``k``
    only (MDAV + two-swap, ICSM, ICSM region restarts, a nearest-neighbour lower bound), so
    a seed repeats the run on any machine; the answer is never worse than MDAV followed by
    two-swap. With ``time_limit``, a portfolio on every core uses the whole budget (ICSM
    restarts, column generation for a proven bound, the decomposition heuristic). See
    ``docs/guide/auto.md``.

    Parameters
    ----------
    X : DataFrame or array_like of shape (n, p)
        Records; never modified.
    k : int
        Minimum group size.
    effort : {"full", "light"}, default "full"
        ``"light"``: MDAV followed by a local search only (what each block of the
        large-data path runs).
    n_jobs : int, optional
        Processes of the time-limited portfolio, this one included (None, 0 or -1: one per
        available core; 1: this process alone). Without ``time_limit`` the work is fixed
        and runs in this process. The deprecated name ``processes`` still works, with a
        ``FutureWarning``.
    variables, scaling, improve, rng, time_limit, progress
        As in :func:`pysdcmicro.microaggregate`.

    Returns
    -------
    MicroaggregationResult
        ``info["winner"]`` names the step that found the partition, ``info["plan"]`` the
        work chosen; ``lower_bound`` and ``gap`` are set when a bound was computed.

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro import auto
    >>> X = np.array([[0.0], [1.0], [2.0], [10.0], [11.0], [12.0]])
    >>> res = auto(X, 3, rng=0)
    >>> res.labels.tolist(), res.status
    ([0, 0, 0, 1, 1, 1], 'done')
    """
    return microaggregate(X, k, method="auto", effort=effort, n_jobs=n_jobs, variables=variables,
                          scaling=scaling, improve=improve, rng=rng, time_limit=time_limit, progress=progress,
                          **deprecated)


def microaggregate_blocked(frame, k, *, method="mdav", block_size=None, repair="auto", repair_options=None,
                           repair_passes=DEFAULT_REPAIR_PASSES, window_size=None, repair_scope="all", n_jobs=None,
                           client=None, **kwargs):
    """Microaggregate large data: blocks of near records, solved in parallel, borders repaired.

    The large-data path of :func:`pysdcmicro.microaggregate`, taken whatever the number of
    records: split into blocks by recursive principal-axis bisection, run ``method`` (and any
    ``improve`` steps) on each block in worker processes or on a Dask cluster, then run
    border-repair passes of local search over windows of whole groups that straddle the
    block borders.

    Parameters
    ----------
    frame : DataFrame, Dask DataFrame or array_like of shape (n, p)
        The records; never modified. A Dask DataFrame gives a Dask DataFrame back.
    k : int
        Minimum group size.
    method : str or callable, default "mdav"
        Method run on each block.
    block_size : int, optional
        Largest block (default :data:`DEFAULT_BLOCK_SIZE`); sizes below ``2k`` act as
        ``2k``. Blocks of one stratum are never mixed with another's.
    repair : "auto", "none", str or callable, default "auto"
        Border-repair step: ``"auto"`` is the built-in :func:`batch_local_search`; a
        registered improvement name (``pysdcmicro.improvements()``) or a callable
        ``improver(Z, labels, k, ctx, **options)`` also works; ``"none"`` skips the repair.
    repair_options : dict, optional
        Options of the repair step (for ``"auto"``: ``rounds``, ``neighbours``, ``max_size``,
        ``tol``): the quality/time knob, with ``repair_passes``.
    repair_passes : int, default 2
        Passes over differently placed windows.
    window_size : int, optional
        Records per repair window (default: ``block_size``).
    repair_scope : {"all", "borders"}, default "all"
        Built-in repair only. ``"borders"``: in each window, a group whose records and
        neighbour groups' records all come from one block (second pass: one window of the
        first) starts settled, so the search starts at the borders and spreads only as far
        as changes reach (less work in few dimensions; in 10 it saved no time). ``"all"``:
        every group starts unsettled.
    n_jobs : int, optional
        Worker processes (default: every available core; 1 = this process).
    client : dask.distributed.Client or str, optional
        Run on this Dask cluster instead (client or scheduler address).
    **kwargs
        Every other parameter of :func:`pysdcmicro.microaggregate` (``variables``,
        ``strata``, ``improve``, ``rng``, ``time_limit``, ``progress``, method options).

    Returns
    -------
    MicroaggregationResult
        A k-partition of the whole data set, IL over the whole data set; ``info["blocks"]``
        (count, sizes, statuses, executor), ``info["repair"]`` (passes, windows improved, IL
        before and after: the repair gain) and ``info["memory"]`` (peak memory of this
        process and of the workers).

    Notes
    -----
    Time O(n B d / k) for MDAV on blocks of B records plus O(n L s d) per repair round
    (L = 8 neighbour groups, s <= 2k - 1); memory O(n d) here plus one block per worker
    task in flight. Same ``rng`` seed, same result with any executor: every block and window
    gets a seed drawn up front. No lower bound is reported (blocking restricts the groups).

    Examples
    --------
    >>> import numpy as np
    >>> from pysdcmicro.large import microaggregate_blocked
    >>> X = np.random.default_rng(0).normal(size=(400, 3))
    >>> res = microaggregate_blocked(X, 4, block_size=100, n_jobs=1, rng=0)
    >>> res.info["blocks"]["count"], int(res.group_sizes.min()) >= 4
    (4, True)
    >>> res.info["repair"]["sse_after"] <= res.info["repair"]["sse_before"]
    True
    """
    options = {"size": "auto" if block_size is None else block_size, "repair": repair,
               "repair_options": repair_options, "repair_passes": repair_passes, "window_size": window_size,
               "repair_scope": repair_scope}
    return microaggregate(frame, k, method=method, blocks=options, n_jobs=n_jobs, client=client, **kwargs)
