"""``completion/complete``: the user's completer, or values of Literal/Enum parameters."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from .._errors import InvalidParams

if TYPE_CHECKING:
    from ._server import Server

MAX_VALUES = 100  # spec: at most 100 values per response


async def complete(server: Server, params: dict[str, Any]) -> dict[str, Any]:
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict) or not isinstance(argument.get("name"), str):
        raise InvalidParams('Invalid params: completion/complete needs "ref" and "argument": {"name", "value"}')
    value = argument.get("value") if isinstance(argument.get("value"), str) else ""
    context = params.get("context")
    if server._completer is not None:
        r = server._completer(ref, argument, context)
        values = await r if asyncio.iscoroutine(r) else r
        if isinstance(values, dict):
            return {"completion": values}
    else:
        values = [v for v in _choices(server, ref, argument["name"]) if v.startswith(value)]
    values = [str(v) for v in (values or [])]
    out: dict[str, Any] = {"values": values[:MAX_VALUES], "total": len(values), "hasMore": len(values) > MAX_VALUES}
    return {"completion": out}


def _choices(server: Server, ref: dict[str, Any], name: str) -> list[str]:
    sig = None
    if ref.get("type") == "ref/prompt":
        p = server._prompts.get(ref.get("name"))  # type: ignore[arg-type]
        sig = p.sig if p else None
    elif ref.get("type") == "ref/resource":
        r = server._templates.get(ref.get("uri")) or server._resources.get(ref.get("uri"))  # type: ignore[arg-type]
        sig = r.sig if r else None
    if sig is None:
        return []
    for p in sig.parameters:
        if p.name == name:
            enum = p.schema.get("enum")
            if enum is None and "$ref" in p.schema:
                enum = sig.input_schema.get("$defs", {}).get(p.schema["$ref"].rsplit("/", 1)[-1], {}).get("enum")
            return [str(v) for v in enum] if enum else []
    return []
