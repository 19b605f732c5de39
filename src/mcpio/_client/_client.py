"""Client: one typed surface for every transport (in-memory Server, stdio subprocess, Streamable HTTP).

``async with Client(target) as client`` connects and starts the protocol (the era object of
``_era`` does the handshake); every method then sends one request through the era object
and the :class:`~mcpio._session.Session`:

* ``list_*`` follow every page, with a page cap and loop (repeated cursor) and duplicate
  detection; a list whose capability the server did not announce is empty without a request;
* other requests whose capability the server did not announce raise :class:`MethodNotFound`
  locally (spec lifecycle: only negotiated capabilities may be used);
* server errors are raised as the most specific :class:`MCPError` subclass, with the code,
  message and data the server sent; a server that goes away raises :class:`ServerExited`
  (exit code, stderr tail) or :class:`ConnectionClosed`, promptly;
* ``timeout`` is per request; with ``max_timeout`` progress restarts the clock up to that cap;
  on timeout or cancellation of the caller the server gets ``notifications/cancelled``.

Server→client traffic goes to the handlers given to the constructor (see ``_handlers``). Results are
typed (``_results``): the wire dict with typed attributes (``tool.input_schema`` is ``tool["inputSchema"]``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess  # (asyncio imports it)
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from .. import _otel
from .._errors import ConnectionClosed, HeaderMismatch, MCPError, MethodNotFound, RequestTimeout, TransportError
from .._protocol._connection import Connection
from .._protocol._events import NotificationReceived, RequestReceived
from .._replies import ProgressCallback
from .._session import OnAnswer, Session
from .._transports._base import NONE, Abilities, Transport, abilities
from .._transports._trace import Traced, open_trace
from .._version import __version__
from . import _cache, _era, _extensions, _handlers, _skills
from ._opening import Declaring
from ._pages import collect
from ._results import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Implementation,
    Prompt,
    Resource,
    ResourceContents,
    ResourceTemplate,
    ServerCapabilities,
    SkillEntry,
    Tool,
    wrap_list,
    wraps_result,
)
from ._target import closed_error, make_transport
from ._tasks import StatusWatch, called_as_task, calls_as_tasks, legacy_task_call

if TYPE_CHECKING:
    from ._apps import AppView

log = logging.getLogger("mcpio.client")

T = TypeVar("T")
Handler = Callable[[dict[str, Any]], Any]
DEFAULT: Any = ...  # "use the client's setting" for per-request timeouts
NOT_CONNECTED = "this Client is not connected: use it as 'async with Client(...) as client:'"

_LIST_KEYS = {"tools": "name", "prompts": "name", "resources": "uri", "resourceTemplates": "uriTemplate"}
# request method -> (server capability it needs, sub-capability or None)
_NEEDS = {
    "tools/list": ("tools", None),
    "tools/call": ("tools", None),
    "resources/list": ("resources", None),
    "resources/templates/list": ("resources", None),
    "resources/read": ("resources", None),
    "resources/subscribe": ("resources", "subscribe"),
    "resources/unsubscribe": ("resources", "subscribe"),
    "prompts/list": ("prompts", None),
    "prompts/get": ("prompts", None),
    "logging/setLevel": ("logging", None),
    "completion/complete": ("completions", None),
}


class Client(Declaring):
    """An MCP client.

    ``target``: an mcpio :class:`~mcpio.Server` (runs in memory, through the same serialisation as stdio), a ``.py``
    path (run with this Python), a command line (a string split with shlex, or an argv list; never a shell), or an
    ``http(s)://`` URL (Streamable HTTP, both eras; ``headers=`` are sent with every HTTP request, e.g. Authorization;
    ``auth=`` an ``httpx.Auth`` such as ``mcpio._auth.OAuth`` logs in when the server asks; ``verify=``: a CA file,
    an ``ssl.SSLContext`` or False, for https). ``transport=`` takes any object with ``send``/``receive``/``aclose``.

    Handlers (sync or async; each declares its capability when given):
    ``sampling(params)`` returns a CreateMessageResult dict or the reply text; ``elicitation(params)`` returns an
    ElicitResult, the content alone (accept) or None (decline) — accepted content gets the schema's defaults for
    the fields it leaves out; ``roots`` is a list (paths, ``file://`` URIs or Root dicts) or a callable returning one.
    ``on_log(params)`` receives ``notifications/message`` (default: the ``mcpio.server``
    logger); ``on_notification(method, params)`` receives every notification.

    ``tasks`` (default True): declare the tasks extension on 2026-07-28 requests; a tool call
    the server answers with a task is followed to its result (polling ``tasks/get``, answering
    its input requests with the handlers above), within ``max_timeout``. ``extensions``
    ``{id: settings}`` declares client extensions (SEP-2133), in ``initialize`` and in ``_meta``.

    ``trace="wire.log"`` appends every message sent and received to that file (a line each: time, ``out``/``in``,
    the message); a callable ``trace(direction, frame)`` receives each frame instead (``direction`` is ``"out"`` or
    ``"in"``, ``frame`` the raw bytes). ``telemetry=True`` (None: ``MCPIO_OTEL``): an OpenTelemetry span per request.

    ``cache=True`` (a MemoryCache) or a cache object (RedisCache …) keeps lists and reads for their ``ttlMs``, see
    ``_cache``; ``cache_ttl``: seconds for results without hints (legacy; None: not kept); per call ``cache_mode``.

    Subprocess options: ``env``, ``env_mode`` ("inherit", "safe", "exact"), ``cwd``, ``on_stderr(line)``, ``grace``;
    ``process``: the server's process, started already from the same command, env and cwd (``mcpio._transports._spawn``).
    """

    def __init__(
        self,
        target: Any = None,
        *,
        transport: Transport | None = None,
        name: str = "mcpio",
        version: str = __version__,
        era: str = "auto",
        protocol_version: str | None = None,
        sampling: Handler | None = None,
        elicitation: Handler | None = None,
        elicitation_modes: Sequence[str] = ("form",),  # with "url": URL mode too (2025-11-25+, docs/guides/client.md)
        roots: Sequence[Any] | Callable[[], Any] | None = None,
        on_log: Callable[[dict[str, Any]], Any] | None = None,
        on_notification: Callable[[str, dict[str, Any] | None], Any] | None = None,
        log_level: str | None = None,
        timeout: float | None = 60.0,
        max_timeout: float | None = 600.0,
        max_pages: int = 1000,
        max_input_rounds: int = 16,
        probe_timeout: float = 5.0,
        env: dict[str, str] | None = None,
        env_mode: str | None = None,
        cwd: str | None = None,
        on_stderr: Callable[[str], Any] | None = None,
        grace: float | None = None,
        process: subprocess.Popen[bytes] | None = None,
        headers: dict[str, str] | None = None,
        auth: Any = None,
        verify: Any = None,
        tasks: bool = True,
        extensions: dict[str, dict[str, Any]] | None = None,
        trace: str | os.PathLike[str] | Callable[[str, bytes], Any] | None = None,
        telemetry: bool | None = None,
        cache: Any = None,
        cache_ttl: float | None = None,
    ) -> None:
        super().__init__(  # what it declares, and how it opens a connection (_opening)
            name=name,
            version=version,
            era=era,
            protocol_version=protocol_version,
            sampling=sampling,
            elicitation=elicitation,
            elicitation_modes=elicitation_modes,
            roots=roots,
            on_log=on_log,
            log_level=log_level,
            tasks=tasks,
            extensions=extensions,
        )
        self._target = target
        self._transport = transport
        self._offers: Abilities = NONE  # the transport's abilities, read once it is made (connect)
        self._spawn: dict[str, Any] = {"env": env, "env_mode": env_mode, "cwd": cwd, "on_stderr": on_stderr}
        self._spawn.update(grace=grace, process=process, headers=headers, auth=auth, verify=verify)
        self.on_notification = on_notification
        self.timeout = timeout
        self.max_timeout = max_timeout
        self.max_pages = max_pages
        self.max_input_rounds = max_input_rounds
        self.trace = trace  # a file: every message sent and received is appended to it
        self._telemetry = _otel.client_requests(telemetry)  # OpenTelemetry CLIENT spans (None: off)
        self._task_support: dict[str, Any] | None = None  # tool -> execution.taskSupport (2025-11-25)
        self._task_status = StatusWatch()  # notifications/tasks/status to the calls following the tasks
        self._tool_defs: list[Tool] = []  # the last tools/list: outputSchemas say which results are wrapped
        self._wrapped: dict[str, bool] | None = None  # tool -> outputSchema wraps {"result": x} (from _tool_defs)
        self.probe_timeout = probe_timeout
        self._cache = _cache.Policy.make(cache, cache_ttl, self._spawn)  # None: no cache
        self.session: Session | None = None
        self.server_result: dict[str, Any] = {}
        self._era: _era.Era | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._callbacks: set[asyncio.Task[Any]] = set()

    @classmethod
    def stdio(cls, command: str, args: Sequence[str] = (), **options: Any) -> Client:
        return cls([command, *args], **options)  # spawn ``command args…`` (no shell), options as Client's

    # ------------------------------------------------------------------ lifecycle
    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def connect(self) -> None:
        """Start the transport and the protocol (``async with`` does this for you)."""
        if self.session is not None:
            raise RuntimeError("this Client is already connected; a Client connects once")
        transport = self._transport or make_transport(self._target, self._spawn, self._tasks)
        if self.trace is not None:
            sink = self.trace if callable(self.trace) else open_trace(os.fspath(self.trace))
            transport = Traced(transport, sink)
        self._transport = transport
        offers = self._offers = abilities(transport)  # read once: a transport's abilities do not change
        key = offers.key  # the server's identity for its per-server memories (None: this connection only)
        try:
            if offers.open is not None:
                await offers.open()
            self.session = Session(
                transport,
                Connection("client"),
                on_request=self._on_request,
                on_notification=self._on_notif,
                drain_timeout=1.0,
            )
            self._tasks.append(asyncio.get_running_loop().create_task(self.session.run()))
            try:
                self._era = await _era.choose_era(self, self.session, key)
                self._era, self.server_result = await _era.start(self, self.session, self._era)
            except (ConnectionClosed, TransportError) as exc:
                step = "initialize" if self._era is not None and self._era.name == "legacy" else "server/discover"
                raise await self._gone(f"connecting ({step})", exc) from None
            except RequestTimeout as exc:  # a server stuck at start: what it said may tell why
                tail = offers.stderr_tail() if offers.stderr_tail is not None else ""
                raise RequestTimeout(
                    exc.message + (f"; the server's last stderr lines:\n{tail}" if tail else "")
                ) from None
            except MCPError as exc:
                raise _handlers.typed_error(exc, "initialize") from None
            _era.remember(key, self._era.name)
        except BaseException:
            _era.forget(key)  # what we remembered about this server did not work: probe next time
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close the connection (for a subprocess: the spec's shutdown sequence). Idempotent."""
        try:
            if self._era is not None:
                await self._era.aclose()  # e.g. end a subscriptions/listen stream
            if self._transport is not None:
                await self._transport.aclose()
        finally:
            tasks, self._tasks = self._tasks, []
            if tasks:
                _, late = await asyncio.wait(tasks, timeout=5)
                for t in late:
                    t.cancel()

    async def _gone(self, what: str, exc: BaseException) -> MCPError:
        """The error for ``what`` failing because the connection ended (exit code, stderr)."""
        if self._offers.closed_error is not None:
            return cast(MCPError, await self._offers.closed_error(what))
        return closed_error(what, exc, self._tasks)

    # ------------------------------------------------------------------ what the server said
    @property
    def server_info(self) -> Implementation:
        """``serverInfo``: the server's name, version, title … (a dict with typed attributes)."""
        return Implementation(self.server_result.get("serverInfo") or {})

    @property
    def server_capabilities(self) -> ServerCapabilities:
        """What the server announced (a dict with typed attributes; ``.extensions`` for 2026-07-28)."""
        return ServerCapabilities(self.server_result.get("capabilities") or {})

    @property
    def instructions(self) -> str | None:
        value = self.server_result.get("instructions")
        return value if isinstance(value, str) else None

    @property
    def negotiated_version(self) -> str | None:
        return self._era.version if self._era is not None else None

    @property
    def negotiated_era(self) -> str | None:
        return self._era.name if self._era is not None else None

    # ------------------------------------------------------------------ server → client
    async def _on_request(self, session: Session, ev: RequestReceived) -> Any:
        return await self.answer(ev.method, ev.params or {})

    async def answer(self, method: str, params: dict[str, Any]) -> Any:
        """The result for a request the server makes of us (legacy: a JSON-RPC request; modern:
        one entry of an ``input_required`` result), from the handlers given to the constructor."""
        if method == "ping":
            return {}
        if method == "roots/list" and self.roots is not None:
            return await _handlers.list_roots(self.roots)
        if method == "sampling/createMessage" and self.sampling is not None:
            return await _handlers.answer_sampling(self.sampling, params)
        if method == "elicitation/create" and self.elicitation is not None:
            return await _handlers.answer_elicitation(self.elicitation, params, self.elicitation_modes)
        raise MethodNotFound(f"Method not found: this client does not handle {method!r}")

    async def _on_notif(self, session: Session, ev: NotificationReceived) -> None:
        params = ev.params if isinstance(ev.params, dict) else {}
        if self._era is not None and not self._era.on_notification(ev.method, params):
            return  # era bookkeeping (a listen stream's acknowledgement) or a stale stream's
        if ev.method == "notifications/tools/list_changed":
            self._task_support = None  # what tools/list said about tasks is stale: ask again when needed
        await _cache.on_notification(self, ev.method, params)  # stale entries go before the user hears of it
        if ev.method == "notifications/tasks/status":
            await self._task_status.status(params)
        if ev.method == "notifications/message":
            if self.on_log is not None:
                await _handlers.call(self.on_log, params)
            else:
                _handlers.forward_log(str(self.server_info.get("name", "")), params)
        if self.on_notification is not None:
            await _handlers.call(self.on_notification, ev.method, ev.params)

    async def set_roots(self, roots: Sequence[Any] | Callable[[], Any]) -> None:
        """Replace the roots and tell the server (``notifications/roots/list_changed``).

        Only a client created with ``roots=`` declared the roots capability."""
        if self.roots is None and self.session is not None:
            raise RuntimeError("this client declared no roots capability; pass roots=[] to Client() to declare it")
        self.roots = roots
        await self.roots_changed()

    async def roots_changed(self) -> None:
        """Tell the server the roots changed (``notifications/roots/list_changed``)."""
        if self.session is not None and self._era is not None:
            await self._era.roots_changed(self.session)

    # ------------------------------------------------------------------ requests
    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = DEFAULT,
        max_timeout: float | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> Any:
        """Send any request and return its raw result; raises a typed :class:`MCPError`.

        ``timeout`` defaults to the client's; ``max_timeout`` (default: none for raw requests)
        lets progress notifications restart the timeout up to that cap."""
        return await self._request(method, params, timeout, max_timeout, on_progress)

    async def _request(self, method: str, params: Any, timeout: Any, cap: Any, on_progress: Any, **era: Any) -> Any:
        """:meth:`request`, with options ``era`` only the connected era's ``request`` takes."""
        if self.session is None or self._era is None:
            raise RuntimeError(NOT_CONNECTED)
        t = self.timeout if timeout is DEFAULT else timeout
        try:
            return await (self._era.request if self._telemetry is None else self._telemetry(self._era.request))(
                self.session,
                method,
                params,
                timeout=t,
                max_timeout=cap,
                on_progress=_handlers.progress_deliverer(on_progress, self._callbacks),
                **era,
            )
        except (ConnectionClosed, TransportError) as exc:
            raise await self._gone(method, exc) from None
        except MCPError as exc:
            raise _handlers.typed_error(exc, method, params) from None

    def send_nowait(
        self,
        method: str,
        params: dict[str, Any] | None,
        on_answer: OnAnswer,
        on_progress: ProgressCallback | None = None,
    ) -> Callable[[], None] | None:
        """Send a request and give its raw result as :meth:`request` does (no timeout) to
        ``on_answer(result, None)``, or ``on_answer(None, exc)`` (a typed :class:`MCPError`, or
        :class:`ConnectionClosed`), on the reader's stack with no task waiting for it, when that
        needs no waiting: connected, no telemetry, a transport that takes the frame at once. For
        forwarding (``Server.proxy``). With ``on_progress`` it carries a progress token, and the
        server's progress for it goes to ``on_progress`` as for :meth:`request`, until it ends.
        Returns a function that cancels it (``on_answer`` is then never called), or None:
        nothing was sent, :meth:`request` it."""
        session, era = self.session, self._era
        if session is None or era is None or self._telemetry is not None:
            return None

        def answered(result: Any, exc: BaseException | None) -> None:
            on_answer(result, _handlers.typed_error(exc, method, params) if isinstance(exc, MCPError) else exc)

        deliver = _handlers.progress_deliverer(on_progress, self._callbacks)
        return era.send_nowait(session, method, params, answered, deliver)

    async def call_method(self, method: str, params: dict[str, Any] | None, result_type: type[T]) -> T:
        """A custom request (an extension's method) whose result is converted to ``result_type``."""
        return await _extensions.call_method(self, method, params, result_type)

    def _require(self, method: str) -> bool:
        """Whether the server announced what ``method`` needs (a RuntimeError when not connected)."""
        if self._era is None:
            raise RuntimeError(NOT_CONNECTED)
        need = _NEEDS.get(method)
        if need is None:
            return True
        cap, sub = need
        caps = self.server_capabilities
        if cap == "completions" and self.negotiated_version == "2024-11-05":
            return True  # that version had no completions capability
        have = caps.get(cap)
        return isinstance(have, dict) and (sub is None or bool(have.get(sub)))

    def _check(self, method: str) -> None:
        if not self._require(method):
            cap, sub = _NEEDS[method]
            what = f"{cap}.{sub}" if sub else cap
            raise MethodNotFound(f"{method}: the server did not announce the {what!r} capability, so it is not sent")

    async def _list(self, method: str, key: str, mode: str) -> list[dict[str, Any]]:
        """Every item of a paginated list (``_pages.collect``), through the cache; [] when the capability is absent."""
        if not self._require(method):
            return []
        accept, ident = self._offers.accept_tools, _LIST_KEYS.get(key)
        return await _cache.through(self, method, None, mode, lambda p: collect(self, method, key, ident, accept, p))

    async def ping(self) -> None:
        self._require("ping")
        await cast(_era.Era, self._era).ping(self)

    async def list_tools(self, *, cache_mode: str = "use") -> list[Tool]:
        """Every tool (all pages): :class:`~mcpio.types.Tool` (``.name``, ``.input_schema`` …)."""
        tools = wrap_list(Tool, await self._list("tools/list", "tools", cache_mode))
        self._task_support = {
            t["name"]: t["execution"].get("taskSupport")
            for t in tools
            if isinstance(t.get("name"), str) and isinstance(t.get("execution"), dict)
        }
        self._tool_defs, self._wrapped = tools, None  # _wrapped is derived when a call needs it
        return tools

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        result_type: None = None,
        timeout: float | None = DEFAULT,
        max_timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        on_task_status: Callable[[dict[str, Any]], Any] | None = None,
        task: bool = False,
    ) -> CallToolResult[Any]: ...

    @overload
    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        result_type: type[T],
        timeout: float | None = DEFAULT,
        max_timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        on_task_status: Callable[[dict[str, Any]], Any] | None = None,
        task: bool = False,
    ) -> CallToolResult[T]: ...

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        result_type: type[Any] | None = None,
        timeout: float | None = DEFAULT,
        max_timeout: float | None = DEFAULT,
        on_progress: ProgressCallback | None = None,
        on_task_status: Callable[[dict[str, Any]], Any] | None = None,
        task: bool = False,
    ) -> CallToolResult[Any]:
        """Call a tool; returns the :class:`~mcpio.types.CallToolResult` (``is_error`` True is
        a result, not raised): ``.content`` typed blocks, ``.data`` the structured result as
        Python values, converted to ``result_type`` (a msgspec Struct, dataclass, TypedDict …)
        when given. Progress restarts ``timeout`` up to ``max_timeout`` (defaults: the client's).
        ``on_task_status(task)`` (sync or async): each state of the task the server runs the call as
        (2025-11-25 ``notifications/tasks/status``; 2026-07-28 ``notifications/tasks``, ``tasks/get``).
        A 2025-11-25 server's tool listed with ``taskSupport: "required"`` is always called as a
        task; ``task=True`` asks for one of an ``"optional"`` tool too (a 2026-07-28 server
        decides per call by itself)."""
        self._check("tools/call")
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        cap = self.max_timeout if max_timeout is DEFAULT else max_timeout
        if calls_as_tasks(self) and await called_as_task(self, name, task):  # 2025-11-25 core tasks
            raw = await legacy_task_call(self, params, timeout=timeout, max_timeout=cap, on_status=on_task_status)
        else:
            follow = {"on_task_status": on_task_status} if on_task_status and self.negotiated_era == "modern" else {}
            try:
                raw = await self._request("tools/call", params, timeout, cap, on_progress, **follow)
            except HeaderMismatch:
                if self._offers.accept_tools is None:
                    raise
                # 2026-07-28 HTTP: the Mcp-Param-* headers come from the tool's inputSchema; it may
                # have changed (or was never listed): list the tools again and retry once (spec SHOULD).
                await self.list_tools(cache_mode="refresh")
                raw = await self._request("tools/call", params, timeout, cap, on_progress, **follow)
        # {"result": x} is unwrapped when the listed outputSchema is mcpio's wrapper (or unknown)
        if self._wrapped is None:
            self._wrapped = {t.name: wraps_result(t.output_schema) for t in self._tool_defs}
        return CallToolResult(raw, result_type, self._wrapped.get(name, True))

    async def list_resources(self, *, cache_mode: str = "use") -> list[Resource]:
        return wrap_list(Resource, await self._list("resources/list", "resources", cache_mode))

    async def list_resource_templates(self, *, cache_mode: str = "use") -> list[ResourceTemplate]:
        return wrap_list(
            ResourceTemplate, await self._list("resources/templates/list", "resourceTemplates", cache_mode)
        )

    async def read_resource(
        self, uri: str, *, timeout: float | None = DEFAULT, cache_mode: str = "use"
    ) -> list[ResourceContents]:
        """The resource's contents (a list of text or blob contents: ``.text``, ``.blob``, ``.content_bytes()``)."""
        self._check("resources/read")

        async def fetch(pages: list[Any]) -> Any:
            pages.append(result := await self.request("resources/read", {"uri": uri}, timeout=timeout))
            return result.get("contents", [])

        return wrap_list(ResourceContents, await _cache.through(self, "resources/read", uri, cache_mode, fetch))

    async def subscribe(self, uri: str) -> None:
        """Ask for ``notifications/resources/updated`` about ``uri`` (see ``on_notification``)."""
        self._check("resources/subscribe")
        assert self._era is not None
        await self._era.subscribe(self, uri)

    async def unsubscribe(self, uri: str) -> None:
        self._check("resources/unsubscribe")
        assert self._era is not None
        await self._era.unsubscribe(self, uri)

    async def list_prompts(self, *, cache_mode: str = "use") -> list[Prompt]:
        return wrap_list(Prompt, await self._list("prompts/list", "prompts", cache_mode))

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, timeout: float | None = DEFAULT
    ) -> GetPromptResult:
        self._check("prompts/get")
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return GetPromptResult(await self.request("prompts/get", params, timeout=timeout))

    async def complete(
        self, ref: dict[str, Any], argument: str, value: str, context: dict[str, str] | None = None
    ) -> Completion:
        """``completion/complete``; ``ref`` is ``{"type": "ref/prompt", "name": …}`` or
        ``{"type": "ref/resource", "uri": …}``. Returns ``{"values": […], "total"?, "hasMore"?}``."""
        self._check("completion/complete")
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        return Completion((await self.request("completion/complete", params))["completion"])

    async def set_logging_level(self, level: str) -> None:
        """Ask the server to send log messages at ``level`` and above."""
        self._check("logging/setLevel")
        assert self._era is not None
        await self._era.set_logging_level(self, level)

    async def list_skills(self) -> list[SkillEntry]:
        """Every skill listed (``skills/list``, all pages; [] without the skills extension); nothing more is fetched."""
        return await _skills.list_skills(self)

    async def get_skill(self, uri: str) -> SkillEntry:
        """One skill's entry by its SKILL.md URI (``skills/get``)."""
        return await _skills.get_skill(self, uri)

    async def load_skill(self, skill: SkillEntry) -> str:
        """Read and verify the skill's SKILL.md (size, digest, frontmatter); its text (SkillVerificationError if not)."""
        return await _skills.load_skill(self, skill)

    async def read_skill_file(self, skill: SkillEntry, uri: str) -> bytes:
        """Read and verify one file the skill lists; its raw bytes (SkillVerificationError on a mismatch)."""
        return await _skills.read_skill_file(self, skill, uri)

    async def app_view(self, tool: str) -> AppView:
        """The MCP Apps view of ``tool`` (HTML, mimeType, ``_meta.ui``); AppViewError if it has none."""
        from ._apps import app_view  # dataclasses with it: not on a client's boot

        return await app_view(self, tool)
