"""Return values -> structuredContent, held to the return annotation (layer 0, pure).

A tool's ``outputSchema`` is made from its return annotation, and a client may validate
``structuredContent`` against it (spec 2025-06-18 server/tools §Output Schema: servers MUST
provide structured results that conform to it). So a value is checked against the annotation
before it is sent: :func:`conform` encodes it as JSON and decodes that strictly as the annotated
type — lenient only where nothing is lost (an ``int`` for a ``float``, a datetime as its RFC 3339
text, a tuple for a list) — and a value that does not fit (a ``str`` from a ``-> int`` tool)
raises :class:`OutputMismatch`, a bug in the tool, never a result that breaks its own schema.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import msgspec

_PLAIN = frozenset({str, int, bool, type(None)})  # exact types that are JSON data as they are


class OutputMismatch(TypeError):
    """A function's return value does not match its return annotation (the function's bug)."""


def _enc_hook(obj: Any) -> Any:
    main = sys.modules.get("pydantic.main")  # a model: only once the user imported pydantic
    if main is not None and isinstance(obj, main.BaseModel):
        return obj.model_dump(mode="json")
    raise TypeError(f"cannot serialize {type(obj).__name__} to JSON")


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (tuples become lists, datetimes strings, models dicts...)."""
    if type(value) in _PLAIN:  # the common scalar result: no round trip through bytes
        return value
    return msgspec.json.decode(msgspec.json.encode(value, enc_hook=_enc_hook))


def conform(value: Any, tp: Any, name: str, dec_hook: Callable[[type, Any], Any] | None = None) -> Any:
    """``value`` as JSON data, checked against ``tp`` (the normalized return annotation; None:
    unchecked). Raises :class:`OutputMismatch` naming ``name``, the annotation and the mismatch."""
    if tp is None or (type(value) is tp and tp in _PLAIN):  # int from -> int: nothing to check
        return jsonable(value)
    raw = msgspec.json.encode(value, enc_hook=_enc_hook)
    try:
        msgspec.json.decode(raw, type=tp, strict=True, dec_hook=dec_hook)
    except (TypeError, NotImplementedError):  # a type msgspec encodes but cannot decode: not checked
        return msgspec.json.decode(raw)
    except msgspec.ValidationError as exc:
        shown = repr(value)
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        raise OutputMismatch(
            f"{name}() returned {type(value).__name__} {shown}, which does not match its return annotation "
            f"{_type_name(tp)} ({exc}): return a value of that type, or change the annotation"
        ) from None
    return msgspec.json.decode(raw)


def _type_name(tp: Any) -> str:
    if isinstance(tp, type) and not getattr(tp, "__args__", None):
        return tp.__qualname__
    return repr(tp).replace("typing.", "")
