"""A GET operation served as a resource or resource template (``route_map={...: "resource"}``).

The URI is the request's URL: the base URL and the path, its ``{id}`` path parameters left as
RFC 6570 variables, and the query parameters as ``{?a,b}``. Reading it makes the request (an image
answered is a blob of its media type, any other answer text); a 404 is "resource not found"
(-32002) with the API's reason, another failure an error naming the status. Operations with
header or cookie parameters, or parameter names a URI template cannot hold, stay tools.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from .._errors import MCPError, ResourceNotFound
from .._server._context import Context
from .._server._server import Server
from .._uritemplate import UriTemplate
from ._call import Caller, answer
from ._operations import Operation

_VAR = re.compile(r"[A-Za-z0-9_]+")


def resource_uri(op: Operation, base: str) -> str | None:
    """The URI (template) of ``op``, or None when it cannot be one (module docstring)."""
    uri = base.rstrip("/") + op.path
    query: list[str] = []
    for p in op.params:
        if p.location in ("header", "cookie") or not _VAR.fullmatch(p.arg):
            return None
        if p.location == "path":
            uri = uri.replace("{" + p.name + "}", "{" + p.arg + "}")
        else:
            query.append(p.arg)
    return uri + ("{?" + ",".join(query) + "}" if query else "")


def add_resource(server: Server, op: Operation, caller: Caller, base: str) -> bool:
    """Register ``op`` as a resource of ``server``; False when it cannot be one."""
    uri = resource_uri(op, base)
    if uri is None:
        return False

    async def read(ctx: Context, **arguments: Any) -> str | dict[str, Any]:
        given = {k: v for k, v in arguments.items() if v is not None}
        sent = await caller.send(op, given, ctx)
        if isinstance(sent, str):
            raise MCPError(sent)
        result = answer(op, *sent, tool=False)
        first = result.content[0] if result.content else {}
        if first.get("type") == "image":  # the image's bytes, a blob of its media type
            return {"uri": UriTemplate(uri).expand(**given), "mimeType": first["mimeType"], "blob": first["data"]}
        text = first.get("text", "")
        if result.is_error and sent[0].status_code == 404:  # the API's reason; never the request's URL,
            raise ResourceNotFound(message=str(text))  # which may carry a query credential
        if result.is_error:
            raise MCPError(str(text))
        return str(text)

    params = [inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)]
    for p in op.params:  # every variable optional: a URI may leave a query variable out
        required = p.location == "path"
        default = inspect.Parameter.empty if required else None
        params.append(inspect.Parameter(p.arg, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=str))
    read.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    read.__annotations__ = {"ctx": Context, **{p.arg: str for p in op.params}, "return": str | dict[str, Any]}
    summary = op.raw.get("summary")
    server.add_resource(
        read,
        uri,
        name=op.name,
        title=summary.strip() if isinstance(summary, str) and summary.strip() else None,
        description=op.description,
        mime_type="application/json" if op.output_schema is not None else None,
    )
    return True
