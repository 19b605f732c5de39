"""``completion/complete`` (spec: server/utilities/completion): the user's completer, or the
values of Literal/Enum parameters.

Contract: ``ref`` must name one of this server's prompts (``ref/prompt``) or resources /
resource templates (``ref/resource``), else -32602 (spec: "Invalid prompt name: -32602").
Without a completer, an argument typed ``Literal[...]`` or an Enum completes from its values
that start with ``argument.value``; any other argument completes to nothing. A completer
``fn(ref, argument, context)`` (sync or async; ``context`` is the request's ``context``
object or None) returns a list of values or a completion object ``{"values", "total"?,
"hasMore"?}``. An item mounted from another server (``Server.mount``) is completed by that
server's completer, with ``ref`` naming it as that server does, or from its values. The answer holds at most 100 values (spec); ``total`` counts them all and
``hasMore`` says some were left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import InvalidParams

if TYPE_CHECKING:
    from .._schema import FunctionSignature
    from ._registry import Registry

MAX_VALUES = 100  # spec: at most 100 values per response


def _isawaitable(value: Any) -> bool:
    """``inspect.isawaitable``, from asyncio's copy (loaded by then; ``inspect`` is not at start-up)."""
    import inspect

    return inspect.isawaitable(value)


async def complete(registry: Registry, params: dict[str, Any]) -> dict[str, Any]:
    """The CompleteResult for ``params`` from what ``registry`` serves (see the module docstring)."""
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
        raise InvalidParams('Invalid params: completion/complete needs "ref" and "argument": {"name", "value"}')
    sig, item = _target(registry, ref)
    value = argument.get("value") if isinstance(argument.get("value"), str) else ""
    total: Any = None
    has_more: Any = None
    completer = registry.completer
    owner = getattr(item, "owner", None)
    if owner is not None:  # mounted: its own server's completer, asked in that server's names
        completer = owner.registry.completer
        ref = {**ref, ("name" if ref.get("type") == "ref/prompt" else "uri"): item.source}
    if completer is not None:
        r = completer(ref, argument, params.get("context"))
        values = await r if _isawaitable(r) else r
        if isinstance(values, dict):
            total, has_more = values.get("total"), values.get("hasMore")
            values = values.get("values")
    else:
        values = [v for v in _choices(sig, argument["name"]) if v.startswith(str(value or ""))] if sig else []
    values = [str(v) for v in (values or [])]
    total = total if isinstance(total, int) and total >= len(values) else len(values)
    has_more = bool(has_more) or len(values) > MAX_VALUES
    return {"completion": {"values": values[:MAX_VALUES], "total": total, "hasMore": has_more}}


def _target(registry: Registry, ref: dict[str, Any]) -> tuple[FunctionSignature | None, Any]:
    """The signature ``ref`` names and its prompt or resource; -32602 when it names nothing this server has."""
    kind = ref.get("type")
    if kind == "ref/prompt":
        name = ref.get("name")
        prompt = registry.prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise InvalidParams(
                f"Invalid params: no prompt named {name!r}; call prompts/list for the prompts this server offers"
            )
        return prompt.sig, prompt
    if kind == "ref/resource":
        uri = ref.get("uri")
        res = (registry.templates.get(uri) or registry.resources.get(uri)) if isinstance(uri, str) else None
        if res is None:
            raise InvalidParams(
                f"Invalid params: no resource or resource template {uri!r}; "
                "call resources/templates/list for the templates this server offers"
            )
        return (res.sig if res.is_template else None), res
    raise InvalidParams(f'Invalid params: ref.type must be "ref/prompt" or "ref/resource", not {kind!r}')


def _choices(sig: FunctionSignature, name: str) -> list[str]:
    for p in sig.parameters:
        if p.name == name:
            return [str(v) for v in _enum(p.schema, sig.input_schema.get("$defs", {})) if v is not None]
    return []


def _enum(schema: dict[str, Any], defs: dict[str, Any]) -> list[Any]:
    if "$ref" in schema:
        schema = defs.get(schema["$ref"].rsplit("/", 1)[-1], {})
    if "enum" in schema:
        return list(schema["enum"])
    if "const" in schema:
        return [schema["const"]]
    for branch in schema.get("anyOf", ()):  # Optional[Literal[...]]: the non-null branch
        values = _enum(branch, defs)
        if values:
            return values
    return []
