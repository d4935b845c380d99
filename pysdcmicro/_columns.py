"""What each column of a release is: a quasi-identifier to microaggregate, an identifier, a
category, or constant; one rule for the default selection of variables and for the columns
that a release passes through unmasked.

Microaggregation changes only the chosen numeric columns; every other column is released
as it was. A column passed through unmasked can still identify or single out records:

* an identifier (a record number, a name, an SSN, a ZIP code) names a record directly,
  whatever the masked columns say: remove it before release;
* a numeric column left out of the variables is a quasi-identifier released raw;
* a category (text with few values, a binary or class-label code) is a key variable that
  microaggregation does not protect: combined with the masked columns it can make a record
  unique again. sdcMicro protects such variables with its categorical methods (global
  recoding, local suppression).

A constant column singles out nobody and is never named.

The rules (``docs/guide/auto.md``, "Default variables"; ``docs/guide/reports.md``,
"Columns left unmasked") look at a column's name and values only; they cost O(n) per
column, and a sort only for integer columns whose spacing or range looks like numbering.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a data frame is read: the worker processes never do
    import pandas as pd

__all__ = ["identifier_reason", "doubtful_identifier", "category_codes", "column_entry", "unmasked_columns",
           "ranked_entries", "text_columns", "Entry", "IDENTIFIER", "NUMERIC", "CATEGORICAL"]

#: The kinds of an entry of :func:`unmasked_columns`, most dangerous first.
IDENTIFIER, NUMERIC, CATEGORICAL = "identifier", "numeric", "categorical"
_RANK = {IDENTIFIER: 0, NUMERIC: 1, CATEGORICAL: 2}

#: The remedy for a category released unmasked (sdcMicro's vocabulary).
CATEGORY_REMEDY = ("a possible key variable that microaggregation does not protect (recode or suppress it; see "
                   "sdcMicro's categorical methods)")


# ---------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------
_ID_TOKENS = {"id", "ids", "key", "uuid", "guid", "idx", "index", "serial", "rowid", "recid", "pk"}
# Words naming one unit's number: with integer values such a column is an identifier.
_NUMBER_WORDS = {"ssn", "zip", "zipcode", "postcode", "postal", "plz", "phone", "telephone", "fax", "mobile",
                 "respondent", "account", "acct", "iban", "passport", "licence", "license"}
# Words that may follow them in the same name ("zip_code", "account_number", "respondent_id").
_GENERIC = {"code", "no", "nr", "nbr", "num", "number", "id", "key", "identifier"}
_NUMBER_SUFFIXES = {"no", "nr", "nbr", "num", "number"}
# Words naming a person or a unit in text.
_NAME_WORDS = {"name", "names", "surname", "firstname", "lastname", "fullname", "email", "mail", "address",
               "street", "phone", "telephone", "mobile"}


def _words(label: Any) -> list[str]:
    """The words of a column name, lower case: ``"respNo"`` -> resp, no; ``"zip5"`` -> zip, 5;
    ``"POSTAL_CODE"`` -> postal, code."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(label))
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    text = re.sub(r"([A-Za-z])([0-9])|([0-9])([A-Za-z])", r"\1\3 \2\4", text)
    return [w for w in re.split(r"[^a-z0-9]+", text.lower()) if w]


def _looks_like_id_name(label: Any) -> bool:
    """``id``, ``user_id``, ``userId``, ``UTILITYID``, ``key``, ``index``, ..."""
    text = str(label)
    if re.search(r"(?:[a-z0-9]Id|[A-Za-z0-9]ID|_id|_ID)$", text):  # userId, UTILITYID, user_id
        return True
    tokens = re.split(r"[^a-z0-9]+", text.lower())
    return any(t in _ID_TOKENS for t in tokens)


