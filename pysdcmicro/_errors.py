"""Exceptions and warnings raised by pysdcmicro.

Every message follows one grammar (STYLE item 8): the parameter or column, the rule in
words, the value received, e.g. "`k` must be an integer >= 2; got 1."  Our exceptions
subclass the builtins, so ``except ValueError`` keeps working for callers that do not
know pysdcmicro.
"""

from __future__ import annotations

__all__ = [
    "PysdcmicroError",
    "InvalidInputError",
    "InvalidTypeError",
    "StratumTooSmallError",
    "ConstantColumnWarning",
    "DisclosureRiskWarning",
    "ReleaseCheckError",
]


class PysdcmicroError(Exception):
    """Base class of every exception raised on purpose by pysdcmicro."""


class InvalidInputError(PysdcmicroError, ValueError):
    """An argument or a data value breaks a rule (wrong value)."""


class InvalidTypeError(PysdcmicroError, TypeError):
    """An argument or a column has the wrong kind (wrong type)."""


class StratumTooSmallError(InvalidInputError):
    """A stratum holds fewer than ``k`` records, so it cannot be k-anonymised alone."""


class ConstantColumnWarning(UserWarning):
    """A chosen variable is constant: it contributes nothing to SSE or SST.

    The column is kept (every group mean equals the constant, so the released values
    do not change) and is left out of the distance computations; it can never cause a
    division by zero.
    """


class DisclosureRiskWarning(UserWarning):
    """The release is k-anonymous as asked, yet some records stay identifiable by a
    combination it was not asked to protect.

    Raised for groups of variables (``variables=[["a", "b"], ["c", "d"]]``): each group's
    columns are k-anonymous, but the combination of every group's released values can be
    shared by fewer than k records. The message gives the count; the result holds it in
    ``info["across_groups"]``.
    """


class ReleaseCheckError(PysdcmicroError, RuntimeError):
    """The release, as built or as written and read back, is not what the result says.

    Raised by the final check that runs before anything is written (see
    :func:`pysdcmicro.verify_release`): the released values are not k-anonymous, or their
    information loss against the original differs from the reported one. Nothing is
    written when it is raised. It signals a bug or an unrepresentable value, never a
    user error.
    """
