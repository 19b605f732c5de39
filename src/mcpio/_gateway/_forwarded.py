"""A tool of the upstream as the proxy serves it (:class:`ForwardedTool`): its definition as the
upstream lists it, its calls forwarded one of two ways, to one answer.

* **Relayed** (:meth:`ForwardedTool.relay`, the Session's ``relay``): a call with nothing to
  carry but itself and its progress token (``_answer.plain_tool``: no task, none possible
  (``called_plainly``), no ``requestState``; the upstream connected; no time limit; no
  heartbeat) is written upstream on the stack that read it, and the upstream's answer ends it
  on the stack that read that (``Client.send_nowait``, ``Session.settle``): no task, no
  coroutine. The upstream's progress for it comes back by callback too, and goes to the client
  as the Context reports it. What the upstream asks or logs meanwhile reaches the call's client
  as for an awaited call (the call is a caller, ``Upstream.callers``): a 2026-07-28 client is
  asked in rounds of its call, so at the first question a :class:`~._rounds.Flight` takes the
  upstream call over (``_Relaying.asking``), the call is answered with the round, and the
  client's retry finds the flight, as it finds an awaited call's. An answer that needs more
  (input_required rounds, a task to follow) goes on in a task of the upstream client's; the
  client cancelling the call cancels it upstream.
* **Awaited** (the tool's handler, through the engine and ``Upstream.forward``): every other
  call (tasks, heartbeats, a 2026-07-28 client's retries, an upstream to open first, middleware).

Both make the answer from the upstream's result with :func:`tool_result` and ``Tool.outcome``,
and fail as ``Upstream.failure`` says.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .. import _log
from .._client._opening import ALSO_DECLARED
from .._content import ToolResult
from .._errors import HeaderMismatch, MCPError
from .._server._apps import declare
from .._server._context import Context, request_context
from .._server._handlers import called_plainly
from .._server._mrtr import ROUND_TIMEOUT, InputRequired, finished, round_timeout_checked
from .._server._tools import Tool
from .._versions import APPS_HOST, RULES, TASKS_EXTENSION, Rules
from ._loops import at_home

if TYPE_CHECKING:
    import asyncio

    from .._client._client import Client
    from .._protocol._events import RequestReceived
    from .._server._server import Server
    from .._session import Relayed, Session
    from ._proxy import Upstream
    from ._roots import RootsRelay
    from ._rounds import Flight

log = _log.logger("mcpio.gateway", globals())

#: The caller whose upstream call runs in this task. What the upstream asks during a call is
#: asked in the call's own task when the ask is part of the call's answer (a 2026-07-28
#: upstream's ``input_required`` rounds), or in a copy of its context when the ask came on the
#: call's own response stream (a legacy Streamable HTTP upstream: the Session serves a Related
#: request so), so it reaches the client that made that call, whatever else is in flight. A
#: legacy stdio upstream's request carries no link to its call: it goes to the only call in
#: flight, or the most recent one when there are several.
_CALLER: contextvars.ContextVar[Any] = contextvars.ContextVar("mcpio_proxy_caller", default=None)


class Flights(dict[str, "Flight"]):
    """An upstream's calls that asked their client something (``_rounds.Flight``), by id."""

    def __init__(self, round_timeout: float = ROUND_TIMEOUT) -> None:
        super().__init__()
        self.round_timeout = round_timeout_checked(round_timeout)  # how long each waits for its client's next round


class ForwardedTool(Tool):
    """A tool of the upstream: its definition as the upstream lists it, its calls forwarded."""

    upstream: Upstream
    upstream_name: str  # its name upstream (served under another when mounted)

    def relay(self, server: Server, session: Session, ev: RequestReceived) -> Relayed | None:
        """Forward call ``ev`` by callback (module docstring), or None: the engine serves it."""
        rules = RULES[ev.version] if ev.version is not None else None
        if rules is None:
            return None
        # Served the awaited way: a call under a timeout, one with anything of the tasks around it,
        # and a tool the upstream runs only as a task (called as a task upstream, in any era:
        # _gateway._tasks). A 2026-07-28 client's retry (its requestState) is not plain_tool's.
        plain = called_plainly(self, ev.params, rules)  # type: ignore[arg-type]  # a dict
        if self.timeout is not None or self.task_support == "required" or not plain:
            return None
        meta = ev.params.get("_meta")  # type: ignore[union-attr]  # a dict
        if type(meta) is dict and "progressToken" in meta and self.beats(server):
            return None  # the heartbeats of a call with a progress token are the engine's (Tool.call)
        upstream = self.upstream
        client = upstream.live()
        if client is None:
            return None  # opening it needs awaiting
        try:
            server.announced(rules, session, "tools", "tools/call")
            arguments = self.sig.bind(ev.params.get("arguments"))["arguments"]  # type: ignore[union-attr]  # a dict
        except Exception:
            return None  # refused: the engine's answer says why
        relaying = _Relaying(self, server, session, ev, rules, client, arguments)
        return None if relaying.cancel is None else session.relayed(relaying.cancelled)