def _number_name(label: Any) -> bool:
    """A name of an identification number: ``ssn``, ``zip``, ``ZIPCODE``, ``postal_code``,
    ``phone``, ``respondent``, ``account_number``; or ending in a number word: ``resp_no``,
    ``caseNr``, ``employee_number`` (not ``number_of_children``, not ``account_balance``)."""
    words = _words(label)
    if not words:
        return False
    for i in range(len(words) - 1):  # "PostCode", "zip_code": one word split in two
        if words[i] + words[i + 1] in _NUMBER_WORDS:
            words[i:i + 2] = [words[i] + words[i + 1]]
            break
    if any(w in _NUMBER_WORDS for w in words) and all(w in _NUMBER_WORDS or w in _GENERIC or w.isdigit()
                                                       for w in words):
        return True
    return len(words) > 1 and words[-1] in _NUMBER_SUFFIXES


def _text_identifier_name(label: Any) -> bool:
    """A name of a text column that names a unit: ``UTILNAME``, ``firm_name``, ``email``,
    ``address``, or an identifier's name."""
    words = _words(label)
    return (str(label).lower().endswith("name") or any(w in _NAME_WORDS for w in words)
            or _looks_like_id_name(label) or _number_name(label))


_LABEL_WORDS = {"target", "class", "label", "labels", "y", "category", "cat", "type", "group", "kind", "sex",
                "gender", "status", "flag", "code", "dummy", "indicator", "outcome", "response"}


def _label_name(label: Any) -> bool:
    """A name of a class label or category code: ``target``, ``class``, ``sex``, ``status_code``."""
    return any(w in _LABEL_WORDS for w in _words(label))


# ---------------------------------------------------------------------------
# Numeric columns
# ---------------------------------------------------------------------------
def _finite(values: Any) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    missing = np.isnan(v)
    return v[~missing] if missing.any() else v


def _integers(v: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(v))) and bool(np.all(v == np.round(v)))


def identifier_reason(values: np.ndarray, label: Any) -> str | None:
    """Why a numeric column is left out of the default variables, or None.

    The rule (documented in ``docs/guide/auto.md``):

    * constant: a single value (missing values aside);
    * a key: integer values, a different one on every record, nearly consecutive
      (max - min + 1 <= 1.1 n: a counter or a row number, not a measurement);
    * an identifier by name: integer values and a name such as ``id``, ``user_id``,
      ``UTILITYID``, ``key``, ``index``;
    * an identification number by name: integer values and a name such as ``ssn``, ``zip``,
      ``zipcode``, ``postcode``, ``postal_code``, ``phone``, ``respondent``, ``account``,
      or ending in ``_no``, ``_nr``, ``number`` (``resp_no``, ``caseNr``).

    Integers that are only *probably* numbers (equally spaced, or spread evenly over a huge
    range) stay in and are named by :func:`doubtful_identifier`: an integer income can be
    different on every record too.
    """
    v = _finite(values)
    if v.size == 0:
        return None
    # O(n) checks first, no sort or hash of the values (np.unique took 11.7 s over ten
    # columns of 10^6 records); only a column of integers is sorted, for the key test.
    bits = v.view(np.int64)
    if bool(np.all(bits == bits[0])):  # bit-identical: 0.0 and -0.0 differ
        return "constant"
    if not _integers(v):
        return None  # not integers: neither a key nor an identifier
    if v.size >= 3 and (v.max() - v.min() + 1) <= 1.1 * v.size:
        s = np.sort(v)
        if bool(np.all(s[1:] != s[:-1])):  # a different value on every record
            return "integer values, a different one on every record, consecutive (looks like a key or row number)"
    if _looks_like_id_name(label):
        return "integer values and an identifier-like name"
    if _number_name(label):
        return "integer values and the name of an identification number"
    return None


#: Fewest records for the equally-spaced test: on fewer, equal steps are as likely a coincidence.
_SPACED_MIN_N = 20
#: Fewest records for the evenly-spread test (its threshold is a 1 % Kolmogorov-Smirnov
#: level): on a hundred records a smooth income distribution can pass for an even spread.
_SPREAD_MIN_N = 200


