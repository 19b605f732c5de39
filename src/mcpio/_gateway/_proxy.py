"""``Server.proxy(target)``: a Server that serves what another MCP server serves.

The upstream is any target ``Client`` opens (a URL, a command line, a ``.py`` file, a
host-config entry as a :class:`~mcpio.ServerSpec`). Its connection opens when the proxy starts
serving (the proxy's lifespan), not when it is made, and again on the first request after it
died; a call in flight when it dies gets a JSON-RPC error saying so, never a hang. It is one
event loop's (``Upstream.claim``): another loop serving the proxy has its requests run there (``_loops``).

What passes through: the upstream's tools, prompts, resources and templates (mirrored into
the proxy's own tables, again on every ``list_changed`` it sends, which the proxy's clients
then get), calls, reads, prompts, completion, ``resources/updated``; progress of a call back to
the client that made it; tasks in either era (the upstream's task status as the proxy's task's:
``_tasks``); cancellation (a cancelled call cancels the upstream request); sampling, elicitation
and roots requests the upstream sends during a call, forwarded to the client that made the call
(with a legacy stdio upstream, the most recent one when several calls are in flight: see
_CALLER) and answered back, and outside a call the roots of the proxy's sole client (``_roots``);
the upstream's log messages to the call's client, else to the proxy's log; a subprocess
upstream's stderr to the proxy's log; the extensions it declares, their custom requests and
notifications (``_custom``). Security: the proxy's own clients' credentials never go
upstream (the spec forbids token passthrough); it uses only what ``client_options`` give it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .. import _log
from .._client._opening import ALSO_DECLARED, send_first
from .._client._target import endpoint_hint
from .._errors import INTERNAL_ERROR, METHOD_NOT_FOUND, ConnectionClosed, MCPError, TransportError
from .._host._config import ServerSpec
from .._server._context import Context
from .._server._mrtr import ROUND_TIMEOUT
from .._server._server import Server
from .._server._stdio import settle
from .._shown import shown
from ._custom import CustomForwarding, require_scopes
from ._forwarded import _CALLER, AskingClients, Flights, _Relaying, as_host, declared_by
from ._items import ForwardedResource
from ._loops import handed, running_loop
from ._mirror import Mirroring, OneAtATime, reason
from ._roots import RootsRelay

if TYPE_CHECKING:
    import asyncio

    from .._client._client import Client
    from .._server._extensions import Extension
    from .._server._resources import Resource
    from ._rounds import Flight

# asyncio, the client and logging are imported when an upstream starts, not with this module: a
# gateway (``from_config``) is made, and answers initialize, before asyncio loads (_server._stdio).
log = _log.logger("mcpio.gateway", globals())

_CLAIMING = threading.Lock()  # one event loop at a time claims an upstream connection (Upstream.claim)

#: What an upstream says of itself (its serverInfo, as the proxy's Server attributes, and instructions)
_SAID = ("name", "version", "title", "description", "website_url", "icons", "instructions")


class UpstreamError(MCPError):
    """The upstream server could not be reached or went away during the request."""


class Upstream(CustomForwarding, AskingClients, Mirroring):
    """One upstream connection: opened on demand, re-opened after it dies, mirrored into ``server``."""

    def __init__(
        self,
        server: Server,
        target: Any,
        label: str,
        client_options: dict[str, Any],
        process: Any = None,
        round_timeout: float = ROUND_TIMEOUT,
        named: bool = True,
    ) -> None:
        self.server = server
        self.target = target
        self.label = label
        self.client_options = as_host(client_options)  # MCP Apps declared upstream (_forwarded.as_host)
        self.process = process  # started already (ServerSpec.start): the first connection adopts it
        self.client: Client | None = None
        self.owner: asyncio.AbstractEventLoop | None = None  # whose connection it is (claim)
        self.stopping: asyncio.AbstractEventLoop | None = None  # the loop closing it (aclose): not its again
        self.error: BaseException | None = None  # why the last connection attempt failed
        self._lock: asyncio.Lock | None = None  # made by the first connect, in the event loop
        # The callers of the requests being forwarded, oldest first: a Context, the Flight of a
        # 2026-07-28 client's call (its Context changes with every round), or a relayed call.
        self.callers: list[Context | Flight | _Relaying] = []
        self.flights = Flights(getattr(target, "round_timeout", None) or round_timeout)  # a ServerSpec's own first
        self._background: set[asyncio.Task[Any]] = set()
        self._told = OneAtATime(self.spawn)  # its list_changed and resources/updated, handled (_mirror)
        self._listed: dict[str, Any] = {}  # kind -> what the upstream listed when last mirrored
        self.extensions: list[Extension] = []  # what it declares, the proxy announces (_custom)
        self._watched: dict[str, int] = {}  # upstream URI -> the proxy's subscribers to it
        self.started = False
        self.start_ms: float | None = None  # how long the first start took (connect and mirror)
        self._first: asyncio.Task[None] | None = None  # the first start (begin)
        # What the proxy says of itself until the upstream says it (_adopt); its name when not named
        self._said = {attr: getattr(server, attr) for attr in _SAID if not (named and attr == "name")}
        self.relay = RootsRelay(self)  # the roots it sees outside a call: the proxy's sole client's
        send_first(process, self._options())  # its first request, now: answered while asyncio loads

    def _options(self) -> dict[str, Any]:  # the upstream Client's (but process)
        handlers = {"sampling": self._sampling, "elicitation": self._elicitation, "roots": self._roots}
        options = {**handlers, "on_log": self._on_log, "on_notification": self._on_notification, **self.client_options}
        if not _is_url(self.target) and not (isinstance(self.target, ServerSpec) and self.target.is_remote):
            options.setdefault("on_stderr", self._on_stderr)
        return options

    # ------------------------------------------------------------ connection
    def live(self) -> Client | None:
        """The upstream client while its connection is open and owned by the caller's event loop,
        else None (:meth:`connect` opens one, or says why it cannot)."""
        client = self.client
        return client if client is not None and _alive(client) and self.owner is running_loop() else None

    def claim(self) -> bool:
        """Whether the connection is the caller's event loop's (it owns it; or none did, and now it does)."""
        import asyncio

        here = asyncio.get_running_loop()
        with _CLAIMING:
            owner = self.owner
            if (owner is None or owner.is_closed()) and here is not self.stopping:  # a closed one's client went with it
                if owner is not None:
                    self.client, self._lock = None, None
                self.owner = owner = here
        return owner is here

    async def connect(self) -> Client:
        """The open upstream client, opening it (and mirroring its catalog) when there is none."""
        client = self.live()
        if client is not None:
            return client
        import asyncio

        from .._client._client import Client

        if not self.claim():  # another loop holds it (a request is handed there), or this one stops it
            raise UpstreamError(f"upstream {self.label!r} is not connected on this event loop", INTERNAL_ERROR)
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            client = self.live()
            if client is not None:
                return client
            if self.client is not None:
                await self._drop()
            options = self._options()
            if self.process is not None:  # this connection only: a later one starts its own
                options["process"], self.process = self.process, None
            client = None
            try:  # making the client may fail too (an entry with no command: ConfigError): its error is kept
                client = (  # unattended: nobody watches a proxy's stderr for a login URL
                    self.target.client(unattended=True, **options)
                    if isinstance(self.target, ServerSpec)
                    else Client(self.target, **options)
                )
                await client.connect()
                await self._mirror(client)
                for uri in list(self._watched):  # a new connection: the subscriptions held are renewed
                    await self._renew(client, uri)
            except BaseException as exc:
                self.error = exc
                if client is not None:
                    with contextlib.suppress(Exception):
                        await client.aclose()
                raise
            self.client, self.error = client, None
            self._adopt(client)
            self.learn_extensions(client)
            return client

    def _adopt(self, client: Client) -> None:
        """Say what the upstream says of itself (a bridge is transparent: a host shows its
        ``serverInfo`` and gives the model its ``instructions``), but what the proxy's owner set:
        a name given to ``proxy()``, a field set on the proxy since."""
        info = client.server_info
        said = {**info, "website_url": info.get("websiteUrl"), "instructions": client.instructions}
        for attr, was in self._said.items():
            value = said.get(attr)
            fits = isinstance(value, list if attr == "icons" else str) or (
                value is None and attr not in ("name", "version")
            )
            if fits and getattr(self.server, attr) == was:
                setattr(self.server, attr, value)
                self._said[attr] = value

    def begin(self) -> asyncio.Task[None]:
        """The first start (:meth:`start`), begun now in the background if it was not already:
        a gateway begins every upstream at once and serves meanwhile."""
        import asyncio

        if self._first is None:
            self._first = asyncio.get_running_loop().create_task(self._start())
        return self._first

    @property
    def starting(self) -> bool:
        """Whether the first start has yet to end (or to begin)."""
        return self._first is None or not self._first.done()

    async def start(self) -> None:
        """Connect once at start-up and mirror the catalog; returns when that first start has
        ended. A failure is logged, and the next request tries again. On an event loop that does
        not own the connection (:meth:`claim`) it waits for the owner's start, begun there."""
        import asyncio

        if self.claim():
            await asyncio.shield(self.begin())  # a waiter cancelled does not cancel the start
            return
        first, owner = self._first, self.owner
        if first is None or owner is None or first.done():
            return
        try:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(asyncio.wait({first}), owner))
        except RuntimeError:  # the owner's loop closed meanwhile: nothing to wait for
            return
        except asyncio.CancelledError:  # the owner's loop ended its start (not this task cancelled)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise

    async def _start(self) -> None:
        self.started = True
        began = time.perf_counter()
        try:
            await self.connect()
        except Exception as exc:
            log.error("upstream %r did not start: %s", self.label, self.why(exc))
        self.start_ms = round((time.perf_counter() - began) * 1000, 1)
        settle()  # the client, its modules and the mirror live as long as serving

    def hint(self, exc: BaseException) -> str:
        """What to do about ``exc``, the upstream's failure to start, as "; …", or "": for a URL
        whose path serves no MCP (HTTP 404), the URL to try (``_client._target.endpoint_hint``)."""
        url = self.target.url if isinstance(self.target, ServerSpec) else self.target
        found = endpoint_hint(url, exc) if isinstance(url, str) else None
        return f"; {found}" if found else ""

    def why(self, exc: BaseException) -> str:
        """Why the upstream did not start, in one line (:func:`reason` and :meth:`hint`)."""
        return reason(exc) + self.hint(exc)

    def state(self) -> dict[str, Any]:
        """What ``mcpio doctor`` and ``mcpio inspect`` show of this upstream: ``state`` (started,
        failed, not started), the ``error`` of a failed start, how long the start took, and
        how many tools, prompts, resources and templates it serves."""
        live = self.client is not None and _alive(self.client)
        state = "started" if live else "failed" if self.error is not None else "not started"
        resources, templates = self._listed.get("resources", ([], []))
        counts = {"tools": len(self._listed.get("tools", ())), "prompts": len(self._listed.get("prompts", ()))}
        return {
            "name": self.label,
            "state": state,
            "error": None if self.error is None else self.why(self.error),
            "start_ms": self.start_ms,
            **counts,
            "resources": len(resources),
            "templates": len(templates),
        }

    async def _drop(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.aclose()

    async def aclose(self) -> None:
        import asyncio

        with _CLAIMING:  # from now on another loop's request connects anew (claim), this one's does not
            self.owner, self.stopping = None, asyncio.get_running_loop()
        if self._first is not None and not self._first.done():
            self._first.cancel()  # serving ended before the first start did: it closes what it opened
            await asyncio.wait([self._first])
        for task in list(self._background):
            task.cancel()
        await self._drop()
        self.stopping = self._lock = None
        if self._watched:  # this process hears their updates no more: the turns go, at once and
            # within 2 s (a backend that is down keeps them 2 s: TURN_TTL), never holding up the stop
            turns = [self.server.changes.turn_over(self._turn(uri)) for uri in self._watched]
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2):
                    await asyncio.gather(*turns)

    def forward(self, ctx: Context | None, call: Any) -> Awaitable[Any]:
        """Run ``call(client)`` upstream on behalf of ``ctx``; a dead upstream is an :class:`UpstreamError`.

        For a client in an era with input_required rounds, the call runs in a :class:`Flight`
        that outlives this run of the handler (``_rounds``): what the upstream asks during it
        is asked as rounds of the client's call. Another event loop's connection: run there (``_loops``)."""
        owner = self.owner
        if owner is not None and owner is not running_loop():
            return handed(self, owner, ctx, call)
        if ctx is not None and ctx.rules is not None and ctx.rules.input_required:
            from ._rounds import Flight, ask_client, flight_of

            flight = flight_of(self.flights, ctx)
            if flight is None:
                flight = Flight(self.flights, lambda flight: self._call(flight, call))
            return flight.run(ctx, ask_client)
        return self._call(ctx, call)

    async def _call(self, caller: Context | Flight | None, call: Any) -> Any:
        try:
            client = self.live() or await self.connect()  # open: no coroutine of connect's per call
        except UpstreamError:
            raise
        except Exception as exc:
            raise UpstreamError(f"upstream {self.label!r} is not available: {reason(exc)}", INTERNAL_ERROR) from None
        token = also = None
        if caller is not None:
            self.callers.append(caller)
            token = _CALLER.set(caller)  # this task's (a handler's run, a flight's task): see _caller
            declared = declared_by(caller if isinstance(caller, Context) else caller.ctx)
            also = None if declared is None else ALSO_DECLARED.set(declared)  # the caller's, upstream too
        try:
            return await call(client)
        except (ConnectionClosed, TransportError, OSError, EOFError, MCPError) as exc:
            failure = self.failure(client, exc)
            if failure is exc:
                raise
            raise failure from None
        finally:
            if caller is not None:
                self.callers.remove(caller)
            if token is not None:
                _CALLER.reset(token)
            if also is not None:
                ALSO_DECLARED.reset(also)

    def failure(self, client: Client, exc: BaseException) -> BaseException:
        """What a request forwarded on ``client`` fails with when it got ``exc``: the upstream's own
        error as it came, or an :class:`UpstreamError` when the connection ended (:meth:`_lost`)."""
        if isinstance(exc, (ConnectionClosed, TransportError, OSError, EOFError)) or (
            isinstance(exc, MCPError) and not _alive(client)
        ):
            return self._lost(client, exc)
        return exc

    def _lost(self, client: Client, exc: BaseException) -> UpstreamError:
        """The error of a request whose upstream connection ended; the next request opens it again."""
        if self.client is client:
            self.client = None
            self.spawn(_quietly_close(client))
        return UpstreamError(
            f"upstream {self.label!r} went away during the request ({reason(exc)}); "
            "it is started again on the next request",
            INTERNAL_ERROR,
        )

    async def watch(self, uri: str, on: bool) -> None:
        """The proxy's clients subscribe to the upstream's ``uri`` (``on``) or leave: the upstream
        subscription is held while at least one of them is subscribed."""
        count = self._watched.get(uri, 0) + (1 if on else -1)
        if count > 0:
            self._watched[uri] = count
        else:
            self._watched.pop(uri, None)
        if count != (1 if on else 0):
            return

        async def go(client: Client) -> None:
            await _hold(client, uri, on)

        if not on:
            try:
                if self.live() is not None:  # else nothing is held (a new connection subscribes what is watched)
                    await self.forward(None, go)
            finally:  # this process hears its updates no more
                await self.server.changes.turn_over(self._turn(uri))
            return
        try:
            await self.forward(None, go)
        except BaseException:  # not subscribed after all: the client's subscribe fails, nothing is held
            self._watched.pop(uri, None)
            raise

    async def _renew(self, client: Client, uri: str) -> None:
        """Subscribe a new connection to ``uri``, watched by the proxy's clients: a refusal is a
        warning, not a failed start (the upstream's tools and the rest are served all the same)."""
        try:
            await _hold(client, uri, True)
        except MCPError as exc:
            log.warning("upstream %r: subscribing to %s again failed: %s", self.label, uri, reason(exc))

    def _turn(self, uri: str) -> str:
        """The turn of the upstream's updates of ``uri``: of the processes hearing them, its holder tells."""
        return f"upstream {self.label}: {uri}"

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        """Run ``coro`` in a task of this upstream's (one it cancels when it closes)."""
        import asyncio

        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task


