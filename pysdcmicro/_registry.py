"""The one registry of methods and improvement steps: a dict per kind and a decorator.

:func:`pysdcmicro.microaggregate`, the estimator class, the CLI, the docs and the
contract tests all read it. It is a leaf: it imports no method module. A method registers
when its module is imported; :mod:`pysdcmicro._pipeline` imports every algorithm package,
so anything that has imported the pipeline (the facade, :mod:`pysdcmicro._methods`, the
command line) sees every built-in method. A *method* core has the signature::

    solver(Z, k, ctx, *, option1=default1, ...) -> Solution

and an *improvement* core::

    improver(Z, labels, k, ctx, *, option1=default1, ...) -> Solution

where ``Z`` is the standardized float64 C-contiguous data, ``ctx`` a
:class:`~pysdcmicro._context.Context`, and the keyword-only parameters are the method's
options (their names are the CLI's ``--option NAME=VALUE`` names). A core that takes
``**options`` names a frozen dataclass of them instead (``options=`` of the decorators).
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import typing
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ._errors import InvalidInputError, InvalidTypeError

__all__ = [
    "MethodSpec",
    "MissingCode",
    "OptionSpec",
    "register_method",
    "register_improvement",
    "get_method",
    "get_improvement",
    "method_names",
    "improvement_names",
    "all_methods",
    "all_improvements",
]


@dataclass(frozen=True)
class OptionSpec:
    name: str
    default: Any
    annotation: str

    def coerce(self, text: str, owner: str) -> Any:
        """Turn the text of ``--option NAME=VALUE`` into the option's type."""
        ann = self.annotation.replace(" ", "")
        lowered = text.strip().lower()
        if lowered in ("none", "null") and ("None" in ann or self.default is None):
            return None
        kinds = [part for part in ann.split("|") if part != "None"] or [type(self.default).__name__]
        errors = []
        for kind in kinds:
            try:
                if kind == "bool":
                    if lowered in ("1", "true", "yes", "on"):
                        return True
                    if lowered in ("0", "false", "no", "off"):
                        return False
                    raise ValueError
                if kind == "int":
                    return int(text)
                if kind == "float":
                    return float(text)
                if kind in ("str", "Any") or kind.startswith("Literal") or kind.startswith("str"):
                    return text
            except ValueError:
                errors.append(kind)
                continue
        raise InvalidInputError(
            f"option `{self.name}` of {owner} must be {' or '.join(kinds)}; got {text!r}."
        )


class OptionTable(dict):
    """A method's options by name (what the registry lists). A deprecated name is not
    listed (``in``, iteration), but looking it up (``table[old]``) gives its new name's
    entry, so a front end that reads an option's type by the name it was given accepts the
    old names while they are deprecated."""

    def __init__(self, options: Mapping | None = None, renamed: Mapping | None = None):
        super().__init__(options or {})
        self.renamed = dict(renamed or {})

    def __missing__(self, key: Any) -> OptionSpec:
        if key in self.renamed:
            return self[self.renamed[key]]
        raise KeyError(key)


@dataclass(frozen=True)
class MissingCode:
    """A method option under which a data value is a missing-value code.

    With ``option=value`` the method reads the missing cells from ``ctx.missing_cells``,
    cells holding ``code`` count as missing too (with a warning naming the column), a group
    whose members all hold ``code`` in a column releases ``code`` there, and the method
    needs the whole data (it cannot run in blocks).
    """

    option: str
    value: Any
    code: float
    origin: str  # whose convention it is, named in the messages

    def applies(self, options: Mapping) -> bool:
        return options.get(self.option) == self.value


