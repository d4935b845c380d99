"""Parsing of the command line's list, block and ``NAME=VALUE`` option arguments (shared by
every command, the ``sdcmicro`` command included)."""

from __future__ import annotations

from typing import Any, Sequence

from .._errors import InvalidInputError

__all__ = ["parse_blocks", "parse_options", "parse_variable_groups", "split_list"]


def parse_variable_groups(text: str | None) -> Any:
    """``"a,b;c,d"`` -> ``[["a", "b"], ["c", "d"]]`` (groups of variables); ``"a,b"`` -> ``["a", "b"]``."""
    if text is None or ";" not in text:
        return split_list(text, "variables")
    groups = [split_list(part) for part in text.split(";")]
    return groups


def parse_blocks(text: str) -> Any:
    t = text.strip().lower()
    if t == "auto":
        return "auto"
    if t in ("none", "off", "0"):
        return None
    try:
        return int(t)
    except ValueError:
        raise InvalidInputError(f"--blocks must be auto, none or a block size (integer); got {text!r}.") from None


def split_list(text: str | None, what: str | None = None) -> list[str] | None:
    """``"a, b"`` -> ``["a", "b"]``; a list naming one column twice is refused when ``what``
    (the parameter, e.g. ``"strata"``) is given, as the API refuses it."""
    if text is None:
        return None
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise InvalidInputError(f"a column list must be names separated by commas; got {text!r}.")
    if what is not None:
        twice = next((item for i, item in enumerate(items) if item in items[:i]), None)
        if twice is not None:
            raise InvalidInputError(f"`{what}` lists column {twice!r} more than once.")
    return items


def parse_options(pairs: Sequence[str], spec, owner: str) -> dict:
    options: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise InvalidInputError(f"an option must be written NAME=VALUE; got {pair!r}.")
        name, value = pair.split("=", 1)
        name = name.strip().replace("-", "_")
        if spec is None:
            options[name] = value
            continue
        spec.check_options({name: None})
        options[name] = spec.options[name].coerce(value, owner)
    return options
