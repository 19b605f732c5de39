"""Typed client results: the wire object itself, with typed attributes.

Every result the :class:`~mcpio.Client` returns is one of these classes, and each *is* the
JSON object the server sent: a ``dict`` subclass holding the wire keys unchanged. So there are
two ways to read one, and both stay supported:

* the typed way, attributes with Python names (``tool.name``, ``tool.input_schema``,
  ``result.content[0].text``, ``result.data``) that an editor completes and mypy checks;
* the raw way, the wire dict (``tool["inputSchema"]``, ``tool.get("title")``, ``"icons" in
  tool``, ``json.dumps(tool)``, ``tool == {...}``); :meth:`WireObject.model_dump` gives a plain
  ``dict`` copy.

Why a dict subclass rather than a msgspec Struct: the session has already decoded the message
(one ``msgspec.json`` decode of the wire bytes, as before), so a view costs one shallow copy per
object and keeps, by construction, every key the schema does not know (forward compatibility),
the same shape for both protocol eras (what differs by revision is only which keys are present),
and every line of code written against the dicts. An optional field that is absent reads as
``None`` (or the spec's default: ``is_error`` is False, ``arguments`` empty). Nested objects are
wrapped when the attribute is read, not before.

Attribute names are the wire names in snake_case (``inputSchema`` -> ``input_schema``,
``mimeType`` -> ``mime_type``, ``_meta`` -> ``meta``): mcpio's own API is snake_case, and the
camelCase names remain available as keys, so nothing is lost and nothing is ambiguous.
"""

from __future__ import annotations

import base64
from typing import Any, Generic, Literal, TypeVar, cast

import msgspec

T = TypeVar("T")
W = TypeVar("W", bound="WireObject")

__all__ = [
    "AudioContent",
    "CallToolResult",
    "Completion",
    "ContentBlock",
    "EmbeddedResourceContent",
    "GetPromptResult",
    "ImageContent",
    "Implementation",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "Resource",
    "ResourceContents",
    "ResourceLinkContent",
    "ResourceTemplate",
    "ServerCapabilities",
    "SkillEntry",
    "SkillFile",
    "TextContent",
    "Tool",
    "WireObject",
    "content_block",
    "wrap_list",
]


class WireObject(dict[str, Any]):
    """A JSON object of the protocol: the raw dict (mapping access) plus typed attributes."""

    __slots__ = ()

    def model_dump(self) -> dict[str, Any]:
        """The raw wire object as a plain ``dict`` (a shallow copy): every key the server sent."""
        return dict(self)

    @property
    def meta(self) -> dict[str, Any] | None:
        """``_meta``: protocol and vendor metadata, when present."""
        return cast("dict[str, Any] | None", self.get("_meta"))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"

    def _str(self, key: str) -> str | None:
        v = self.get(key)
        return v if isinstance(v, str) else None

    def _dict(self, key: str) -> dict[str, Any] | None:
        v = self.get(key)
        return v if isinstance(v, dict) else None


def wrap_list(cls: type[W], items: Any) -> list[W]:
    """``[cls(item) ...]`` for the dict items of a wire list (others are dropped)."""
    return [cls(i) for i in items if isinstance(i, dict)] if isinstance(items, list) else []


# ---------------------------------------------------------------------- server identity
class Implementation(WireObject):
    """``serverInfo``: who the server is."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self._str("name") or ""

    @property
    def version(self) -> str:
        return self._str("version") or ""

    @property
    def title(self) -> str | None:
        return self._str("title")

    @property
    def description(self) -> str | None:
        return self._str("description")

    @property
    def website_url(self) -> str | None:
        return self._str("websiteUrl")

    @property
    def icons(self) -> list[dict[str, Any]]:
        return cast("list[dict[str, Any]]", self.get("icons") or [])


class ServerCapabilities(WireObject):
    """What the server announced; each capability is its settings dict, or None when absent."""

    __slots__ = ()

    @property
    def tools(self) -> dict[str, Any] | None:
        return self._dict("tools")

    @property
    def resources(self) -> dict[str, Any] | None:
        return self._dict("resources")

    @property
    def prompts(self) -> dict[str, Any] | None:
        return self._dict("prompts")

    @property
    def logging(self) -> dict[str, Any] | None:
        return self._dict("logging")

    @property
    def completions(self) -> dict[str, Any] | None:
        return self._dict("completions")

    @property
    def extensions(self) -> dict[str, Any]:
        """Extension identifier -> its settings (2026-07-28; empty when none)."""
        return self._dict("extensions") or {}


# ---------------------------------------------------------------------- tools
class Tool(WireObject):
    """A tool definition from ``tools/list``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self._str("name") or ""

    @property
    def title(self) -> str | None:
        return self._str("title")

    @property
    def description(self) -> str | None:
        return self._str("description")

    @property
    def input_schema(self) -> dict[str, Any]:
        """``inputSchema``: the JSON Schema of the arguments."""
        return self._dict("inputSchema") or {"type": "object"}

    @property
    def output_schema(self) -> dict[str, Any] | None:
        """``outputSchema``: the JSON Schema of ``structuredContent``, when declared."""
        return self._dict("outputSchema")

    @property
    def annotations(self) -> dict[str, Any] | None:
        return self._dict("annotations")

    @property
    def icons(self) -> list[dict[str, Any]]:
        return cast("list[dict[str, Any]]", self.get("icons") or [])

    @property
    def execution(self) -> dict[str, Any] | None:
        return self._dict("execution")


