"""k-anonymity of released data: every combination of released values is shared by >= k rows.

Missing values follow sdcMicro's convention for missing key values (``missing="wildcard"``,
the default): a missing cell matches any value, so records i and j are indistinguishable
when they agree on every column where both are observed. ``missing="value"`` treats a
missing cell as a value of its own (exact equality, NaN equal to NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import _resolve_columns, check_k
from ._pairs import _as_table, _columns

__all__ = ["frequency_counts", "equivalence_class_sizes", "is_k_anonymous"]

MISSING_RULES = ("wildcard", "value")


def _chosen_frame(data: Any, variables: Any) -> pd.DataFrame:
    table = _as_table(data, "masked")
    if table.shape[0] == 0:
        from .._errors import InvalidInputError

        raise InvalidInputError("`masked` must have at least one record; got 0 rows.")
    columns = _columns(table)
    chosen = columns if variables is None else _resolve_columns(variables, columns, "variables")
    if not chosen:
        from .._errors import InvalidInputError

        raise InvalidInputError("`variables` must name at least one column; got an empty list.")
    return table[chosen] if isinstance(table, pd.DataFrame) else pd.DataFrame(table[:, chosen])


def _class_codes(data: Any, variables: Any) -> np.ndarray:
    frame = _chosen_frame(data, variables)
    # Exact equality of the released values; a missing value is a value of its own.
    return frame.groupby(list(frame.columns), sort=False, dropna=False, observed=True).ngroup().to_numpy()


def _wildcard(frame: pd.DataFrame) -> np.ndarray:
    from .._release import wildcard_frequencies

    return wildcard_frequencies(frame)


def frequency_counts(masked: Any, *, variables: Any = None, missing: str = "wildcard") -> np.ndarray:
    """For each record, how many records it cannot be told apart from (itself included).

    The sample frequency ``f_k`` of sdcMicro's ``freqCalc``, computed on the values as
    released (exact equality). A missing cell matches any value (``missing="wildcard"``,
    sdcMicro's convention) or is a value of its own (``missing="value"``). O(n p) without
    missing cells; with them O(u^2 p) for u distinct released rows.

    Parameters
    ----------
    masked : DataFrame or 2-D array
        The released data.
    variables : list, optional
        The quasi-identifiers (default: every column). Any dtype works for a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> frequency_counts(np.array([[2.0, 1.0], [2.0, 1.0], [5.0, 1.0]])).tolist()
    [2, 2, 1]
    >>> frequency_counts(np.array([[2.0, 1.0], [2.0, np.nan], [5.0, 1.0]])).tolist()
    [2, 2, 1]
    >>> frequency_counts(np.array([[2.0, 1.0], [2.0, np.nan], [5.0, 1.0]]), missing="value").tolist()
    [1, 1, 1]
    """
    from .._validation import check_choice

    missing = check_choice(missing, "missing", MISSING_RULES)
    if missing == "wildcard":  # values as written: floats bit for bit, a missing cell matches any value
        return _wildcard(_chosen_frame(masked, variables))
    codes = _class_codes(masked, variables)
    return np.bincount(codes)[codes].astype(np.int64)


def equivalence_class_sizes(masked: Any, *, variables: Any = None, missing: str = "wildcard") -> np.ndarray:
    """Size of each equivalence class (distinct combination of released values), in order
    of first appearance.

    With missing cells and ``missing="wildcard"`` (sdcMicro's convention: a missing cell
    matches any value) records no longer fall into disjoint classes; the value for each
    distinct combination is then the number of records matching it (its frequency, see
    :func:`frequency_counts`), so the smallest is still what k-anonymity is about.

    Examples
    --------
    >>> import numpy as np
    >>> equivalence_class_sizes(np.array([[2.0], [5.0], [2.0], [5.0], [5.0]])).tolist()
    [2, 3]
    """
    from .._validation import check_choice

    missing = check_choice(missing, "missing", MISSING_RULES)
    if missing == "wildcard":  # values as written: floats bit for bit, a missing cell matches any value
        from .._release import _float_array, _has_missing, _value_codes, row_classes

        frame = _chosen_frame(masked, variables)
        R = _float_array(frame)
        if isinstance(R, np.ndarray) and not _has_missing(R, range(R.shape[1])):
            # float columns, no missing cell: exact row classes (hashed, then verified bit for
            # bit), O(n p) time and O(n) extra memory, codes in order of first appearance
            codes, n_classes = row_classes(R)
            return np.bincount(codes, minlength=n_classes).astype(np.int64)
        written = pd.DataFrame(_value_codes(frame))
        codes = written.groupby(list(written.columns), sort=False, dropna=False).ngroup().to_numpy()
        freq = _wildcard(frame)
        return freq[np.unique(codes, return_index=True)[1]].astype(np.int64)
    return np.bincount(_class_codes(masked, variables)).astype(np.int64)


def is_k_anonymous(masked: Any, k: int, *, variables: Any = None, missing: str = "wildcard") -> bool:
    """Whether every combination of released values of ``variables`` is shared by at least
    ``k`` records (Samarati & Sweeney 1998; for microaggregation, Domingo-Ferrer & Torra 2005).

    Checked on the values themselves, not on a partition: two records are
    indistinguishable only if all their released values are exactly equal, a missing cell
    matching any value (``missing="wildcard"``, sdcMicro's convention for missing key
    values; ``missing="value"``: a missing cell is a value of its own). Use it on the data
    as written (for instance re-read from the released CSV file).

    Examples
    --------
    >>> import pandas as pd
    >>> released = pd.DataFrame({"income": [11.0, 11.0, 11.0, 52.0, 52.0],
    ...                          "age": [31.0, 31.0, 31.0, 61.0, 61.0]})
    >>> is_k_anonymous(released, 2), is_k_anonymous(released, 3)
    (True, False)
    """
    k = check_k(k)
    return bool(frequency_counts(masked, variables=variables, missing=missing).min() >= k)
