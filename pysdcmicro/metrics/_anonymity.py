"""k-anonymity of released data: every combination of released values is shared by >= k rows."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import _resolve_columns, check_k
from ._pairs import _as_table, _columns

__all__ = ["frequency_counts", "equivalence_class_sizes", "is_k_anonymous"]


def _class_codes(data: Any, variables: Any) -> np.ndarray:
    table = _as_table(data, "masked")
    if table.shape[0] == 0:
        from .._errors import InvalidInputError

        raise InvalidInputError("`masked` must have at least one record; got 0 rows.")
    columns = _columns(table)
    chosen = columns if variables is None else _resolve_columns(variables, columns, "variables")
    if not chosen:
        from .._errors import InvalidInputError

        raise InvalidInputError("`variables` must name at least one column; got an empty list.")
    frame = table[chosen] if isinstance(table, pd.DataFrame) else pd.DataFrame(table[:, chosen])
    # Exact equality of the released values; a missing value is a value of its own.
    return frame.groupby(list(frame.columns), sort=False, dropna=False, observed=True).ngroup().to_numpy()


def frequency_counts(masked: Any, *, variables: Any = None) -> np.ndarray:
    """For each record, how many records share its combination of released values.

    The sample frequency ``f_k`` of sdcMicro's ``freqCalc``, computed on the values as
    released (exact equality; missing values count as a value of their own). O(n p).

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
    """
    codes = _class_codes(masked, variables)
    return np.bincount(codes)[codes].astype(np.int64)


def equivalence_class_sizes(masked: Any, *, variables: Any = None) -> np.ndarray:
    """Size of each equivalence class (distinct combination of released values), in order
    of first appearance.

    Examples
    --------
    >>> import numpy as np
    >>> equivalence_class_sizes(np.array([[2.0], [5.0], [2.0], [5.0], [5.0]])).tolist()
    [2, 3]
    """
    return np.bincount(_class_codes(masked, variables)).astype(np.int64)


def is_k_anonymous(masked: Any, k: int, *, variables: Any = None) -> bool:
    """Whether every combination of released values of ``variables`` is shared by at least
    ``k`` records (Samarati & Sweeney 1998; for microaggregation, Domingo-Ferrer & Torra 2005).

    Checked on the values themselves, not on a partition: two records are
    indistinguishable only if all their released values are exactly equal. Use it on the
    data as written (for instance re-read from the released CSV file).

    Examples
    --------
    >>> import pandas as pd
    >>> released = pd.DataFrame({"income": [11.0, 11.0, 11.0, 52.0, 52.0],
    ...                          "age": [31.0, 31.0, 31.0, 61.0, 61.0]})
    >>> is_k_anonymous(released, 2), is_k_anonymous(released, 3)
    (True, False)
    """
    k = check_k(k)
    return bool(equivalence_class_sizes(masked, variables=variables).min() >= k)