def doubtful_identifier(values: np.ndarray, label: Any) -> str | None:
    """Why a numeric column kept in the default variables may be numbering, not a
    measurement, or None. Integer values, a different one on every record, and

    * equally spaced (at least 20 records; every value ``a + g i`` with ``g >= 2``, nearly
      every slot taken: ``(max - min) / g + 1 <= 1.1 n``): a counter in steps of ``g``;
    * or spread evenly over a range of at least 1000 per record (at least 200 records; the
      sorted values within a Kolmogorov-Smirnov distance ``1.63 / sqrt(n)`` of a uniform
      spread): issued numbers such as random 9-digit codes. Measurements with such a range
      (incomes, turnover) are skewed, not even.

    The column stays in (it may be a measurement) and the default-variables warning names it.
    """
    v = _finite(values)
    n = v.size
    if n < _SPACED_MIN_N or not _integers(v):
        return None
    lo, hi = float(v.min()), float(v.max())
    span = hi - lo
    if span <= 0 or span + 1 <= 1.1 * n:  # constant, or the key rule's dense integers
        return None
    step = 0
    if span < 2.0 ** 53:
        step = int(np.gcd.reduce((v - lo).astype(np.int64)))
    spaced = step >= 2 and span / step + 1 <= 1.1 * n
    spread = n >= _SPREAD_MIN_N and span >= 1000.0 * n
    if not (spaced or spread):
        return None
    s = np.sort(v)
    if not bool(np.all(s[1:] != s[:-1])):
        return None  # a value shared by two records: not numbering
    if spaced:
        return f"integer values, a different one on every record, in steps of {step}"
    ks = float(np.max(np.abs((s - lo) / span - np.arange(n) / (n - 1))))
    if ks <= 1.63 / math.sqrt(n):
        return ("integer values, a different one on every record, spread evenly over a range "
                f"{span / n:,.0f} times the number of records")
    return None


#: Most distinct integer values of a column named like a class label that look like codes.
_MAX_CODES = 10


def category_codes(values: np.ndarray, label: Any) -> str | None:
    """Why a numeric column looks categorical, or None: two distinct values (a binary or
    0/1 column), or at most 10 distinct integer values, each on two records or more on
    average, and a name such as ``target``, ``class``, ``label``, ``type``, ``sex``,
    ``status``. Group means of such codes are not
    codes (0.33 is neither 0 nor 1). O(n): no sort."""
    v = _finite(values)
    if v.size == 0:
        return None
    first = v[0]
    other = v[v != first]
    if other.size == 0:
        return None  # constant
    second = other[0]
    if bool(np.all(other == second)):
        a, b = sorted((float(first), float(second)))
        return f"two values, {_short(a)} and {_short(b)}"
    if not _label_name(label) or not _integers(v):
        return None
    lo, hi = v.min(), v.max()
    if hi - lo > 1000:
        return None
    present = np.flatnonzero(np.bincount((v - lo).astype(np.int64)))
    if present.size > _MAX_CODES or 2 * present.size > v.size:  # codes repeat; a few distinct numbers do not
        return None
    codes = ", ".join(_short(float(lo + c)) for c in present)
    return f"{present.size} integer values ({codes}) and a class-label name"


def _short(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:g}"


# ---------------------------------------------------------------------------
# Text and categorical columns; the columns of a release
# ---------------------------------------------------------------------------
class Entry(NamedTuple):
    """What a column released unmasked is: ``kind`` (:data:`IDENTIFIER`, :data:`NUMERIC`,
    :data:`CATEGORICAL`), ``reason`` (a phrase for the user), ``unique`` (records whose value
    no other record has), ``distinct`` (values) and ``numeric`` (whether it holds numbers,
    so that it could be microaggregated)."""

    kind: str
    reason: str
    unique: int
    distinct: int
    numeric: bool


