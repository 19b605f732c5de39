"""Validation error messages for tool, prompt and resource arguments (layer 0, pure).

msgspec says ``Expected `int`, got `str` - at `$.a``; an LLM or a person acts better on
``'a': expected integer, got string 'x'``. :func:`explain` does that translation once, for
:mod:`mcpio._schema`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

# Patterns as strings, compiled by ``re`` on the first error, not at start-up (cold start).
_AT = r"(?s)^(?P<body>.*?)(?: - at `\$(?P<path>[^`]*)`)?$"
_MISSING = r"^Object missing required field `(?P<field>.+)`$"
_PATH = r"\.([^.\[]+)|\[(\d+|\.\.\.)\]"
_WORDS = {"int": "integer", "float": "number", "str": "string", "bool": "boolean"}
_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    ((list, tuple), "array"),
    (Mapping, "object"),
)
_NOTHING = object()


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    return next((name for cls, name in _JSON_TYPES if isinstance(value, cls)), type(value).__name__)


def _lookup(arguments: Any, path: str) -> Any:
    """The argument value at a msgspec error path like ``.a[0].b`` (or _NOTHING)."""
    value = arguments
    for key, index in re.findall(_PATH, path):
        if index == "...":
            return _NOTHING
        try:
            value = value[key] if key else value[int(index)]
        except (KeyError, IndexError, TypeError):
            return _NOTHING
    return value


def _show(value: Any) -> str:
    text = msgspec.json.encode(value).decode() if value is None or isinstance(value, bool) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def explain(message: str, arguments: Any, choices: dict[str, list[Any]]) -> str:
    """Turn msgspec's "Expected `int`, got `str` - at `$.a`" into "'a': expected integer, got string 'x'"."""
    m = re.match(_AT, message)
    body, path = (m.group("body"), m.group("path") or "") if m else (message, "")
    if body.startswith("\x1f"):  # from a pydantic model (see _schema._dec_hook)
        _, sub, body = body.split("\x1f", 2)
        path += sub
        if not body:
            return f"'{path.lstrip('.')}' is required"
    missing = re.match(_MISSING, body)
    if missing:
        return f"'{(path + '.' + missing.group('field')).lstrip('.')}' is required"
    value = _lookup(arguments, path)
    body = re.sub(r"`([^`]*)`", lambda t: " or ".join(_WORDS.get(w, w) for w in t.group(1).split(" | ")), body)
    body = body[:1].lower() + body[1:]
    if body.startswith("invalid enum value"):
        body = "invalid value" + body[len("invalid enum value") :]
        top = re.fullmatch(_PATH, path)
        if top and choices.get(top.group(1)):
            body += "; expected one of " + ", ".join(_show(o) for o in choices[top.group(1)])
    elif value is not _NOTHING and (value is None or isinstance(value, (str, int, float, bool))):
        if body.endswith(f", got {json_type(value)}"):
            body += "" if value is None else f" {_show(value)}"
        elif ", got" not in body:
            body += f", got {_show(value)}"
    loc = path.lstrip(".")
    return f"'{loc}': {body}" if loc else body


def unknown(arguments: Mapping[str, Any], names: Iterable[str]) -> str:
    """What to say of ``arguments`` the function does not take: each one, the close name it may
    mean (did you mean), and the names it takes."""
    from ._suggest import did_you_mean

    takes = list(names)
    what = "; ".join(f"unknown argument {k!r}{did_you_mean(str(k), takes)}" for k in arguments if k not in takes)
    return f"{what}; it takes {', '.join(takes)}" if takes else f"{what}; it takes no arguments"


def rename_argument(detail: str, names: Mapping[str, str]) -> str:
    """``detail`` (what :func:`explain` says: ``'a.b': ...``, ``'a' is required``) with the
    argument it starts with named as ``names`` maps it (a transformed tool's published names)."""
    m = re.match(r"'([^'.\[]+)", detail)
    if m is None or m.group(1) not in names:
        return detail
    return f"'{names[m.group(1)]}{detail[m.end() :]}"