class _Relaying:
    """One relayed call (:meth:`ForwardedTool.relay`), from the upstream request written to the
    client's request ended, with its two callbacks: the upstream's answer, and the cancel of the
    call's ``Relayed``. Nothing here refers back to that ``Relayed``: no cycle to collect."""

    __slots__ = (
        "arguments",
        "cancel",
        "client",
        "ctx",
        "ended",
        "ev",
        "flight",
        "held",
        "rules",
        "server",
        "session",
        "tool",
    )

    def __init__(
        self,
        tool: ForwardedTool,
        server: Server,
        session: Session,
        ev: RequestReceived,
        rules: Rules,
        client: Client,
        arguments: dict[str, Any],
    ) -> None:
        self.tool, self.server, self.session, self.ev, self.rules = tool, server, session, ev, rules
        self.client, self.arguments = client, arguments
        self.ctx = ctx = request_context(server, session, ev, rules, ev.params)  # type: ignore[arg-type]
        self.flight: Flight | None = None  # the upstream asked, the client's era has rounds (asking)
        tool.upstream.callers.append(self)
        self.held = True  # among the upstream's callers
        self.ended = False  # answered, or cancelled
        _CALLER.set(self)  # in this request's own context (Session._start): what goes on upstream runs in it
        if (declared := declared_by(ctx)) is not None:
            ALSO_DECLARED.set(declared)  # the same context: the request sent below declares them
        # what cancels the request upstream now; None: not sent, the transport would make it wait
        self.cancel: Callable[[], Any] | None = client.send_nowait(
            "tools/call",
            {"name": tool.upstream_name, "arguments": arguments},
            self.answered,
            None if ctx.progress_token is None else self.progressed,
        )
        if self.cancel is None:
            self.release()

    def release(self) -> None:
        if self.held:
            self.held = False
            self.tool.upstream.callers.remove(self)

    def asking(self) -> Context | Flight:
        """Whom the upstream's request during this call is asked of: the call's client, through
        its Context; for a client whose era answers only through ``input_required`` rounds
        (2026-07-28), a :class:`Flight` that takes the upstream call over from the first request
        on, as the awaited way runs it (``Upstream.forward``): the call is answered with the
        round at once, and the client's retry finds the flight (``_rounds``)."""
        if self.flight is None and self.rules.input_required and not self.ended and self.cancel is not None:
            import asyncio

            from ._rounds import Flight, ask_client

            upstream_cancel = self.cancel

            def drop() -> None:  # the flight ended before the upstream answered: so does the call
                self.release()
                upstream_cancel()

            flight = self.flight = Flight.adopting(self.tool.upstream.flights, drop)
            first = asyncio.get_running_loop().create_task(flight.run(self.ctx, ask_client))
            self.cancel = first.cancel  # the client cancelling the call cancels this run (and so the flight)
            first.add_done_callback(self.rounded)
        return self.ctx if self.flight is None else self.flight

    def end(self, result: Any, exc: BaseException | None) -> None:
        """The client's call answered with ``result``, or with what ``exc`` is (the engine's way:
        ``_mrtr.finished``: an InputRequired is the call's round; the era's decorations)."""
        if not self.ended:  # once: a cancel may come between the awaited way's end and its callback
            self.ended = True
            if exc is None or isinstance(exc, InputRequired):
                params: Any = self.ev.params  # a dict (relay)
                try:
                    result, exc = finished(self.server, self.ctx, "tools/call", params, result, exc), None
                except Exception as failed:  # as the engine answers it
                    result, exc = None, failed
            self.session.settle(self.ev, result, exc)

    def answered(self, raw: Any, exc: BaseException | None) -> None:
        """The upstream's answer: the upstream's result ``raw``, or ``exc``."""
        failure = None if exc is None else self.tool.upstream.failure(self.client, exc)
        flight = self.flight
        if flight is not None:  # the flight has the call: its outcome is the flight's (as _call sets it)
            self.release()
            if not flight.result.done():
                if failure is None:
                    flight.result.set_result(raw)
                else:
                    flight.result.set_exception(failure)
            return
        if self.ended:  # cancelled first: it ended there
            return
        self.release()
        if isinstance(exc, HeaderMismatch):  # refused before it ran: the awaited way lists the
            # tools again and calls once more (Client.call_tool), in a task of its own
            import asyncio

            from .._session import task_outcome

            awaited = asyncio.get_running_loop().create_task(self.tool.call(self.arguments, self.ctx, self.rules))
            self.cancel = awaited.cancel
            awaited.add_done_callback(lambda task: None if task.cancelled() else self.end(*task_outcome(task)))
            return
        self.end(*self.outcome(raw, failure))

    def outcome(self, raw: Any, failure: BaseException | None) -> tuple[Any, BaseException | None]:
        """The call's answer, (result, None) or (None, the JSON-RPC error's exception), from the
        upstream's result ``raw`` or the call's ``failure``, as ``Tool.call`` makes it."""
        try:
            try:
                if failure is not None:
                    raise failure
                value, error = tool_result(raw), None
            except Exception as exc:  # as Tool.call gets the awaited call's
                value, error = None, exc
            return self.tool.outcome(value, error, self.server, self.session, self.rules), None
        except BaseException as raised:  # an MCPError: the JSON-RPC error (Tool.outcome)
            return None, raised

    def rounded(self, run: asyncio.Task[Any]) -> None:
        """The flight's first run ended (:meth:`asking`): the call's round, or its answer."""
        if not run.cancelled():
            from .._session import task_outcome

            raw, exc = task_outcome(run)
            self.end(*((None, exc) if isinstance(exc, InputRequired) else self.outcome(raw, exc)))

    def progressed(self, progress: float, total: float | None, message: str | None) -> Awaitable[None]:
        """The upstream's progress for the call: to the call's client, under its own token (the
        Context drops it once the call has ended, and whatever does not go up); a flood of it
        bounded as every async ``on_progress`` is (``_client._handlers.progress_deliverer``)."""
        return self.ctx.report_progress(progress, total, message)

    def cancelled(self) -> None:
        """The client cancelled the call, or its session ended: so does the request upstream."""
        import asyncio

        if self.ended:
            return
        self.release()
        if self.cancel is not None:
            self.cancel()
        self.end(None, asyncio.CancelledError())