class ProxyServer(Server):
    """The Server :func:`proxy` makes: its ``upstream`` connects in its lifespan and is closed
    after it. The lifespan waits for that first start unless ``waits`` is false: then it only
    begins it, and requests wait for it (``Registry.first_start``) in the servers it is mounted in."""

    def __init__(
        self,
        target: Any,
        label: str,
        client_options: dict[str, Any],
        *,
        waits: bool = True,
        process: Any = None,
        round_timeout: float = ROUND_TIMEOUT,
        named: bool = True,
    ) -> None:
        super().__init__(label, lifespan=_connected)
        self.upstream = Upstream(self, target, label, client_options, process, round_timeout, named)
        self.registry.upstream = self.upstream  # its extensions' methods go there (_custom)
        if not waits:  # a gateway's: requests wait for it (_server._running)
            self.registry.wait_for(self.upstream)
        self.completion(self._complete)

    def unavailable(self) -> str | None:
        """The upstream's start-up failure while it has never been connected: a proxy of nothing
        answers ``initialize`` with it (an empty server would hide it from the user)."""
        error, upstream = self.upstream.error, self.upstream
        if error is None or upstream.client is not None or upstream._listed:
            return None
        return f"the upstream server did not start: {str(error) or reason(error)}{upstream.hint(error)}"

    def unlisted(self, uri: str) -> Resource | None:
        """Any URI it does not list is read from the upstream (ForwardedResource.unlisted), but a disabled one's."""
        owned = (catalog := self.registry.catalog) is not None and catalog.owns(uri)  # disabled: not served
        return None if owned else super().unlisted(uri) or ForwardedResource.unlisted(self.upstream, uri)

    async def _complete(self, ref: dict[str, Any], argument: dict[str, Any], context: Any) -> Any:
        """The upstream's completion, or its error as any forwarded request's (``Upstream.failure``),
        but -32601 (it completes nothing: none, as ``_listing``)."""

        async def go(client: Client) -> Any:
            params = {"ref": ref, "argument": argument, **({"context": context} if context else {})}
            return (await client.request("completion/complete", params)).get("completion") or {"values": []}

        try:
            return await self.upstream.forward(None, go)
        except MCPError as exc:
            if exc.code != METHOD_NOT_FOUND:
                raise
            return []


