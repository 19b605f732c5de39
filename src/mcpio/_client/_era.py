"""Protocol eras, seen from the client: how a connection starts and how a request is sent.

Theory of operation
-------------------
A :class:`~mcpio.Client` talks to its server through one *era* object, chosen when it
connects by :func:`choose_era` — the only place that decides which era a server speaks.
Everything that differs between the eras lives behind the era object's methods:

============================  ==============================  =====================================
operation                     legacy (2024-11-05…2025-11-25)  modern (2026-07-28, stateless)
============================  ==============================  =====================================
``start``                     ``initialize`` + initialized    ``server/discover``
``request``                   plain JSON-RPC request          ``_meta`` (version, clientCapabilities,
                                                              clientInfo, logLevel) on every request;
                                                              ``input_required`` results answered
                                                              with ``client.answer(method, params)``
                                                              and retried under a new id
``set_logging_level``         ``logging/setLevel``            a per-request ``_meta`` logLevel
``subscribe``/``unsubscribe`` ``resources/(un)subscribe``     ``subscriptions/listen``
``ping``                      ``ping``                        (removed)
``roots_changed``             notification                    (removed)
server→client requests        ``client.answer`` via Session   never sent (MRTR instead)
============================  ==============================  =====================================

:class:`LegacyEra` is here; :class:`~mcpio._client._modern.ModernEra` is in ``_modern``.
:func:`choose_era` is the only place that decides. ``era="legacy"`` and ``era="modern"`` are
taken as given; ``era="auto"`` (the default) detects the server's era (spec-notes §7, spec
2026-07-28 basic/versioning §Backward Compatibility):

1. a ``protocol_version`` the caller chose from the legacy list means legacy, no probe;
2. a server remembered as legacy in :data:`ERA_CACHE` (keyed by the transport's ``key``:
   the command line, the URL, the in-memory Server) is started with ``initialize`` at once;
   if that fails the entry is dropped, so the next connection probes again;
3. otherwise probe with ``server/discover`` (modern ``_meta``): a ``DiscoverResult`` means
   modern (and is reused as the server's description); a *recognised modern error*
   (-32020, -32021, -32022 — never a single code) means modern too: -32022 is followed to a
   mutually supported version, which may be a legacy one; any other error, a result that is
   not a DiscoverResult, or no answer within ``probe_timeout`` means legacy.

``start`` returns the server's description in the initialize-result shape
(``protocolVersion``, ``capabilities``, ``serverInfo``, ``instructions``), which the Client
reads; the modern ``start`` maps the DiscoverResult onto it
(``_meta["io.modelcontextprotocol/serverInfo"]`` becomes ``serverInfo``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._errors import (
    MODERN_ERROR_CODES,
    UNSUPPORTED_PROTOCOL_VERSION,
    ConnectionClosed,
    LocalProtocolError,
    MCPError,
    RequestTimeout,
)
from .._versions import LATEST_LEGACY, LEGACY, LEGACY_VERSIONS, MODERN, RULES, Rules
from ._modern import ModernEra, pick_version
from ._opening import ERA_CACHE

if TYPE_CHECKING:
    from .._replies import ProgressCallback
    from .._session import OnAnswer, Session
    from ._client import Client

log = logging.getLogger("mcpio.client")

__all__ = ["ERA_CACHE", "Era", "LegacyEra", "choose_era", "forget", "probe", "remember", "start"]


class LegacyEra:
    """The initialize handshake era. One instance per connection."""

    name = LEGACY

    def __init__(self, protocol_version: str = LATEST_LEGACY) -> None:
        if protocol_version not in LEGACY_VERSIONS:
            raise ValueError(f"protocol_version must be one of {', '.join(LEGACY_VERSIONS)}, not {protocol_version!r}")
        self.requested = protocol_version
        self.from_cache = False  # chosen because ERA_CACHE remembered this server as legacy
        self.after_probe_timeout = False  # chosen because server/discover got no answer in time
        self.probed = 0.0  # seconds that wait took: the handshake's, within the client's timeout
        self.version: str | None = None
        self.rules: Rules = RULES[protocol_version]

    async def start(self, client: Client, session: Session) -> dict[str, Any]:
        """Run the handshake; returns the server's description (the initialize result)."""
        params = client.initialize_params(self.requested)  # Declaring: what send_first may have sent already
        # The handshake answers within the client's timeout, the probe's wait included (a server
        # that hangs is reported after `timeout`, not after the probe's wait and then `timeout`).
        timeout = None if client.timeout is None else max(client.timeout - self.probed, 0.001)
        try:
            result = await session.request("initialize", params, timeout=timeout)
        except RequestTimeout:
            if not self.probed:
                raise
            raise RequestTimeout(
                f"the server answered neither server/discover nor initialize within {client.timeout:g} s"
            ) from None
        if not isinstance(result, dict):
            raise LocalProtocolError(f"the server answered initialize with {type(result).__name__}, not an object")
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            # Spec lifecycle: the client disconnects when it cannot use the server's version.
            raise LocalProtocolError(
                f"the server wants protocol version {version!r}, which this client does not speak "
                f"(it speaks {', '.join(LEGACY_VERSIONS)})",
                data={"supported": list(LEGACY_VERSIONS), "requested": self.requested},
            )
        self.version = version
        self.rules = RULES[version]
        await session.notify("notifications/initialized")
        caps = result.get("capabilities")
        if client.log_level is not None and isinstance(caps, dict) and "logging" in caps:
            await session.request("logging/setLevel", {"level": client.log_level}, timeout=client.timeout)
        return result

    async def request(
        self,
        session: Session,
        method: str,
        params: dict[str, Any] | None,
        *,
        timeout: float | None,
        max_timeout: float | None,
        on_progress: ProgressCallback | None,
    ) -> Any:
        return await session.request(method, params, timeout=timeout, max_timeout=max_timeout, on_progress=on_progress)

    def send_nowait(
        self,
        session: Session,
        method: str,
        params: dict[str, Any] | None,
        on_answer: OnAnswer,
        on_progress: ProgressCallback | None = None,
    ) -> Callable[[], None] | None:
        """``Client.send_nowait``: the request's cancel, or None: nothing was sent."""
        id_ = session.request_nowait(method, params, on_answer, on_progress)
        return None if id_ is None else functools.partial(session.cancel_nowait, id_, "cancelled by the requester")

    async def set_logging_level(self, client: Client, level: str) -> None:
        await client.request("logging/setLevel", {"level": level})

    async def subscribe(self, client: Client, uri: str) -> None:
        await client.request("resources/subscribe", {"uri": uri})

    async def unsubscribe(self, client: Client, uri: str) -> None:
        await client.request("resources/unsubscribe", {"uri": uri})

    async def ping(self, client: Client) -> None:
        await client.request("ping")

    async def roots_changed(self, session: Session) -> None:
        await session.notify("notifications/roots/list_changed")

    def on_notification(self, method: str, params: Any) -> bool:
        return True

    async def aclose(self) -> None:
        return None