def tool_result(raw: dict[str, Any]) -> ToolResult:
    """The proxy's result for the upstream's CallToolResult ``raw``: its content, structured
    content, isError and ``_meta`` (but the protocol's own keys, which are the proxy's to set)."""
    return ToolResult(
        content=raw.get("content") or [],
        structured_content=raw.get("structuredContent"),
        is_error=bool(raw.get("isError")),
        meta=upstream_meta(raw.get("_meta")),
    )


def upstream_meta(meta: Any) -> dict[str, Any] | None:
    """What of the upstream's result ``_meta`` the proxy's result carries: all of it but the
    protocol's own keys (``io.modelcontextprotocol/``: serverInfo and the like), which are the
    proxy's to set for its own client's era; None when nothing is left."""
    kept = {k: v for k, v in meta.items() if not k.startswith("io.modelcontextprotocol/")} if type(meta) is dict else {}
    return kept or None


def chosen_tools(target: Any, listed: list[Any]) -> list[Any]:
    """The upstream's ``listed`` tools its ``mcpServers`` entry chooses (``ServerSpec.chooses``);
    every tool of another target."""
    chooses = getattr(target, "chooses", None)
    if chooses is None:
        return listed
    return [t for t in listed if not isinstance(t, dict) or chooses(t.get("name"))]


def as_host(client_options: dict[str, Any]) -> dict[str, Any]:
    """The upstream Client's options: MCP Apps declared as a host declares it, next to the
    owner's extensions, so that the upstream lists its app-only tools too (a server hides them
    from other clients, ext-apps §Visibility); the proxy, declaring the extension itself once
    a tool links a view (:func:`forwarded_tool`), lists them only to its own clients that
    declared it (``_server._apps.model_tools``). A request forwarded for a client declares that
    client's extensions too where it can (:func:`declared_by`)."""
    return {**client_options, "extensions": {**APPS_HOST, **(client_options.get("extensions") or {})}}


def declared_by(ctx: Context | None) -> dict[str, Any] | None:
    """The extensions the proxy's client of ``ctx`` declared (each one whose settings are an
    object), but tasks (the proxy runs its upstream's tasks itself: ``_tasks``), or None: what a
    request forwarded for it declares upstream over the connection's own (``ALSO_DECLARED``). On
    a 2026-07-28 connection each request declares its client's capabilities, so the upstream sees
    the caller's, as without the proxy (its ``ctx.client_extension``, a -32021 it may answer); a
    legacy connection declares once, for every client (``Server.proxy(extensions=...)``)."""
    declared = ctx.client_capabilities.get("extensions") if ctx is not None else None
    if not isinstance(declared, dict) or not declared:
        return None
    found = {k: v for k, v in declared.items() if isinstance(v, dict) and k != TASKS_EXTENSION}
    return found or None


