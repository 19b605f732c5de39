"""Content blocks (spec-notes §5): helpers users return from tools and prompts (no I/O but
reading a file named by ``path`` when the block is built).

``to_blocks(value, rules)`` is the one conversion from Python values to wire content:
str → text; :class:`Text`/:class:`Image`/:class:`Audio`/:class:`ResourceLink`/
:class:`EmbeddedResource` → their blocks; a list/tuple → the concatenation; a dict that is
already a content block (has a known ``type``) passes through; anything else → the compact
JSON of its value as text. Blocks a negotiated version lacks are downgraded to text that says
what was left out, never sent in a shape the version's schema rejects.
"""

from __future__ import annotations

import os
from typing import Any, cast

import msgspec

from ._versions import Rules

# mimetypes and pathlib are imported where a file is read (Image(path=...)), not at start-up.

_BLOCK_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})


def b64(data: bytes) -> str:
    """``base64.b64encode(data)`` as text: its primitive, imported at the first encoding, not at
    start-up, and without ``base64``."""
    import binascii

    return binascii.b2a_base64(data, newline=False).decode("ascii")


def _load(
    data: bytes | str | None, path: str | os.PathLike[str] | None, mime_type: str | None, kind: str
) -> tuple[str, str]:
    if (data is None) == (path is None):
        raise ValueError(f"{kind} needs exactly one of data= or path=")
    if path is not None:
        import mimetypes
        from pathlib import Path

        p = Path(path)
        raw = p.read_bytes()
        guessed = mimetypes.guess_type(p.name)[0]
        return b64(raw), mime_type or guessed or "application/octet-stream"
    if isinstance(data, str):  # already base64
        return data, mime_type or "application/octet-stream"
    return b64(bytes(data)), mime_type or "application/octet-stream"  # type: ignore[arg-type]


# Annotations members by version: audience and priority from the start, lastModified from
# 2025-06-18 (the release that also added ``_meta`` to content blocks and most other types).
_BASE_ANNOTATIONS = frozenset({"audience", "priority"})


def cut_annotations(annotations: dict[str, Any] | None, rules: Rules | None) -> dict[str, Any] | None:
    """``annotations`` without the members ``rules.version`` lacks (None when nothing is left)."""
    if not annotations:
        return None
    if rules is None or rules.titles:
        return annotations
    kept = {k: v for k, v in annotations.items() if k in _BASE_ANNOTATIONS}
    return kept or None


def _with_common(
    block: dict[str, Any], annotations: dict[str, Any] | None, meta: dict[str, Any] | None, rules: Rules | None
) -> dict[str, Any]:
    annotations = cut_annotations(annotations, rules)
    if annotations:
        block["annotations"] = annotations
    if meta and (rules is None or rules.titles):  # _meta on content blocks: 2025-06-18+
        block["_meta"] = meta
    return block


