"""Typed MCP wire shapes, one generated module per protocol version (a test aid: the package
does not ship them; its client results are the views of ``mcpio._client._results``).

``_v2026_07_28`` and ``_v2025_11_25`` are written by ``tools/gen_types.py`` from the official
JSON Schemas (never edit them by hand). Each holds a msgspec Struct or type alias per schema
``$defs`` entry and a ``DEFS`` table by name. A version module is imported on first use, so
importing this package costs nothing beyond msgspec::

    req = decode("CallToolRequest", b'{"jsonrpc": "2.0", "id": 1, ...}')  # or a parsed dict
    encode(req)        # -> bytes
    to_builtins(req)   # -> dict, ready for json.dumps

Decoding is strict (no str -> int coercion); an absent optional field stays ``msgspec.UNSET``
and is left out again when encoding, while an explicit ``null`` survives where the schema
allows it.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType
from typing import Any

import msgspec

__all__ = ["DEFAULT_VERSION", "VERSIONS", "decode", "defs", "encode", "to_builtins", "type_of"]

VERSIONS = ("2025-11-25", "2026-07-28")
DEFAULT_VERSION = "2026-07-28"
_encoder = msgspec.json.Encoder()


def _module(version: str) -> ModuleType:
    if version not in VERSIONS:
        raise ValueError(f"no wire types for MCP version {version!r}; known: {', '.join(VERSIONS)}")
    return importlib.import_module(f"{__name__}._v{version.replace('-', '_')}")


def defs(version: str = DEFAULT_VERSION) -> dict[str, Any]:
    """The ``$defs`` name -> type table of one protocol version."""
    return _module(version).DEFS


def type_of(name: str, version: str = DEFAULT_VERSION) -> Any:
    """The type generated for the schema's ``$defs/<name>``; ``KeyError`` when it has none."""
    table = defs(version)
    if name not in table:
        raise KeyError(f"{name!r} is not defined in the MCP {version} schema")
    return table[name]


@lru_cache(maxsize=512)
def _decoder(name: str, version: str) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(type_of(name, version))


def decode(name: str, data: bytes | dict[str, Any] | Any, version: str = DEFAULT_VERSION) -> Any:
    """Parse JSON bytes, or an already-parsed JSON value (dict, list, str, ...), into the type of
    ``$defs/<name>``.

    Raises ``msgspec.ValidationError`` when the document does not fit, and
    ``msgspec.DecodeError`` (its base class) when bytes are not JSON.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _decoder(name, version).decode(data)
    return msgspec.convert(data, type_of(name, version), strict=True)


def encode(obj: Any) -> bytes:
    """Serialise a wire shape (or any JSON-able value) to compact JSON bytes."""
    return _encoder.encode(obj)


def to_builtins(obj: Any) -> Any:
    """A wire shape as plain dicts, lists and scalars; unset fields are left out."""
    return msgspec.to_builtins(obj)