def forwarded_tool(upstream: Upstream, t: Any, client: Client) -> Tool:
    """The proxy's tool for the upstream's tool ``t`` (as ``client`` listed it)."""
    from .._client._apps import view_uri
    from ._tasks import follower, task_options  # asyncio is loaded by now (see _proxy.log)

    name = t["name"]

    async def call(arguments: dict[str, Any], ctx: Context) -> ToolResult:
        async def progress(progress: float, total: float | None, message: str | None) -> None:
            await at_home(ctx, ctx.report_progress(progress, total, message))

        def go(client: Client) -> Awaitable[Any]:  # the call itself: no coroutine of ours around it
            # call_tool: a tool the upstream runs as a task is called as one and followed to its result
            return client.call_tool(
                name,
                arguments,
                timeout=None,
                max_timeout=None,
                on_progress=progress if ctx.progress_token is not None or ctx.task_id is not None else None,
                on_task_status=follower(ctx, _CALLER.get),  # the proxy's task mirrors the upstream's (_tasks)
                task=ctx.task_id is not None,  # a task of the proxy's: one upstream too, when it can
            )

        return tool_result(await upstream.forward(ctx, go))

    made = Tool.from_schema(
        call,
        name=name,
        inline=True,  # the forwarding never blocks the loop: not watched (_tools.invoke)
        **task_options(client, t),  # task_support (and task_after): as the upstream runs tasks
        input_schema=t.get("inputSchema") or {"type": "object"},
        output_schema=t.get("outputSchema"),
        description=t.get("description"),
        title=t.get("title"),
        annotations=t.get("annotations"),
        icons=t.get("icons"),
        meta=t.get("_meta"),
    )
    if view_uri(t) is not None:  # an MCP App's tool: the proxy serves the extension too
        declare(upstream.server)
    made.__class__ = ForwardedTool
    made.upstream = upstream  # type: ignore[attr-defined]  # whose mirror it belongs to (Server.replace_own)
    made.upstream_name = name  # type: ignore[attr-defined]
    return made


class AskingClients:
    """The part of an ``Upstream`` that forwards what the upstream asks or logs during a call to
    the client that made the call (``Upstream.callers``, :data:`_CALLER`)."""

    if TYPE_CHECKING:
        label: str
        callers: list[Context | Flight | _Relaying]
        relay: RootsRelay

    def _caller(self) -> Context | Flight | _Relaying | None:
        """The caller the upstream's current request or log message belongs to (see _CALLER)."""
        caller = _CALLER.get()
        if caller is not None and caller in self.callers:
            return caller  # type: ignore[no-any-return]
        return self.callers[-1] if self.callers else None

    async def _ask(self, method: str, params: dict[str, Any]) -> Any:
        """The upstream asks ``method`` during a call: asked of the client that made the call
        (:meth:`_caller`), in its era's way."""
        from ._rounds import Flight, ask_client

        caller = self._caller()
        if caller is None:
            raise MCPError(f"{method} from upstream {self.label!r} outside any request: no client to forward it to")
        if isinstance(caller, _Relaying):
            caller = caller.asking()
        if isinstance(caller, Flight):
            return await caller.ask(method, params)
        return await at_home(caller, ask_client(caller, method, params, None))

    async def _sampling(self, params: dict[str, Any]) -> Any:
        return await self._ask("sampling/createMessage", params)

    async def _elicitation(self, params: dict[str, Any]) -> Any:
        return await self._ask("elicitation/create", params)

    async def _roots(self) -> Any:
        try:  # outside any call: the roots of the proxy's sole client, or none (_roots)
            return await (self._ask("roots/list", {}) if self.callers else self.relay.listed())
        except MCPError:
            return []

    async def _on_log(self, params: dict[str, Any]) -> None:
        from ._rounds import Flight

        caller = self._caller()
        if isinstance(caller, _Relaying):
            caller = caller.ctx
        elif isinstance(caller, Flight):  # a 2026-07-28 client's call: its round going on, if any
            caller = caller.ctx if caller.running else None
        if isinstance(caller, Context):
            with contextlib.suppress(Exception):
                level, data = str(params.get("level", "info")), params.get("data")
                await at_home(caller, caller.log(level, data, logger=params.get("logger")))
                return
        log.info("upstream %r: %s", self.label, params.get("data"))

    def _on_stderr(self, line: str) -> None:
        log.info("upstream %r stderr: %s", self.label, line.rstrip())