class Text(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass (start-up)
    text: str
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_block(self, rules: Rules | None = None) -> dict[str, Any]:
        return _with_common({"type": "text", "text": self.text}, self.annotations, self.meta, rules)


class Image(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass (start-up)
    """An image: ``Image(data=png_bytes, mime_type="image/png")`` or ``Image(path="chart.png")``."""

    data: bytes | str | None = None
    path: str | os.PathLike[str] | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    _kind = "image"

    def to_block(self, rules: Rules | None = None) -> dict[str, Any]:
        b64, mime = _load(self.data, self.path, self.mime_type, type(self).__name__)
        return _with_common({"type": self._kind, "data": b64, "mimeType": mime}, self.annotations, self.meta, rules)


class Audio(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass (start-up)
    """Audio content (2025-03-26+): ``Audio(data=wav_bytes, mime_type="audio/wav")`` or ``Audio(path=...)``."""

    data: bytes | str | None = None
    path: str | os.PathLike[str] | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_block(self, rules: Rules | None = None) -> dict[str, Any]:
        if rules is not None and not rules.audio_content:
            return {"type": "text", "text": f"[audio content omitted: protocol {rules.version} has no audio blocks]"}
        b64, mime = _load(self.data, self.path, self.mime_type, "Audio")
        return _with_common({"type": "audio", "data": b64, "mimeType": mime}, self.annotations, self.meta, rules)


class ResourceLink(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass (start-up)
    """A link to a resource the client may read later (2025-06-18+)."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def to_block(self, rules: Rules | None = None) -> dict[str, Any]:
        if rules is not None and not rules.resource_links:
            return {
                "type": "text",
                "text": f"Resource: {self.uri}" + (f" ({self.description})" if self.description else ""),
            }
        block: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.title is not None and (rules is None or rules.titles):
            block["title"] = self.title
        if self.description is not None:
            block["description"] = self.description
        if self.mime_type is not None:
            block["mimeType"] = self.mime_type
        if self.size is not None:
            block["size"] = self.size
        return _with_common(block, self.annotations, self.meta, rules)


class EmbeddedResource(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass (start-up)
    """A resource's contents inlined: give ``text=`` or ``blob=`` (bytes)."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None

    def contents(self) -> dict[str, Any]:
        c: dict[str, Any] = {"uri": self.uri}
        if self.mime_type:
            c["mimeType"] = self.mime_type
        if self.blob is not None:
            c["blob"] = b64(self.blob)
        else:
            c["text"] = self.text or ""
        return c

    def to_block(self, rules: Rules | None = None) -> dict[str, Any]:
        return _with_common({"type": "resource", "resource": self.contents()}, self.annotations, self.meta, rules)


CONTENT_TYPES: tuple[type, ...] = (Text, Image, Audio, ResourceLink, EmbeddedResource)


class ToolResult(msgspec.Struct):
    """Full control over a tools/call result: content, structured content and the error flag."""

    content: Any = msgspec.field(default_factory=list)
    structured_content: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None


def json_text(value: Any) -> str:
    """Compact JSON of a Python value (dataclasses, Structs, pydantic models included)."""
    kind = type(value)
    if kind is int:  # the common scalar result, written as msgspec would
        return str(value)
    if kind is bool:
        return "true" if value else "false"
    return msgspec.json.encode(to_jsonable(value)).decode()


def to_jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if dump is not None and callable(dump):
        return dump(mode="json")
    return msgspec.to_builtins(value)


def to_blocks(value: Any, rules: Rules | None = None) -> list[dict[str, Any]]:
    """Convert a handler's return value into a list of content blocks (see module docstring)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    # dicts first: a block as it came (a proxy's upstream result) is the common case, and
    # isinstance against the Struct classes goes through their metaclass (~0.2 us each)
    # (a version with resource links has every block type: blocks as they came fit it)
    if isinstance(value, dict) and value.get("type") in _BLOCK_TYPES:
        return [value if rules is None or rules.resource_links else for_era(value, rules)]
    if type(value) is list and value and all(type(v) is dict and v.get("type") in _BLOCK_TYPES for v in value):
        if rules is None or rules.resource_links:
            return list(value)  # blocks as they came (a proxy's upstream result): what the loop below gives
        return [for_era(v, rules) for v in value]
    if isinstance(value, CONTENT_TYPES):
        return [cast(Any, value).to_block(rules)]
    if (
        isinstance(value, (list, tuple))
        and value
        and all(_is_block(v) or isinstance(v, str) for v in value)
        and any(_is_block(v) for v in value)
    ):
        out: list[dict[str, Any]] = []
        for v in value:
            out.extend(to_blocks(v, rules))
        return out
    return [{"type": "text", "text": json_text(value)}]


def for_era(block: dict[str, Any], rules: Rules) -> dict[str, Any]:
    """A content block as it came (a proxy's upstream's, in a newer version) in a shape the
    version of ``rules`` has: a ``resource_link`` (2025-06-18+) or ``audio`` block (2025-03-26+)
    it lacks is the text its helper class downgrades it to; any other block as it is."""
    kind = block.get("type")
    if kind == "resource_link" and not rules.resource_links:
        said = block.get("description")
        return ResourceLink(str(block.get("uri")), "", description=said if isinstance(said, str) else None).to_block(
            rules
        )
    if kind == "audio" and not rules.audio_content:
        return Audio(data="").to_block(rules)
    return block


def _is_block(v: Any) -> bool:
    return (isinstance(v, dict) and v.get("type") in _BLOCK_TYPES) or isinstance(v, CONTENT_TYPES)