@dataclass(frozen=True)
class MethodSpec:
    """A registered method or improvement step, with the capabilities the pipeline reads.

    ``block_defaults``: options given to the method when it runs on the blocks of the
    large-data path, unless the caller gave them. ``threads``: the whole-data core may use
    ``ctx.threads`` threads (the caller's ``n_jobs``). ``missing_code``: see
    :class:`MissingCode`. ``renamed``: deprecated option names, each mapped to its new
    name; they are accepted (with a ``FutureWarning``) but not listed in ``options``.
    ``per_variable``: the method partitions one variable at a time. The facade runs its
    core once per chosen column, each column a variable group of its own, so its release
    is k-anonymous per variable, not jointly; the core is given one column. Such a method
    runs on the whole data, never in blocks (see :mod:`pysdcmicro._pipeline`).
    """

    name: str
    core: Callable
    summary: str
    kind: str  # "method" or "improvement"
    randomized: bool
    options: dict
    block_defaults: Mapping = field(default_factory=dict)
    threads: bool = False
    missing_code: MissingCode | None = None
    renamed: Mapping = field(default_factory=dict)
    per_variable: bool = False

    def check_options(self, options: dict) -> None:
        unknown = [name for name in options if name not in self.options and name not in self.renamed]
        if unknown:
            known = ", ".join(self.options) or "none"
            close = difflib.get_close_matches(unknown[0], list(self.options), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise InvalidInputError(
                f"{self.kind} {self.name!r} has no option {unknown[0]!r}; its options are: {known}.{hint}"
            )

    def rename_deprecated(self, options: Mapping, *, stacklevel: int = 2) -> dict:
        """``options`` with each deprecated name replaced by its new one, with a
        ``FutureWarning`` naming both (``stacklevel`` frames above the caller). Giving an old
        name and its new one together is an error."""
        out = dict(options)
        for old, new in self.renamed.items():
            if old not in out:
                continue
            value = out.pop(old)
            if new in out:
                raise InvalidInputError(f"{self.kind} {self.name!r}: give `{new}` only (`{old}` is its deprecated "
                                        f"name); got both, {new}={out[new]!r} and {old}={value!r}.")
            warnings.warn(f"option `{old}` of {self.kind} {self.name!r} is deprecated and will be removed in the "
                          f"next release; use `{new}`.", FutureWarning, stacklevel=stacklevel + 1)
            out[new] = value
        return out

    def defaults(self) -> dict:
        return {name: spec.default for name, spec in self.options.items()}


_METHODS: dict[str, MethodSpec] = {}
_IMPROVEMENTS: dict[str, MethodSpec] = {}


def _annotation_text(param: inspect.Parameter, hints: dict) -> str:
    ann = hints.get(param.name, param.annotation)
    if ann is inspect.Parameter.empty:
        return type(param.default).__name__ if param.default is not None else "str"
    if isinstance(ann, str):
        return ann
    text = getattr(ann, "__name__", None)
    if text and not typing.get_args(ann):
        return text
    return str(ann).replace("typing.", "")


def _options_of(core: Callable) -> dict:
    sig = inspect.signature(core)
    try:
        hints = typing.get_type_hints(core)
    except Exception:  # string annotations that cannot be resolved: keep the text
        hints = {}
    opts = {}
    for param in sig.parameters.values():
        if param.kind is inspect.Parameter.KEYWORD_ONLY:
            if param.default is inspect.Parameter.empty:
                raise TypeError(f"option {param.name!r} of {core.__name__} needs a default")
            opts[param.name] = OptionSpec(param.name, param.default, _annotation_text(param, hints))
    return opts


def _options_of_dataclass(cls: type) -> dict:
    """The options of a dataclass of options: one per field, which must have a default."""
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # string annotations that cannot be resolved: keep the text
        hints = {}
    opts = {}
    for f in dataclasses.fields(cls):
        if f.default is dataclasses.MISSING:
            raise TypeError(f"option {f.name!r} of {cls.__name__} needs a default")
        param = inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                  annotation=f.type)
        opts[f.name] = OptionSpec(f.name, f.default, _annotation_text(param, hints))
    return opts


def _register(table: dict, kind: str, name: str, summary: str, randomized: bool, options: type | None,
              **capabilities: Any):
    def decorator(core: Callable) -> Callable:
        if name in table:
            raise ValueError(f"{kind} {name!r} is registered twice")
        found = _options_of(core) if options is None else _options_of_dataclass(options)
        table[name] = MethodSpec(name=name, core=core, summary=summary, kind=kind, randomized=randomized,
                                 options=OptionTable(found, capabilities.get("renamed")), **capabilities)
        return core
    return decorator


def register_method(name: str, *, summary: str, randomized: bool = False, options: type | None = None,
                    block_defaults: Mapping | None = None, threads: bool = False,
                    missing_code: MissingCode | None = None, renamed: Mapping | None = None,
                    per_variable: bool = False):
    """Decorator registering ``solver(Z, k, ctx, **options) -> Solution`` under ``name``.

    The options are the solver's keyword-only parameters, or, with ``options``, the fields of
    that dataclass (each with a default). The keywords after ``options`` are capabilities (see
    :class:`MethodSpec`)."""
    return _register(_METHODS, "method", name, summary, randomized, options,
                     block_defaults=dict(block_defaults or {}), threads=threads, missing_code=missing_code,
                     renamed=dict(renamed or {}), per_variable=bool(per_variable))


def register_improvement(name: str, *, summary: str, randomized: bool = False, options: type | None = None):
    """Decorator registering ``improver(Z, labels, k, ctx, **options) -> Solution``; ``options``
    as in :func:`register_method`."""
    return _register(_IMPROVEMENTS, "improvement", name, summary, randomized, options)


def _lookup(table: dict, kind: str, name: Any) -> MethodSpec:
    if not isinstance(name, str):
        raise InvalidTypeError(f"`{'method' if kind == 'method' else 'improve'}` must be a {kind} name; got {name!r}.")
    key = name.strip().lower().replace("_", "-")
    if key in table:
        return table[key]
    close = difflib.get_close_matches(key, list(table), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise InvalidInputError(
        f"unknown {kind} {name!r}; choose one of: {', '.join(sorted(table))}.{hint}"
    )


def get_method(name: str) -> MethodSpec:
    return _lookup(_METHODS, "method", name)


def get_improvement(name: str) -> MethodSpec:
    return _lookup(_IMPROVEMENTS, "improvement", name)


def method_names() -> list[str]:
    return list(_METHODS)


def improvement_names() -> list[str]:
    return list(_IMPROVEMENTS)


def all_methods() -> dict[str, MethodSpec]:
    return dict(_METHODS)


def all_improvements() -> dict[str, MethodSpec]:
    return dict(_IMPROVEMENTS)

