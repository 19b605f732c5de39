"""Context: what a handler may ask of the connection it serves.

Declare a parameter annotated ``Context`` in a tool, resource or prompt function and mcpio
passes one in (it is never part of the JSON Schema). Everything here is async and safe to
call many times; methods that need something of the client (sampling, elicitation, roots)
check the capability the client declared first and raise :class:`ClientCapabilityError`
with a clear message when it is absent.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from .. import _log
from .._errors import (
    INTERNAL_ERROR,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    ConnectionClosed,
    MCPError,
    RequestTimeout,
    ResourceNotFound,
)
from .._versions import (
    INPUT_REQUIRED_METHODS,
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    Rules,
)
from ._mrtr import Rounds

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable

    from .._protocol._events import RequestReceived
    from .._session import Session
    from ._elicit import ElicitResult
    from ._http_view import HttpRequest
    from ._server import Server
    from ._session_state import SessionState
    from ._tasks import Task

log = _log.logger("mcpio.server", globals())
T = TypeVar("T")

_LEVEL_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}


class ClientCapabilityError(MCPError):
    """The client did not declare the capability this call needs.

    In the modern era it is answered as -32021 with ``data.requiredCapabilities`` (spec
    2026-07-28); in the legacy era a tool turns it into an ``isError`` result.
    """

    def __init__(self, message: str, capability: str, rules: Rules | None = None) -> None:
        modern = rules is not None and rules.missing_capability_is_error
        super().__init__(
            message,
            MISSING_REQUIRED_CLIENT_CAPABILITY if modern else INTERNAL_ERROR,
            {"requiredCapabilities": {capability: {}}} if modern else None,
        )
        self.capability = capability


class ClientRequestError(MCPError):
    """The client answered a request the server sent (sampling, elicitation, roots, ping) with
    an error; ``code``, ``message`` and ``data`` are the client's."""


def request_context(
    server: Server, session: Session, ev: RequestReceived, rules: Rules | None, params: dict[str, Any]
) -> Context:
    """The Context of request ``ev`` served under ``rules``: its ``_meta``, the auth principal, and
    in an era with input_required the earlier rounds' answers (a retry's requestState, verified here)."""
    rounds = None
    info = sys.modules.get("mcpio._auth._info")  # loaded by the HTTP auth guard only: no auth, no import
    principal = info.current_principal() if info is not None else None  # binds MRTR state, counts tasks
    if rules is not None and rules.input_required and ev.method in INPUT_REQUIRED_METHODS:
        rounds = Rounds.from_request(server.state_codec, ev.method, params, principal)
    return Context(server, session, ev.id, params.get("_meta"), rules, rounds, principal)