class ContentBlock(WireObject):
    """A content block (``type`` says which); the subclasses add their fields."""

    __slots__ = ()

    @property
    def type(self) -> str:
        return self._str("type") or ""

    @property
    def annotations(self) -> dict[str, Any] | None:
        return self._dict("annotations")


class TextContent(ContentBlock):
    __slots__ = ()

    @property
    def text(self) -> str:
        return self._str("text") or ""


class _Binary(ContentBlock):
    __slots__ = ()

    @property
    def data(self) -> str:
        """The base64 text as sent; :meth:`decoded` gives the bytes."""
        return self._str("data") or ""

    @property
    def mime_type(self) -> str:
        return self._str("mimeType") or ""

    def decoded(self) -> bytes:
        return base64.b64decode(self.data)


class ImageContent(_Binary):
    __slots__ = ()


class AudioContent(_Binary):
    __slots__ = ()


class ResourceContents(WireObject):
    """One entry of ``resources/read`` contents (or of an embedded resource): text or blob."""

    __slots__ = ()

    @property
    def uri(self) -> str:
        return self._str("uri") or ""

    @property
    def mime_type(self) -> str | None:
        return self._str("mimeType")

    @property
    def text(self) -> str | None:
        return self._str("text")

    @property
    def blob(self) -> str | None:
        """The base64 text of a binary resource, as sent."""
        return self._str("blob")

    def content_bytes(self) -> bytes:
        """The raw content: the decoded blob, or the text in UTF-8."""
        blob = self.blob
        return base64.b64decode(blob) if blob is not None else (self.text or "").encode("utf-8")


class EmbeddedResourceContent(ContentBlock):
    __slots__ = ()

    @property
    def resource(self) -> ResourceContents:
        return ResourceContents(self._dict("resource") or {})


class ResourceLinkContent(ContentBlock):
    __slots__ = ()

    @property
    def uri(self) -> str:
        return self._str("uri") or ""

    @property
    def name(self) -> str:
        return self._str("name") or ""

    @property
    def description(self) -> str | None:
        return self._str("description")

    @property
    def mime_type(self) -> str | None:
        return self._str("mimeType")


_BLOCKS: dict[Any, type[ContentBlock]] = {
    "text": TextContent,
    "image": ImageContent,
    "audio": AudioContent,
    "resource": EmbeddedResourceContent,
    "resource_link": ResourceLinkContent,
}


def content_block(raw: dict[str, Any]) -> ContentBlock:
    """The typed block for a wire content block (an unknown ``type`` gives a plain ContentBlock)."""
    return _BLOCKS.get(raw.get("type"), ContentBlock)(raw)


def _blocks(items: Any) -> list[ContentBlock]:
    return [content_block(i) for i in items if isinstance(i, dict)] if isinstance(items, list) else []


class CallToolResult(WireObject, Generic[T]):
    """The result of ``tools/call``. ``is_error`` True is the tool's failure, reported (not raised).

    ``data`` is the tool's result as Python values, one rule for every tool: its
    ``structuredContent`` (unwrapped from ``{"result": x}`` when the tool's output schema wrapped
    a non-object value), else the text of its text blocks (a ``-> str`` tool, or a server without
    structured output), else None (a failed call, or only images and other blocks); converted
    to the ``result_type`` given to :meth:`~mcpio.Client.call_tool` when there was one."""

    __slots__ = ("_type",)

    def __init__(self, raw: dict[str, Any], result_type: type[T] | None = None, wrapped: bool = False) -> None:
        super().__init__(raw)
        self._type = (result_type, wrapped)

    def __reduce__(self) -> Any:
        return (CallToolResult, (dict(self), self._type[0], self._type[1]))

    @property
    def content(self) -> list[ContentBlock]:
        return _blocks(self.get("content"))

    @property
    def structured_content(self) -> dict[str, Any] | None:
        return self._dict("structuredContent")

    @property
    def is_error(self) -> bool:
        return self.get("isError") is True

    @property
    def text(self) -> str:
        """The text blocks' text, joined with newlines (a convenience for the common case)."""
        return "\n".join(b.text for b in self.content if isinstance(b, TextContent))

    @property
    def data(self) -> T:
        """The result, decoded: structured content, else the text, else None (class docstring).

        Raises ``msgspec.ValidationError`` when it does not fit the requested ``result_type``."""
        result_type, wrapped = self._type
        value: Any = self.get("structuredContent")
        if wrapped and isinstance(value, dict) and set(value) == {"result"}:
            value = value["result"]
        elif value is None and not self.is_error and any(isinstance(b, TextContent) for b in self.content):
            value = self.text  # a text result (-> str) is its text: the same .data for every tool
        if result_type is None or value is None:
            return cast(T, value)
        return msgspec.convert(value, result_type, strict=False)