def _text_entry(values: pd.Series, label: Any) -> Entry | None:
    """A text, categorical or boolean column; None when it is constant."""
    import pandas as pd

    codes, uniques = pd.factorize(values)  # missing: -1; a categorical's unused categories: not in uniques
    counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
    if not pd.api.types.is_bool_dtype(values.dtype):  # an empty cell is missing, not a value
        counts = counts[~pd.Index(uniques).isin([""])]
    n = len(values)
    distinct = int(counts.size)
    if distinct <= 1:
        return None
    present = int(counts.sum())
    unique = int((counts == 1).sum())
    detail = f"{distinct} values" + (f", {unique} of them on a single record" if unique else "")
    if pd.api.types.is_bool_dtype(values.dtype):
        return Entry(CATEGORICAL, f"categorical: {CATEGORY_REMEDY}; {detail}", unique, distinct, False)
    if 2 * unique >= present:
        return Entry(IDENTIFIER, f"identifier-like text, unique on {unique} of {n} records: remove it before release",
                     unique, distinct, False)
    if distinct >= 20 and _text_identifier_name(label):
        return Entry(IDENTIFIER, f"identifier-like text (a name), {distinct} distinct values on {n} records: remove "
                                 "it before release", unique, distinct, False)
    return Entry(CATEGORICAL, f"categorical: {CATEGORY_REMEDY}; {detail}", unique, distinct, False)


def _numeric_entry(values: np.ndarray, label: Any, left_out: str | None) -> Entry | None:
    """A numeric column; None when it is constant."""
    import pandas as pd

    why = left_out or identifier_reason(values, label)
    if why == "constant":
        return None
    v = _finite(values)
    if v.size == 0:
        return None
    counts = pd.Series(v).value_counts(sort=False)
    unique, distinct = int((counts == 1).sum()), int(counts.size)
    if why:
        reason = (f"numeric, left out by default ({why})" if left_out else
                  f"numeric, looks like an identifier ({why}): remove it before release if it identifies records")
        return Entry(IDENTIFIER, reason, unique, distinct, True)
    codes = category_codes(v, label)
    if codes:
        return Entry(CATEGORICAL, f"categorical: {CATEGORY_REMEDY}; {codes}", unique, distinct, True)
    doubt = doubtful_identifier(v, label)
    if doubt:
        return Entry(IDENTIFIER, f"numeric, may be an identification number ({doubt})", unique, distinct, True)
    return Entry(NUMERIC, "numeric", unique, distinct, True)


#: Reads the numbers of a column held as text: ``(values or None, how they are held or None)``.
NumberReader = Callable[[Any], "tuple[np.ndarray | None, str | None]"]


_SNIFF = 100  # cells read first: one that is not a number settles it


def _numbers_in(values: pd.Series) -> tuple[np.ndarray | None, str | None]:
    """The numbers of a column that holds them as text (every non-empty cell a number, read
    by :func:`pandas.to_numeric`), or ``(None, None)``."""
    import pandas as pd

    if values.dtype != object and not pd.api.types.is_string_dtype(values.dtype):
        return None, None
    head = values.iloc[:_SNIFF].dropna().astype(str).str.strip()
    if pd.to_numeric(head[head != ""], errors="coerce").isna().any():
        return None, None  # text at the top: not numbers (no pass over the whole column)
    cells = values.astype(object)
    present = (cells.notna() & (cells.astype(str).str.strip() != "")).to_numpy()
    if not present.any():
        return None, None
    parsed = pd.to_numeric(cells[present].astype(str).str.strip(), errors="coerce")
    if parsed.isna().any():
        return None, None
    out = np.full(len(values), np.nan)
    out[present] = parsed.to_numpy(dtype=np.float64)
    return out, "numbers held as text"


def column_entry(values: pd.Series, label: Any, *, left_out: str | None = None,
                 numbers: NumberReader | None = None) -> Entry | None:
    """What one column released unmasked is (:class:`Entry`), or None when it cannot single
    out a record (constant, or empty).

    ``left_out``: why the default selection left the column out, if it did. ``numbers``
    reads the numbers of a text column (default :func:`pandas.to_numeric` on every
    non-empty cell; the command line reads them as its CSV format says); a text column that
    holds numbers is judged as a numeric one, its reason saying how the numbers are held
    unless that is ``"numeric"``.
    """
    import pandas as pd

    if pd.api.types.is_bool_dtype(values.dtype) or isinstance(values.dtype, pd.CategoricalDtype):
        return _text_entry(values, label)
    if pd.api.types.is_numeric_dtype(values.dtype) and not pd.api.types.is_complex_dtype(values.dtype):
        return _numeric_entry(values.to_numpy(dtype=np.float64, na_value=np.nan), label, left_out)
    parsed, held = (numbers or _numbers_in)(values)
    if held is not None and parsed is None:  # numbers that cannot be read as they are written
        return Entry(NUMERIC, held, 0, 0, True)
    if parsed is None:
        return _text_entry(values, label)
    entry = _numeric_entry(parsed, label, left_out)
    if entry is None or held == "numeric":
        return entry
    return entry._replace(reason=held if entry.reason == "numeric" else f"{held}; {entry.reason}")


