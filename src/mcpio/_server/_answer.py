"""The one synchronous answer path: a request that needs no awaiting, answered on the caller's stack.

A ``tools/call`` of a sync tool that runs on the event loop (``Tool.on_loop``), takes no Context,
is not a task and carries no ``requestState`` (its state is verified by the request's Context:
spec 2026-07-28 MRTR), on a plain server (``Server.plain``), cannot wait (:func:`sync_tool`). A
progress token may come with it: such a tool has no Context to report progress with, and no
heartbeat (``Tool.call``'s) can be sent while it holds the loop, so the engine would answer it
with no progress either (``Tool.call_sync``). :func:`answer` runs it and returns its encoded response
(``_session.response_frame``); None: the request needs the engine (``Server._on_request``),
which gives the same answer. Every route goes through it (docs/project/architecture.md, step 4:
a Session's ``answer``, and a 2026-07-28 POST answered with no session at all).

:func:`relayed` is the Session's ``relay``: under the same conditions (:func:`plain_tool`), a
call of a tool that forwards it by callback (a proxy's) is sent on with no task of its own; its
progress token goes upstream with it, and the upstream's progress comes back by callback too
(``_gateway._forwarded``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._session import response_frame
from .._versions import RULES
from ._mrtr import InputRequired, outcome

if TYPE_CHECKING:
    from .._protocol._events import RequestReceived
    from .._session import Relayed, Session
    from ._server import Server
    from ._tools import Tool


def plain_tool(server: Server, method: Any, params: Any) -> Tool | None:
    """The tool a request ``method``/``params`` calls when nothing of the engine's comes between
    (a ``tools/call`` on a plain server, not a task, no ``requestState``; a progress token may
    come with it: the module docstring), else None."""
    if method != "tools/call" or not server.plain or type(params) is not dict:
        return None
    if "task" in params or "requestState" in params:
        return None
    name = params.get("name")
    return server.registry.tools.get(name) if type(name) is str else None


def sync_tool(server: Server, method: Any, params: Any) -> Tool | None:
    """The tool a request ``method``/``params`` calls when :func:`answer` may answer it (module
    docstring), else None."""
    tool = plain_tool(server, method, params)
    on_loop = tool.on_loop if tool is not None else None
    return tool if on_loop is not None and on_loop.inline else None


def relayed(server: Server, session: Session, ev: RequestReceived) -> Relayed | None:
    """The Session's ``relay``: request ``ev`` forwarded by the tool it calls, when that tool
    forwards by callback (``Tool.relay``: a proxy's, ``_gateway._relay``) and nothing of the
    engine's comes between (:func:`plain_tool`); None: serve it on the engine."""
    tool = plain_tool(server, ev.method, ev.params)
    relay = tool.relay if tool is not None else None
    return None if relay is None else relay(server, session, ev)


def answer(server: Server, session: Session, ev: RequestReceived) -> bytes | None:
    """The encoded response to request ``ev`` when it needs no awaiting (:func:`sync_tool`), as
    ``Server._on_request`` would give it; None: serve it on the engine."""
    tool = sync_tool(server, ev.method, ev.params)
    return None if tool is None else answer_tool(server, session, ev, tool)


def answer_tool(server: Server, session: Session, ev: RequestReceived, tool: Tool) -> bytes:
    """:func:`answer` of a request known to call ``tool`` (``sync_tool`` gave it), as
    ``Server._on_request`` gives it: the capability gate, ``Tool.call_sync``, the era's decorations."""
    rules = RULES[ev.version] if ev.version is not None else None
    try:
        announced = server.announced(rules, session, "tools", "tools/call")
        params: Any = ev.params  # a dict: sync_tool
        pending = None
        try:
            result = tool.call_sync(params.get("arguments"), server, session, announced)
        except InputRequired as asked:
            result, pending = None, asked
        result = outcome(server, announced, None, "tools/call", params, result, pending)
    except Exception as exc:
        return response_frame(ev.id, ev.method, None, exc, session.expose_errors)
    return response_frame(ev.id, ev.method, result, None, session.expose_errors)
