"""Context: what a handler may ask of the connection it serves.

Declare a parameter annotated ``Context`` in a tool, resource or prompt function and mcpio
passes one in (it is never part of the JSON Schema). Everything here is async and safe to
call many times; methods that need something of the client (sampling, elicitation, roots)
check the capability the client declared first and raise :class:`ClientCapabilityError`
with a clear message when it is absent.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .._errors import ConnectionClosed, MCPError, RequestTimeout

if TYPE_CHECKING:
    from .._session import Session
    from ._server import Server

log = logging.getLogger("mcpio.server")

# RFC 5424 severities, as MCP names them (spec-notes §5)
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_LEVEL_RANK = {name: i for i, name in enumerate(LOG_LEVELS)}


class ClientCapabilityError(MCPError):
    """The client did not declare the capability this call needs."""


class ClientRequestError(MCPError):
    """The client answered a request the server sent (sampling, elicitation, roots, ping) with
    an error; ``code``, ``message`` and ``data`` are the client's."""


class Context:
    """Per-request access to progress, logging, the client's features and the lifespan value."""

    __slots__ = ("server", "session", "request_id", "meta", "_last_progress")

    def __init__(self, server: Server, session: Session, request_id: Any, meta: dict[str, Any] | None) -> None:
        self.server = server
        self.session = session
        self.request_id = request_id
        self.meta = meta or {}
        self._last_progress: float | None = None

    # ---------------------------------------------------------------- facts
    @property
    def lifespan(self) -> Any:
        """The value your ``lifespan`` context manager yielded (None without one)."""
        return self.server._lifespan_value

    @property
    def client_capabilities(self) -> dict[str, Any]:
        return self.session.connection.peer_capabilities

    @property
    def client_info(self) -> dict[str, Any]:
        return self.session.connection.peer_info

    @property
    def protocol_version(self) -> str | None:
        return self.session.connection.version

    @property
    def progress_token(self) -> Any:
        return self.meta.get("progressToken")

    # ---------------------------------------------------------------- progress
    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` if the client asked for progress (a progressToken).

        Progress must increase (spec); a value not above the last one sent is dropped.
        """
        token = self.meta.get("progressToken")
        if token is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            log.debug("dropping non-increasing progress %s (last %s)", progress, self._last_progress)
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        rules = self.session.connection.rules
        if message is not None and (rules is None or rules.progress_message):
            params["message"] = message
        await self.session.notify("notifications/progress", params)

    # ---------------------------------------------------------------- logging
    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Send ``notifications/message`` at ``level`` if the client's level lets it through."""
        if level not in _LEVEL_RANK:
            raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LOG_LEVELS)}")
        threshold = self.session.state.get("log_level")
        if threshold is not None and _LEVEL_RANK[level] < _LEVEL_RANK[threshold]:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.session.notify("notifications/message", params)

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
    async def _request(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
        """Send ``method`` to the client and wait (spec: server→client requests, legacy era).

        Raises RequestTimeout (after telling the client ``notifications/cancelled``),
        ConnectionClosed, or ClientRequestError carrying the client's error.
        """
        try:
            return await self.session.request(method, params, timeout=timeout)
        except (RequestTimeout, ConnectionClosed):
            raise
        except MCPError as exc:
            raise ClientRequestError(f"the client answered {method} with error {exc.code}: {exc.message}",
                                     exc.code, exc.data) from None

    async def ping(self, *, timeout: float | None = 30.0) -> None:
        """Ping the client (spec: basic/utilities/ping); returns when it answers.

        Raises RequestTimeout if it does not answer within ``timeout`` seconds.
        """
        await self._request("ping", None, timeout)

    def _require(self, capability: str, what: str) -> dict[str, Any]:
        caps = self.client_capabilities
        if capability not in caps:
            name = self.client_info.get("name", "the client")
            raise ClientCapabilityError(
                f"{what} needs the client capability {capability!r}, which {name} did not declare"
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
    ) -> dict[str, Any]:
        """Ask the client's LLM for a completion (``sampling/createMessage``); returns its result.

        ``messages`` may be a plain string (one user message) or a list of SamplingMessage dicts.
        """
        self._require("sampling", "ctx.sample()")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        params: dict[str, Any] = {"messages": messages, "maxTokens": max_tokens}
        for key, value in (
            ("systemPrompt", system_prompt), ("temperature", temperature), ("stopSequences", stop_sequences),
            ("modelPreferences", model_preferences), ("includeContext", include_context), ("metadata", metadata),
        ):
            if value is not None:
                params[key] = value
        return await self._request("sampling/createMessage", params, timeout)

    async def elicit(self, message: str, schema: dict[str, Any], *, timeout: float | None = 600.0) -> dict[str, Any]:
        """Ask the user for structured input (``elicitation/create``, form mode).

        ``schema`` is a flat object schema of primitive properties. Returns the client's result:
        ``{"action": "accept"|"decline"|"cancel", "content": {...}}``.
        """
        rules = self.session.connection.rules
        if rules is not None and not rules.elicitation:
            raise ClientCapabilityError(f"elicitation is not part of protocol version {rules.version}")
        modes = self._require("elicitation", "ctx.elicit()")
        if "url" in modes and "form" not in modes:  # 2025-11-25: {} means form; {"url": {}} means URL only
            raise ClientCapabilityError(
                f"ctx.elicit() needs form-mode elicitation, and {self.client_info.get('name', 'the client')} "
                "declared only URL mode (capability elicitation.form is absent)"
            )
        params = {"message": message, "requestedSchema": schema}
        if rules is not None and rules.icons:  # 2025-11-25 added the explicit mode field
            params = {"mode": "form", **params}
        return await self._request("elicitation/create", params, timeout)

    async def list_roots(self, *, timeout: float | None = 30.0) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``): a list of ``{"uri": "file://…", "name"?}``."""
        self._require("roots", "ctx.list_roots()")
        result = await self._request("roots/list", None, timeout)
        roots = result.get("roots") if isinstance(result, dict) else None
        return roots if isinstance(roots, list) else []

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        """Read one of this server's own resources; returns its contents list."""
        return await self.server._read_resource_contents(uri, self)
