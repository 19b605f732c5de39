"""Typed elicitation: ``await ctx.elicit("…", response_type=T)``.

The ``requestedSchema`` is made from ``T`` by the machinery that makes tool input schemas
(``_schema._generate``: msgspec's schema, titles dropped, Enums inlined), then checked to be what
form-mode elicitation allows (spec: client/elicitation §Requested Schema): an object of flat
properties, each a string (optionally ``format`` email/uri/date/date-time, length bounds), a
number or integer (bounds), a boolean, a string ``enum``, or an array of string ``enum`` items
(multi-select). Anything else is a TypeError naming the type and the property.

``T`` may be a dataclass, TypedDict or msgspec Struct (its fields are the properties), or one
value: a ``Literal[...]`` of strings, a string ``Enum``, a list of strings (the choices), or
``str``/``int``/``float``/``bool``, asked as the single property ``value``. The client's
``content`` comes back converted to ``T`` (:class:`ElicitResult`); one that does not fit is
the client's error (:class:`~._context.ClientRequestError`, an isError result in a tool), and
so is an ``action`` other than accept, decline or cancel (:func:`checked`, every elicitation).
"""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar, get_args, get_origin

import msgspec

from .._errors import INVALID_PARAMS
from .._schema import _generate, _normalize
from .._schema_docs import resolve
from ._mrtr import ELICIT_ACTIONS

T = TypeVar("T")

_PRIMITIVES = ("string", "number", "integer", "boolean")
_KEYWORDS = {"type", "description", "title", "format", "minLength", "maxLength", "minimum", "maximum", "enum"}
_KEYWORDS |= {"default", "enumNames", "oneOf", "items", "minItems", "maxItems", "anyOf"}
_FORMATS = {"email", "uri", "date", "date-time"}


class ElicitResult(Generic[T]):
    """The user's answer: ``action`` ("accept", "decline" or "cancel"), ``data`` (the content
    as the ``response_type``, None unless accepted) and ``content`` (as the client sent it)."""

    __slots__ = ("action", "content", "data")

    def __init__(self, action: str, data: T | None, content: dict[str, Any] | None) -> None:
        self.action, self.data, self.content = action, data, content

    def __repr__(self) -> str:
        return f"ElicitResult(action={self.action!r}, data={self.data!r})"


class _Form:
    """How one ``response_type`` is asked and read back (made once per type)."""

    __slots__ = ("schema", "target", "wrapped")

    def __init__(self, response_type: Any) -> None:
        self.wrapped = False
        target = response_type
        if isinstance(response_type, list):  # ["low", "high"]: one of these strings
            if not response_type or not all(isinstance(c, str) for c in response_type):
                raise TypeError(f"response_type {response_type!r}: a list of choices must hold strings")
            target = Literal[tuple(response_type)]
        self.target = target
        name = getattr(response_type, "__name__", None) or repr(response_type)
        try:
            (schema,), defs = _generate([_normalize(target)], "validation")
        except (TypeError, NameError) as exc:  # NameError: an annotation that does not resolve
            raise TypeError(f"response_type {name} cannot be represented as JSON Schema ({exc})") from None
        schema = resolve(schema, defs)
        if schema.get("type") != "object":
            self.wrapped = True  # one value: asked as the property "value"
            if get_origin(target) is Literal and "enum" in schema:  # declaration order, not msgspec's sorted one
                schema = {**schema, "enum": list(get_args(target))}
            schema = {"type": "object", "properties": {"value": schema}, "required": ["value"]}
        properties = {}
        for pname, prop in (schema.get("properties") or {}).items():
            properties[pname] = _flat(resolve(prop, defs), name, pname)
        out: dict[str, Any] = {"type": "object", "properties": properties}
        if schema.get("required"):
            out["required"] = list(schema["required"])
        self.schema = out

    def read(self, result: Any) -> ElicitResult[Any]:
        action = checked(result)["action"]
        content = result.get("content")
        if action != "accept":
            return ElicitResult(action, None, content if isinstance(content, dict) else None)
        from ._context import ClientRequestError

        if not isinstance(content, dict):
            raise ClientRequestError("the client accepted the elicitation but sent no content object", INVALID_PARAMS)
        value: Any = content.get("value") if self.wrapped else content
        try:
            data = msgspec.convert(value, self.target, strict=False)
        except msgspec.ValidationError as exc:
            raise ClientRequestError(
                f"the client's elicitation answer does not fit the requested form: {exc}", INVALID_PARAMS
            ) from None
        return ElicitResult("accept", data, content)


def checked(result: Any) -> dict[str, Any]:
    """The client's ``ElicitResult`` if its ``action`` is one the protocol defines (schema:
    ElicitResult.action, required, "accept" | "decline" | "cancel"); otherwise the client broke
    the protocol: a :class:`~._context.ClientRequestError` (-32602), never an action made up."""
    action = result.get("action") if isinstance(result, dict) else None
    if isinstance(action, str) and action in ELICIT_ACTIONS:
        return result  # type: ignore[no-any-return]  # a dict: checked above
    from ._context import ClientRequestError

    got = repr(action) if isinstance(result, dict) and "action" in result else "no action"
    raise ClientRequestError(
        f"the client answered the elicitation with {got[:80]}, which the protocol does not define: the "
        "client must answer accept, decline or cancel",
        INVALID_PARAMS,
    )


def _flat(prop: dict[str, Any], name: str, pname: str) -> dict[str, Any]:
    """``prop`` if it is a primitive property form-mode elicitation allows, else a TypeError."""
    kind = prop.get("type")
    if kind == "array":  # multi-select: an array of string enum items
        items = prop.get("items")
        if isinstance(items, dict) and items.get("type") == "string" and isinstance(items.get("enum"), list):
            return {k: v for k, v in prop.items() if k in _KEYWORDS}
    elif kind in _PRIMITIVES and (prop.get("format") is None or prop["format"] in _FORMATS):
        return {k: v for k, v in prop.items() if k in _KEYWORDS}
    raise TypeError(
        f"response_type {name}: property {pname!r} ({prop}) is not one elicitation can ask for; a form "
        "holds flat properties only: strings (format email, uri, date, date-time), numbers, integers, "
        "booleans, string enums (Literal, Enum) and lists of string enums"
    )


_FORMS: dict[Any, _Form] = {}


def form(response_type: Any) -> _Form:
    """The :class:`_Form` of ``response_type`` (made once per hashable type)."""
    try:
        found = _FORMS.get(response_type)
    except TypeError:  # a list of choices: not hashable
        return _Form(response_type)
    if found is None:
        found = _FORMS[response_type] = _Form(response_type)
    return found


def new_elicitation_id() -> str:
    import secrets

    return secrets.token_urlsafe(16)


def url_params(url: str, message: str, elicitation_id: str | None, *, legacy: bool) -> dict[str, Any]:
    """``ElicitRequestURLParams``: the 2025-11-25 shape carries ``elicitationId`` (the id
    ``notifications/elicitation/complete`` names later); 2026-07-28 has none (MRTR retries)."""
    if not isinstance(url, str) or "://" not in url:
        raise ValueError(f"elicit_url: url must be an absolute URL (https://…), not {url!r}")
    params: dict[str, Any] = {"mode": "url", "message": message, "url": url}
    if legacy:
        params["elicitationId"] = elicitation_id
    return params
