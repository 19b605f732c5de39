"""The method table: one coroutine per client request, for both eras.

Each handler is ``async def handler(server, ctx, params) -> result`` (or a plain function
returning the awaitable, raising its refusals at once: ``tools_call``); what differs by era is
read from ``ctx.rules`` (docs/project/architecture.md, step 4).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .._errors import INTERNAL_ERROR, InvalidParams, MCPError, ResourceNotFound
from .._suggest import did_you_mean
from .._versions import LOG_LEVELS
from . import _core_tasks
from ._apps import model_tools
from ._catalog_api import authorized
from ._completion import complete
from ._context import Context
from ._lifecycle import discover_result, initialize_result
from ._pagination import paginate
from ._subscriptions import listen, subscribe, unsubscribe, uri_param
from ._tasks import call_tool, tasks_cancel, tasks_get, tasks_update

if TYPE_CHECKING:
    from .._versions import Rules
    from ._server import Server
    from ._tools import Tool

Params = dict[str, Any]
Handler = Callable[["Server", Context, Params], Awaitable[dict[str, Any]]]


def lister(capability: str, method: str, kind: str, key: str) -> Handler:
    """A paginated list handler (tools/list, resources/list …): one page of the definitions of
    the registry's ``kind``, cut to the request's version, with an opaque cursor to the next."""

    async def handler(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
        rules = server.announced(ctx.rules, ctx.session, capability, method)
        registry = server.registry
        items = list(registry.table(kind).values())
        private = private_listing(server)
        if private:  # what this caller's token may use, only: an answer for this caller alone
            items = authorized(registry, kind, items)
        if key == "tools" and (registry.extensions or registry.catalog):  # MCP Apps may hide tools (its own, mounted)
            items = model_tools(ctx, items)
        page, nxt = paginate(items, params, server.page_size, key)
        out: dict[str, Any] = {key: [item.definition(rules) for item in page]}
        if nxt is not None:
            out["nextCursor"] = nxt
        if private and rules.cache_hints:
            out["cacheScope"] = "private"
        return out

    return handler


def private_listing(server: Server) -> bool:
    """Whether a list result depends on the caller (items hidden by the caller's token scopes):
    then it is marked ``cacheScope: "private"`` (2026-07-28) and is never shared between callers."""
    return server.hide_unauthorized and bool(server.registry.scopes)


# ---------------------------------------------------------------------- lifecycle & discovery
def _check_available(server: Server) -> None:
    reason = server.unavailable()
    if reason is not None:
        raise MCPError(reason, INTERNAL_ERROR)


async def initialize(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
    assert ctx.rules is not None
    _check_available(server)
    return initialize_result(server, ctx.rules, ctx.session.state)


async def discover(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
    """``server/discover`` (2026-07-28, MUST): versions, capabilities, instructions; the era
    decorations add resultType, ttlMs, cacheScope and _meta serverInfo."""
    assert ctx.rules is not None
    _check_available(server)
    return discover_result(server, ctx.rules)


async def ping(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
    return {}


async def set_level(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
    level = params.get("level")
    if level not in LOG_LEVELS:
        raise InvalidParams(f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}, got {level!r}")
    ctx.session.state["log_level"] = level
    return {}


# ---------------------------------------------------------------------- tools
def tools_call(server: Server, ctx: Context, params: Params) -> Awaitable[dict[str, Any]]:
    """A plain function returning the call to await; its refusals (capability, unknown tool)
    are raised at once."""
    rules = server.announced(ctx.rules, ctx.session, "tools", "tools/call")
    tool = _tool(server, params)
    if called_plainly(tool, params, rules):
        return tool.call(params.get("arguments"), ctx, rules)
    if rules.tasks_extension:  # a tool with task support: it may answer a task handle
        return call_tool(tool, params.get("arguments"), ctx, rules)
    return _core_tasks.call_tool(tool, params, ctx, rules)  # 2025-11-25: a task asked for, or a "required" tool


def called_plainly(tool: Tool, params: Params, rules: Rules) -> bool:
    """Whether :func:`tools_call` comes down to ``tool.call`` with nothing of the tasks' around
    it: the call cannot become a task (2025-11-25's core tasks, the 2026-07-28 extension) and
    is not refused for want of one. A proxy's relay asks it too (``_gateway._forwarded``)."""
    support = tool.task_support
    if rules.tasks_extension and support != "forbidden":
        return False  # it may become a task
    if "task" in params:
        return not rules.core_tasks  # a task asked for (ignored before 2025-11-25)
    return not (rules.core_tasks and support == "required")  # refused: it runs only as a task


def no_rounds(method: str) -> MCPError:
    """What InputRequired from a request without rounds becomes (cannot happen: Context asks through them)."""
    return MCPError(f"{method} cannot ask the client for input", INTERNAL_ERROR)


def _tool(server: Server, params: Params) -> Tool:
    """The tool ``params`` name, or -32602."""
    name = params.get("name")
    tools = server.registry.tools
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is None:
        near = did_you_mean(name, tools) if isinstance(name, str) else ""
        raise InvalidParams(f"Unknown tool: {name!r}{near}; call tools/list for the tools this server offers")
    return tool


def by_era(core: Handler, extension: Handler) -> Handler:
    """The tasks/* method of 2025-11-25's core tasks or of the 2026-07-28 extension, by the request's version."""

    async def handler(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
        rules = ctx.rules
        return await (core if rules is not None and rules.core_tasks else extension)(server, ctx, params)

    return handler


# ---------------------------------------------------------------------- resources
async def resources_read(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
    rules = server.announced(ctx.rules, ctx.session, "resources", "resources/read")
    uri = uri_param(params)
    found = server.find_resource(uri)
    if found is None:
        # legacy -32002; 2026-07-28 -32602 with data.uri (spec-notes §6)
        raise ResourceNotFound(uri, code=rules.resource_not_found_code)
    resource, kwargs = found
    contents = await resource.read(uri, kwargs, ctx)
    if not rules.titles:  # ResourceContents._meta: 2025-06-18+ (MCP Apps views carry _meta.ui there)
        contents = [{k: v for k, v in c.items() if k != "_meta"} if "_meta" in c else c for c in contents]
    result: dict[str, Any] = {"contents": contents}
    if rules.cache_hints:
        if resource.ttl_ms is not None:
            result["ttlMs"] = resource.ttl_ms
        if resource.cache_scope is not None:
            result["cacheScope"] = resource.cache_scope
    return result


# ---------------------------------------------------------------------- prompts & completion
async def prompts_get(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
    rules = server.announced(ctx.rules, ctx.session, "prompts", "prompts/get")
    name = params.get("name")
    prompt = server.registry.prompts.get(name) if isinstance(name, str) else None
    if prompt is None:
        raise InvalidParams(f"Unknown prompt: {name!r}; call prompts/list for the prompts this server offers")
    links = prompt.links  # mounted under a namespace: links rewritten, then in the era's shape
    made = await prompt.render(params.get("arguments"), ctx, rules if links is None else links.made_under(rules))
    result: dict[str, Any] = made if links is None else links.result(made, rules)
    return result


async def completion(server: Server, ctx: Context, params: Params) -> dict[str, Any]:
    rules = ctx.rules
    if rules is not None and rules.completions_capability:  # 2024-11-05 had no such capability
        server.announced(ctx.rules, ctx.session, "completions", "completion/complete")
    return await complete(server.registry, params)


METHODS = {
    "initialize": initialize,
    "server/discover": discover,
    "ping": ping,
    "logging/setLevel": set_level,
    "tools/list": lister("tools", "tools/list", "tools", "tools"),
    "tools/call": tools_call,
    "resources/list": lister("resources", "resources/list", "resources", "resources"),
    "resources/templates/list": lister("resources", "resources/templates/list", "templates", "resourceTemplates"),
    "resources/read": resources_read,
    "resources/subscribe": subscribe,
    "resources/unsubscribe": unsubscribe,
    "subscriptions/listen": listen,
    "prompts/list": lister("prompts", "prompts/list", "prompts", "prompts"),
    "prompts/get": prompts_get,
    "completion/complete": completion,
    "tasks/get": by_era(_core_tasks.tasks_get, tasks_get),  # tasks: 2025-11-25 core, 2026-07-28 extension
    "tasks/cancel": by_era(_core_tasks.tasks_cancel, tasks_cancel),
    "tasks/update": tasks_update,  # the extension only
    "tasks/result": _core_tasks.tasks_result,  # core tasks only
    "tasks/list": _core_tasks.tasks_list,
}