# ---------------------------------------------------------------------- resources
class Resource(WireObject):
    """A resource from ``resources/list``."""

    __slots__ = ()

    @property
    def uri(self) -> str:
        return self._str("uri") or ""

    @property
    def name(self) -> str:
        return self._str("name") or ""

    @property
    def title(self) -> str | None:
        return self._str("title")

    @property
    def description(self) -> str | None:
        return self._str("description")

    @property
    def mime_type(self) -> str | None:
        return self._str("mimeType")

    @property
    def size(self) -> int | None:
        v = self.get("size")
        return v if isinstance(v, int) else None

    @property
    def annotations(self) -> dict[str, Any] | None:
        return self._dict("annotations")


class ResourceTemplate(WireObject):
    """A resource template from ``resources/templates/list``."""

    __slots__ = ()

    @property
    def uri_template(self) -> str:
        return self._str("uriTemplate") or ""

    @property
    def name(self) -> str:
        return self._str("name") or ""

    @property
    def title(self) -> str | None:
        return self._str("title")

    @property
    def description(self) -> str | None:
        return self._str("description")

    @property
    def mime_type(self) -> str | None:
        return self._str("mimeType")


# ---------------------------------------------------------------------- prompts & completion
class PromptArgument(WireObject):
    __slots__ = ()

    @property
    def name(self) -> str:
        return self._str("name") or ""

    @property
    def description(self) -> str | None:
        return self._str("description")

    @property
    def required(self) -> bool:
        return self.get("required") is True


class Prompt(WireObject):
    """A prompt from ``prompts/list``."""

    __slots__ = ()

    @property
    def name(self) -> str:
        return self._str("name") or ""

    @property
    def title(self) -> str | None:
        return self._str("title")

    @property
    def description(self) -> str | None:
        return self._str("description")

    @property
    def arguments(self) -> list[PromptArgument]:
        return wrap_list(PromptArgument, self.get("arguments"))


class PromptMessage(WireObject):
    __slots__ = ()

    @property
    def role(self) -> Literal["user", "assistant"]:
        return "assistant" if self.get("role") == "assistant" else "user"

    @property
    def content(self) -> ContentBlock:
        return content_block(self._dict("content") or {})


class GetPromptResult(WireObject):
    """The result of ``prompts/get``."""

    __slots__ = ()

    @property
    def description(self) -> str | None:
        return self._str("description")

    @property
    def messages(self) -> list[PromptMessage]:
        return wrap_list(PromptMessage, self.get("messages"))


class Completion(WireObject):
    """``completion/complete``'s ``completion``: suggested values."""

    __slots__ = ()

    @property
    def suggestions(self) -> list[str]:
        """The wire ``values`` (named so because ``values()``/``items()`` stay the dict's methods)."""
        return [v for v in self.get("values") or [] if isinstance(v, str)]

    @property
    def total(self) -> int | None:
        v = self.get("total")
        return v if isinstance(v, int) else None

    @property
    def has_more(self) -> bool:
        return self.get("hasMore") is True


# ---------------------------------------------------------------------- skills (SEP-2640)
class SkillFile(WireObject):
    """One file of a skill's manifest: ``{uri, digest, size}``."""

    __slots__ = ()

    @property
    def uri(self) -> str:
        return self._str("uri") or ""

    @property
    def digest(self) -> str:
        return self._str("digest") or ""

    @property
    def size(self) -> int:
        v = self.get("size")
        return v if isinstance(v, int) else -1


class SkillEntry(WireObject):
    """A skill from ``skills/list`` / ``skills/get``: its SKILL.md URI, frontmatter and files."""

    __slots__ = ()

    @property
    def uri(self) -> str:
        return self._str("uri") or ""

    @property
    def frontmatter(self) -> dict[str, Any]:
        return self._dict("frontmatter") or {}

    @property
    def name(self) -> str:
        v = self.frontmatter.get("name")
        return v if isinstance(v, str) else ""

    @property
    def description(self) -> str:
        v = self.frontmatter.get("description")
        return v if isinstance(v, str) else ""

    @property
    def files(self) -> list[SkillFile] | None:
        """The manifest (SKILL.md first as listed), or None for ``"resources": "dynamic"``."""
        res = self.get("resources")
        return None if res == "dynamic" else wrap_list(SkillFile, res)


def wraps_result(schema: dict[str, Any] | None) -> bool:
    """Whether an outputSchema is the ``{"result": x}`` wrapper of a non-object return."""
    if schema is None:
        return False
    props = schema.get("properties")
    return isinstance(props, dict) and set(props) == {"result"} and schema.get("required") == ["result"]