Era = LegacyEra | ModernEra


async def choose_era(client: Client, session: Session, key: str | None) -> Era:
    """Pick the era for this connection (see the module docstring): the first request is
    ``client.opening``'s (``_opening``), which a gateway may have written already.

    ``session`` is running and nothing was sent yet, so a probe may be the first request."""
    legacy, modern = client.versions()
    remembered = ERA_CACHE.get(key) if key is not None else None
    if client.starts_legacy(remembered):
        era = LegacyEra(legacy)
        era.from_cache = not client.starts_legacy(None)
        return era
    if client.era == MODERN:
        return ModernEra(client, modern)
    return await probe(client, session, modern, legacy)


async def probe(client: Client, session: Session, modern: str, legacy: str, limit: float | None = None) -> Era:
    """``server/discover`` first; the era its answer shows (spec-notes §7). ``limit``: how long
    to wait for the answer (default: the client's ``probe_timeout``, at most its ``timeout``)."""
    era = ModernEra(client, modern)
    if limit is None:
        limit = client.probe_timeout if client.timeout is None else min(client.probe_timeout, client.timeout)
    try:
        result = await era.discover(session, limit)
    except RequestTimeout:
        log.debug("no answer to server/discover within %g s: speaking the legacy era", limit)
        fallback = LegacyEra(legacy)
        fallback.after_probe_timeout, fallback.probed = True, limit
        return fallback
    except ConnectionClosed:
        raise
    except MCPError as exc:
        if exc.code not in MODERN_ERROR_CODES:
            log.debug("server/discover failed with %s: speaking the legacy era", exc)
            return LegacyEra(legacy)
        data = exc.data if isinstance(exc.data, dict) else {}
        if exc.code == UNSUPPORTED_PROTOCOL_VERSION:
            # A modern server with no modern version in common: a legacy one it lists will do.
            common = pick_version(data.get("supported"), LEGACY_VERSIONS)
            if common is not None:
                return LegacyEra(common)
        raise
    if isinstance(result, dict) and isinstance(result.get("supportedVersions"), list):
        era.discovered = result
        return era
    log.debug("server/discover answered something that is not a DiscoverResult: speaking the legacy era")
    return LegacyEra(legacy)


async def start(client: Client, session: Session, era: Era) -> tuple[Era, dict[str, Any]]:
    """Start ``era`` on ``session``: the era that started and the server's description.

    A server slow to start (a cold interpreter, ``npx`` fetching a package) may answer the
    ``server/discover`` probe after :func:`probe` gave up on it; a dual-era server has then taken
    the modern era and refuses the legacy ``initialize`` with a modern error. That refusal means
    modern: the probe is asked again, waiting as long as any request."""
    try:
        return era, await era.start(client, session)
    except MCPError as exc:
        if not (isinstance(era, LegacyEra) and era.after_probe_timeout and exc.code in MODERN_ERROR_CODES):
            raise
    log.debug("the server refused initialize after a late server/discover: speaking the modern era")
    legacy, modern = client.versions()
    late = await probe(client, session, modern, legacy, client.timeout if client.timeout is not None else 60.0)
    return late, await late.start(client, session)


def remember(key: str | None, era: str) -> None:
    if key is not None:
        ERA_CACHE[key] = era


def forget(key: str | None) -> None:
    if key is not None:
        ERA_CACHE.pop(key, None)