class Context:
    """Per-request access to progress, logging, the client's features and the lifespan value.

    One Context serves one request under one protocol version (``rules``): in the legacy era
    the client's capabilities and log level belong to the connection; in the modern era they
    come with each request's ``_meta`` (spec 2026-07-28: servers MUST NOT infer them from
    earlier requests).
    """

    __slots__ = (
        "_cancelled",
        "_escalate",
        "_http",
        "_last_progress",
        "_rounds",
        "_session_state",  # made at first use, or by a StateHandle parameter (_session_state)
        "_state",
        "_task",
        "meta",
        "owner",
        "principal",
        "request_id",
        "rules",
        "server",
        "session",
    )
    _session_state: SessionState  # unset until first used (session_state)

    def __init__(
        self,
        server: Server,
        session: Session,
        request_id: Any,
        meta: dict[str, Any] | None,
        rules: Rules | None = None,
        rounds: Rounds | None = None,
        principal: str | None = None,
    ) -> None:
        self.server = server
        self.principal = principal  # the authenticated caller (AuthInfo.principal), None without auth
        self.session = session
        self.request_id = request_id
        self.meta = meta if isinstance(meta, dict) else {}
        self.rules = rules if rules is not None else session.connection.rules
        self._rounds = rounds
        self._last_progress: float | None = None
        self._task: Task | None = None  # set once this call runs as a task (_tasks)
        self._escalate: asyncio.Future[Task] | None = None  # armed while the call may still become one
        self._cancelled = False
        self.owner: Server | None = None  # the mounted server whose handler serves this request (_catalog)
        self._state: dict[str, Any] | None = None  # made at first use (state)
        self._http: HttpRequest | None = None  # made at first use (http)

    # ---------------------------------------------------------------- facts
    @property
    def lifespan(self) -> Any:
        """The value your ``lifespan`` context manager yielded (None without one)."""
        return (self.owner or self.server).lifespan_value

    @property
    def http(self) -> HttpRequest | None:
        """The HTTP request that carried this client request (method, path, query, headers with
        credentials redacted, client address: :class:`~mcpio._server._http_view.HttpRequest`),
        or None over stdio. In a task it is the request that started the task."""
        view = self._http
        if view is None and self.request_id is not None:
            from .._transports._base import abilities  # not before the first answer (cold start)

            find = abilities(self.session.transport).http_scope  # declared by the HTTP transports
            scope = find(self.request_id) if find is not None else None
            if scope is not None:
                from ._http_view import HttpRequest

                view = self._http = HttpRequest(scope)
        return view

    @property
    def state(self) -> dict[str, Any]:
        """A dict belonging to this one request: middleware fills it (``request.context.state``),
        the handler and its dependency providers read it; a task goes on with its call's. Every
        request starts with a fresh one (in 2026-07-28 each input_required round is a request of
        its own); what must outlive a request goes in :attr:`session_state`."""
        state = self._state
        if state is None:
            state = self._state = {}
        return state

    @property
    def session_state(self) -> SessionState:
        """State that outlives this request (:class:`~mcpio._server._session_state.SessionState`:
        ``await get(key)``, ``await set(key, value, ttl=)``, ``await delete(key)``), kept for the
        tool's ``mcpio.StateHandle`` parameter, else the legacy session, else the authenticated
        caller; in memory, or on Redis with ``state=RedisState(...)`` / ``--redis``. Raises
        ``SessionStateError`` (an isError result) when the call has none of these."""
        try:  # the slot is left unset by __init__: no per-call cost for a tool that never asks
            return self._session_state
        except AttributeError:
            from ._session_state import for_context

            state = self._session_state = for_context(self)
            return state

    @property
    def auth(self) -> Any:
        """Who is calling: the verified :class:`mcpio.auth.AuthInfo` (subject, client id, scopes,
        claims; the raw token only through ``raw_token()``) when the server runs over HTTP with
        ``auth=``, else None. In a legacy session it is the latest token the session's principal sent."""
        info = sys.modules.get("mcpio._auth._info")  # loaded by the HTTP guard; absent: no auth here
        return info.current() if info is not None else None

    @property
    def stateless(self) -> bool:
        """True when this request is served in the modern (2026-07-28) era."""
        return self.rules is not None and self.rules.stateless

    @property
    def client_capabilities(self) -> dict[str, Any]:
        if self.stateless:
            return self.meta.get(META_CLIENT_CAPABILITIES) or {}
        return self.session.connection.peer_capabilities

    @property
    def client_info(self) -> dict[str, Any]:
        if self.stateless:
            info = self.meta.get(META_CLIENT_INFO)
            return info if isinstance(info, dict) else {}
        return self.session.connection.peer_info

    def client_supports(self, extension: str) -> bool:
        """Whether the client declared ``extension`` (``capabilities.extensions``; SEP-2133)."""
        return self.client_extension(extension) is not None

    def client_extension(self, extension: str) -> dict[str, Any] | None:
        """The settings the client declared for ``extension``, or None when it did not declare it."""
        declared = self.client_capabilities.get("extensions")
        settings = declared.get(extension) if isinstance(declared, dict) else None
        return settings if isinstance(settings, dict) else None

    @property
    def protocol_version(self) -> str | None:
        return self.rules.version if self.rules is not None else None

    @property
    def progress_token(self) -> Any:
        return self.meta.get("progressToken")

    @property
    def cancelled(self) -> bool:
        """True once nobody wants this call's result any more (``notifications/cancelled``, a
        closed HTTP stream, ``tasks/cancel``, the server stopping). An async handler is
        cancelled at its next ``await``; a sync one, in its worker thread, cannot be stopped
        from outside — a long loop should check this (safe from any thread) and return early."""
        return self._cancelled

    @property
    def task_id(self) -> str | None:
        """The id of the task this call runs as (2026 extension or 2025-11-25 core task), or None."""
        return self._task.id if self._task is not None else None

    @property
    def input_keys(self) -> frozenset[str]:
        """The keys of the answers this run of the handler may use (modern era: those the
        client's earlier rounds brought, carried by the verified requestState; empty otherwise)."""
        return frozenset(self._rounds.answers) if self._rounds is not None else frozenset()

    @property
    def input_round(self) -> int:
        """How many input_required round trips preceded this run of the handler (modern era;
        always 0 in the legacy era, where the client is asked directly)."""
        return self._rounds.round if self._rounds is not None else 0

    # ---------------------------------------------------------------- progress
    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` if the client asked for progress (a progressToken).

        Progress must increase (spec); a value not above the last one sent is dropped. So is
        progress once its operation is over (spec basic/utilities/progress: notifications
        reference only operations in progress, and stop at completion): the request was answered
        or cancelled — a handler that runs on after a cancellation (a worker thread, a shielded
        continuation) reports to nobody. In a task the task's ``statusMessage`` shows ``message``
        (or "progress/total") to the client's next ``tasks/get``; a task of the 2026 extension
        sends no notification (spec), a 2025-11-25 core task goes on sending them under the
        call's progressToken until the task ends (spec: the token stays valid for the task).
        """
        task = self._task
        if task is not None:
            task.progress(
                message if message is not None else f"{progress:g}" + (f"/{total:g}" if total is not None else "")
            )
            if not task.core:  # 2025-11-25 core tasks keep the call's progressToken (and notifications)
                return
        token = self.meta.get("progressToken")
        if token is None:
            return
        if (task.ended is not None) if task is not None else not self.session.connection.in_progress(self.request_id):
            log.debug("dropping progress %s: request %r is over (answered or cancelled)", progress, self.request_id)
            return
        if self._last_progress is not None and progress <= self._last_progress:
            log.debug("dropping non-increasing progress %s (last %s)", progress, self._last_progress)
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        rules = self.rules
        if message is not None and (rules is None or rules.progress_message):
            params["message"] = message
        await self._related(self.session.notify("notifications/progress", params))

    def _related(self, sending: Awaitable[T]) -> Awaitable[T]:
        """``sending`` (to this request's client) related to this request (``Session.related``)."""
        return self.session.related(self.request_id, sending)

    # ---------------------------------------------------------------- logging
    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` at ``level`` if the client's level lets it through
        (never from a task of the 2026 extension, which carries no log notifications)."""
        if level not in _LEVEL_RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        if self._task is not None and not self._task.core:
            return
        if self.stateless:  # 2026-07-28: only when this request's _meta asks for a level
            threshold = self.meta.get(META_LOG_LEVEL)
            if threshold is None:
                return
        else:  # legacy: logging/setLevel on the connection; unset means everything
            threshold = self.session.state.get("log_level")
        if threshold is not None and _LEVEL_RANK[level] < _LEVEL_RANK[threshold]:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._related(self.session.notify("notifications/message", params))

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("info", data, logger=logger)

    async def notice(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("notice", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        await self.log("error", data, logger=logger)

    # ---------------------------------------------------------------- client features
    async def _request(
        self, method: str, params: dict[str, Any] | None, timeout: float | None, key: str | None = None
    ) -> Any:
        """Ask the client for ``method``'s result.

        Legacy era: send the request and wait (spec: server→client requests); raises
        RequestTimeout (after telling the client ``notifications/cancelled``), ConnectionClosed,
        or ClientRequestError carrying the client's error. Modern era: return the answer the
        client gave in an earlier round, or raise InputRequired to ask for it (``_mrtr``); in a
        task of the extension, wait in ``input_required`` for ``tasks/update`` to bring it
        (``_tasks``); in a 2025-11-25 core task, ask at once, the request tagged with the task.
        """
        import asyncio

        task = self._task
        if task is not None and not task.core:
            try:
                return await asyncio.wait_for(task.ask(method, params, key), timeout)
            except TimeoutError:
                raise RequestTimeout(
                    f"the client did not answer {method} (tasks/update) within {timeout:g} s"
                ) from None
        if self._rounds is not None:
            return self._rounds.ask(method, params, key)
        if self.stateless:
            raise MCPError(
                f"{method} cannot be asked here: in protocol {self.protocol_version} a server asks "
                "the client only while answering tools/call, prompts/get or resources/read"
            )
        try:
            if task is not None:  # a core task (2025-11-25): asked now, tagged with the task
                return await self._related(task.ask_client(self.session, method, params, timeout))
            if self.server.telemetry:  # OpenTelemetry: a CLIENT span
                from .._otel._client import traced

                ask = traced(lambda _, m, p, **o: self.session.request(m, p, **o))
                return await self._related(ask(None, method, params, timeout=timeout))
            return await self._related(self.session.request(method, params, timeout=timeout))
        except (RequestTimeout, ConnectionClosed):
            raise
        except MCPError as exc:
            raise ClientRequestError(
                f"the client answered {method} with error {exc.code}: {exc.message}", exc.code, exc.data
            ) from None

    async def ping(self, *, timeout: float | None = 30.0) -> None:
        """Ping the client (spec: basic/utilities/ping); returns when it answers.

        Raises RequestTimeout if it does not answer within ``timeout`` seconds.
        """
        if self.stateless:
            raise MCPError(f"ctx.ping(): there is no ping in protocol {self.protocol_version}")
        await self._request("ping", None, timeout)

    def _require(self, capability: str, what: str) -> dict[str, Any]:
        caps = self.client_capabilities
        if capability not in caps:
            name = self.client_info.get("name", "the client")
            raise ClientCapabilityError(
                f"{what} needs the client capability {capability!r}, which {name} did not declare",
                capability,
                self.rules,
            )
        value = caps.get(capability)
        return value if isinstance(value, dict) else {}

    async def sample(
        self,
        messages: str | list[dict[str, Any]],
        *,
        max_tokens: int = 1024,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: list[str] | None = None,
        model_preferences: dict[str, Any] | None = None,
        include_context: str | None = None,
        metadata: dict[str, Any] | None = None,
        timeout: float | None = 120.0,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Ask the client's LLM for a completion (``sampling/createMessage``); returns its result.

        ``messages`` may be a plain string (one user message) or a list of SamplingMessage dicts.
        ``key`` names the request in a 2026-07-28 ``inputRequests`` map (ignored in the legacy era).
        """
        self._require("sampling", "ctx.sample()")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        for name, value in (
            ("systemPrompt", system_prompt),
            ("temperature", temperature),
            ("stopSequences", stop_sequences),
            ("modelPreferences", model_preferences),
            ("includeContext", include_context),
            ("metadata", metadata),
        ):
            if value is not None:
                params[name] = value
        return cast("dict[str, Any]", await self._request("sampling/createMessage", params, timeout, key))

    @overload
    async def elicit(
        self, message: str, schema: dict[str, Any], *, timeout: float | None = 600.0, key: str | None = None
    ) -> dict[str, Any]: ...

    @overload
    async def elicit(
        self, message: str, *, response_type: type[T], timeout: float | None = 600.0, key: str | None = None
    ) -> ElicitResult[T]: ...

    @overload
    async def elicit(
        self, message: str, *, response_type: Any, timeout: float | None = 600.0, key: str | None = None
    ) -> ElicitResult[Any]: ...

    async def elicit(
        self,
        message: str,
        schema: dict[str, Any] | None = None,
        *,
        response_type: Any = None,
        timeout: float | None = 600.0,
        key: str | None = None,
    ) -> Any:
        """Ask the user for structured input (``elicitation/create``, form mode).

        With ``schema`` (a flat object schema of primitive properties) it returns the client's
        result as is: ``{"action": "accept"|"decline"|"cancel", "content": {...}}`` (another
        action is the client's error, ``_elicit.checked``). With
        ``response_type=T`` (a dataclass, TypedDict, msgspec Struct, ``Literal``/``Enum``, a list
        of string choices or a primitive) the schema is made from ``T`` and it returns an
        :class:`~mcpio.ElicitResult`: ``.action``, and ``.data`` as a ``T`` (see ``_elicit``).
        """
        from ._elicit import checked, form

        typed = None
        if response_type is not None:
            if schema is not None:
                raise TypeError("ctx.elicit(): give a schema or a response_type, not both")
            typed = form(response_type)  # a TypeError for a type a form cannot ask for: before asking
            schema = typed.schema
        elif schema is None:
            raise TypeError("ctx.elicit() needs a schema (a dict) or a response_type")
        rules = self.rules
        if rules is not None and not rules.elicitation:
            raise ClientCapabilityError(
                f"elicitation is not part of protocol version {rules.version}", "elicitation", rules
            )
        modes = self._require("elicitation", "ctx.elicit()")
        if "url" in modes and "form" not in modes:  # 2025-11-25: {} means form; {"url": {}} means URL only
            raise ClientCapabilityError(
                f"ctx.elicit() needs form-mode elicitation, and {self.client_info.get('name', 'the client')} "
                "declared only URL mode (capability elicitation.form is absent)",
                "elicitation",
                rules,
            )
        params = {"message": message, "requestedSchema": schema}
        if rules is not None and rules.icons:  # 2025-11-25 added the explicit mode field
            params = {"mode": "form", **params}
        result = await self._request("elicitation/create", params, timeout, key)
        return typed.read(result) if typed is not None else checked(result)

    async def elicit_url(
        self,
        url: str,
        message: str,
        *,
        elicitation_id: str | None = None,
        timeout: float | None = 600.0,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Ask the user to visit ``url`` out of band (URL-mode elicitation, 2025-11-25 and later):
        sign-in, payment, anything the client must not see. Returns the client's result,
        ``{"action": "accept"|"decline"|"cancel"}`` (accept: the user agreed to open it, not that
        the interaction finished) and, in the legacy era, ``elicitationId``: the id sent
        (``elicitation_id``, else minted), for :meth:`complete_elicitation`. In 2026-07-28 it is
        an input_required round like :meth:`elicit`. The client must declare ``elicitation.url``."""
        from ._elicit import checked, new_elicitation_id, url_params

        rules = self.rules
        if rules is not None and not (rules.elicitation and rules.icons):  # URL mode came with 2025-11-25
            raise ClientCapabilityError(
                f"URL-mode elicitation is not part of protocol version {rules.version}", "elicitation", rules
            )
        if "url" not in self._require("elicitation", "ctx.elicit_url()"):
            raise ClientCapabilityError(
                f"ctx.elicit_url() needs URL-mode elicitation, which {self.client_info.get('name', 'the client')} "
                "did not declare (capability elicitation.url is absent)",
                "elicitation",
                rules,
            )
        eid = None if self.stateless else (elicitation_id or new_elicitation_id())
        params = url_params(url, message, eid, legacy=eid is not None)
        result = checked(await self._request("elicitation/create", params, timeout, key))
        return {**result, "elicitationId": eid} if eid is not None else result

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """Tell the client the URL-mode elicitation ``elicitation_id`` finished out of band
        (``notifications/elicitation/complete``, 2025-11-25; 2026-07-28 has no such notification:
        the client retries instead, so this is a no-op there)."""
        if not self.stateless:
            await self.session.notify("notifications/elicitation/complete", {"elicitationId": elicitation_id})

    async def list_roots(self, *, timeout: float | None = 30.0, key: str | None = None) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``): a list of ``{"uri": "file://…", "name"?}``."""
        self._require("roots", "ctx.list_roots()")
        result = await self._request("roots/list", None, timeout, key)
        roots = result.get("roots") if isinstance(result, dict) else None
        return roots if isinstance(roots, list) else []

    # ---------------------------------------------------------------- tasks
    async def start_task(self) -> bool:
        """Answer this ``tools/call`` with a task handle now and go on as the task (tasks
        extension; for a tool registered with ``task_support`` and ``task_after=None``).

        Returns True when the call now runs as a task, False when it cannot become one (the
        client did not declare the extension, the tool does not support tasks, or the era has
        no tasks): then the function's return value is the call's result as usual.
        """
        if self._task is None and self._escalate is not None:
            await self._begin_task()
        return self._task is not None

    def set_task_status(self, message: str) -> None:
        """In a task (``ctx.task_id``): show ``message`` as the task's ``statusMessage`` now; the
        clients watching the task are told (2025-11-25 ``notifications/tasks/status``; 2026-07-28
        ``notifications/tasks`` to the listen streams naming it). Unlike :meth:`report_progress`
        it sends no progress. Outside a task, or once the task ended: nothing."""
        if self._task is not None:
            self._task.progress(message)

    async def _begin_task(self, core: bool = False, ttl: float | None = None) -> Task:
        """Create the task this call becomes and switch to it (``_tasks`` / ``_core_tasks``)."""
        if self._task is None:
            _ = self.http  # kept: the transport forgets the request once the task handle answers it
            self._task = await self.server.tasks.begin(
                core, self.session if core else None, ttl, requester=self.principal or (self.session if core else None)
            )
            if self._escalate is not None and not self._escalate.done():
                self._escalate.set_result(self._task)
        return self._task

    async def close_sse_stream(self, *, retry_ms: int | None = None) -> None:
        """Streamable HTTP (2025-11-25 polling, SEP-1699): end the SSE connection carrying this
        request's response now. The request goes on; the client reconnects with
        ``Last-Event-ID`` after ``retry_ms`` and receives the rest there. A no-op on other
        transports and eras."""
        from .._transports._base import abilities  # not before the first answer (cold start)

        close = abilities(self.session.transport).close_stream
        if close is not None and self._task is None:
            await close(self.request_id, retry_ms)

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """Read one of this server's own resources; returns its contents list."""
        found = self.server.find_resource(uri)
        if found is None:
            raise ResourceNotFound(uri)
        resource, kwargs = found
        return await resource.read(uri, kwargs, self)
