"""The arrays MDAV's compiled rounds take (numpy only): the JIT rounds of :mod:`._mdav_numba`
and the ahead-of-time compiled ones (:mod:`pysdcmicro._aot`) share them, and the latter run
without importing numba. :mod:`._mdav_numba` explains the scaling and the bound E."""

from __future__ import annotations

import numpy as np

__all__ = ["prepare"]


def prepare(X: np.ndarray):
    """The arrays :func:`._mdav_numba.mdav_rounds` needs: ``(X, norms, XT32, n32, scale2, E)`` where X is
    a C-contiguous float64 copy, ``norms`` its squared row norms (numpy's einsum: the numpy
    rounds' numbers), ``XT32`` the scaled float32 transpose, ``n32`` the scaled float32 norms,
    ``scale2`` the (power-of-two) factor of squared quantities, ``E`` the screening bound."""
    X = np.array(X, dtype=np.float64, order="C", copy=True)
    norms = np.einsum("ij,ij->i", X, X)
    big = float(norms.max()) if norms.size else 0.0
    e = 0 if not big > 0 else int(np.ceil(np.log2(big) / 2.0))
    scale = float(np.ldexp(1.0, -e))
    scale2 = scale * scale
    XT32 = np.ascontiguousarray((X * scale).T, dtype=np.float32)
    n32 = (norms * scale2).astype(np.float32)
    d = X.shape[1]
    E = (4 * d + 40) * 2.0 ** -24 + (4 * d + 40) * 2.0 ** -50 + 1e-30
    return X, norms, XT32, n32, scale2, E