def ranked_entries(frame: pd.DataFrame, columns: list, *, left_out: dict | None = None,
                   numbers: NumberReader | None = None) -> list[tuple[Any, Entry]]:
    """``(column, entry)`` for each of ``columns`` that could single out a record, most
    dangerous first: by kind (identifiers, numeric, categorical), then by the number of
    records unique on the column and its number of values, largest first."""
    left_out = left_out or {}
    found = []
    for position, col in enumerate(columns):
        entry = column_entry(frame[col], col, left_out=left_out.get(col), numbers=numbers)
        if entry is not None:
            found.append((_RANK[entry.kind], -entry.unique, -entry.distinct, position, col, entry))
    found.sort(key=lambda t: t[:4])
    return [(t[4], t[5]) for t in found]


def unmasked_columns(frame: pd.DataFrame, masked: list, *, exclude: Any = (), left_out: dict | None = None,
                     numbers: NumberReader | None = None, option: str = "variables",
                     suffix: str | None = None) -> list[dict]:
    """The columns of a release passed through unmasked that could identify or single out
    records, most dangerous first (:func:`ranked_entries`).

    Parameters
    ----------
    frame : DataFrame
        The release (or the original: the columns not microaggregated are the same).
    masked : list
        The microaggregated columns.
    exclude : list, optional
        Columns the caller chose to keep exact and not to name: the stratum columns (each
        group lies within one stratum, so a release stays k-anonymous with them) and the
        weight column.
    left_out : dict, optional
        ``{column: reason}`` for the numeric columns that the default selection left out.
    numbers : callable, optional
        Reads the numbers of a text column (see :func:`column_entry`).
    option : str
        What would microaggregate a numeric column (``"variables"``, ``"--variables"``).
    suffix : str, optional
        Appended to the reason of the numeric columns not left out by default (``"not in
        `variables`"``): after a comma to a plain ``"numeric"`` reason, after a semicolon
        to the others.

    Returns
    -------
    list of dict
        ``{"column", "reason", "option"}``, ``option`` None for a column that holds no
        numbers (it cannot be microaggregated: remove, recode or suppress it). Constant
        columns are never listed.
    """
    skip = set(masked) | set(exclude or ())
    columns = [c for c in frame.columns if c not in skip]
    left_out = left_out or {}
    found = []
    for col, entry in ranked_entries(frame, columns, left_out=left_out, numbers=numbers):
        reason = entry.reason
        if suffix and entry.numeric and col not in left_out:
            reason = f"{reason}, {suffix}" if entry.kind == NUMERIC else f"{reason}; {suffix}"
        found.append({"column": _json_name(col), "reason": reason, "option": option if entry.numeric else None})
    return found


def _json_name(label: Any) -> Any:
    return int(label) if isinstance(label, (int, np.integer)) and not isinstance(label, bool) else str(label)


def text_columns(frame: pd.DataFrame, columns: list) -> list[tuple[Any, Entry]]:
    """:func:`ranked_entries` of the text, categorical and boolean ``columns`` of ``frame``,
    leaving out numeric columns and text columns that hold numbers (the default selection
    names the numeric columns itself)."""
    import pandas as pd

    chosen = []
    for col in columns:
        values = frame[col]
        if pd.api.types.is_bool_dtype(values.dtype) or isinstance(values.dtype, pd.CategoricalDtype):
            chosen.append(col)
        elif not pd.api.types.is_numeric_dtype(values.dtype) and _numbers_in(values)[0] is None:
            chosen.append(col)
    return ranked_entries(frame, chosen)