@contextlib.asynccontextmanager
async def _connected(server: Server) -> AsyncIterator[None]:
    """Held once per event loop serving the proxy (``Held``): its connection's owner closes it."""
    import asyncio

    assert isinstance(server, ProxyServer)
    upstream = server.upstream
    if server.registry.first_start is None:  # waits=True: not a gateway's
        await upstream.start()  # if it fails, initialize answers why (ProxyServer.unavailable)
    elif upstream.claim():
        upstream.begin()  # a gateway's: requests wait for it (Registry.first_start)
    try:
        yield
    finally:
        if upstream.owner is asyncio.get_running_loop():
            await upstream.aclose()


def proxy(
    target: Any,
    *,
    name: str | None = None,
    process: Any = None,
    round_timeout: float = ROUND_TIMEOUT,
    method_scopes: Mapping[str, Iterable[str]] | None = None,
    **client_options: Any,
) -> ProxyServer:
    """The proxy Server of ``target`` (see the module docstring); ``client_options`` go to its
    ``Client``; ``method_scopes``: :func:`~._custom.require_scopes`."""
    label = name or _label(target)
    named = name is not None  # else it takes the upstream's name (Upstream._adopt)
    server = ProxyServer(target, label, client_options, process=process, round_timeout=round_timeout, named=named)
    require_scopes(server, method_scopes)
    return server


def _alive(client: Client) -> bool:
    return client.session is not None and not client.session.closed


async def _hold(client: Client, uri: str, on: bool) -> None:
    """Subscribe upstream to ``uri`` (``on``) or unsubscribe, when the upstream announces
    subscriptions (else nothing is held: its ``resources/updated`` come unasked, or never)."""
    if (client.server_capabilities.get("resources") or {}).get("subscribe"):
        await (client.subscribe(uri) if on else client.unsubscribe(uri))


async def _quietly_close(client: Client) -> None:
    with contextlib.suppress(Exception):
        await client.aclose()


def _is_url(target: Any) -> bool:
    return isinstance(target, str) and target.startswith(("http://", "https://"))


def _label(target: Any) -> str:
    name = getattr(target, "name", None)
    if isinstance(name, str):
        return name
    if isinstance(target, (list, tuple)):
        return str(target[0]).rsplit("/", 1)[-1] if target else "upstream"
    text = shown(str(target))  # a URL's userinfo is no name (a URL with no path: its host)
    return text.split("?")[0].rstrip("/").rsplit("/", 1)[-1] or text
