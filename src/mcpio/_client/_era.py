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

Only :class:`LegacyEra` exists in this version. Era detection (spec-notes §7) goes into
:func:`choose_era`: on stdio, probe ``server/discover`` first; a ``DiscoverResult`` or a
recognised modern error (``-32022`` …) means modern, any other error or a timeout means
legacy (never keyed on a single error code); remember the answer per server in
:data:`ERA_CACHE` (keyed by the transport's ``key``). ``start`` returns the server's
description in the initialize-result shape (``protocolVersion``, ``capabilities``,
``serverInfo``, ``instructions``), which the Client reads; a modern ``start`` maps the
DiscoverResult (``_meta["io.modelcontextprotocol/serverInfo"]``) onto it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import LocalProtocolError
from .._versions import LATEST_LEGACY, LEGACY, LEGACY_VERSIONS, MODERN, RULES, Rules

if TYPE_CHECKING:
    from .._session import ProgressCallback, Session
    from ._client import Client

ERAS = ("auto", LEGACY, MODERN)

# transport key -> era name, for every server this process connected to ("remembered per server").
ERA_CACHE: dict[str, str] = {}


class LegacyEra:
    """The initialize handshake era. One instance per connection."""

    name = LEGACY

    def __init__(self, protocol_version: str = LATEST_LEGACY) -> None:
        if protocol_version not in LEGACY_VERSIONS:
            raise ValueError(f"protocol_version must be one of {', '.join(LEGACY_VERSIONS)}, not {protocol_version!r}")
        self.requested = protocol_version
        self.version: str | None = None
        self.rules: Rules = RULES[protocol_version]

    async def start(self, client: Client, session: Session) -> dict[str, Any]:
        """Run the handshake; returns the server's description (the initialize result)."""
        params = {
            "protocolVersion": self.requested,
            "capabilities": client._capabilities(self.rules),
            "clientInfo": client.client_info,
        }
        result = await session.request("initialize", params, timeout=client.timeout)
        if not isinstance(result, dict):
            raise LocalProtocolError(f"the server answered initialize with {type(result).__name__}, not an object")
        version = result.get("protocolVersion")
        if version not in LEGACY_VERSIONS:
            # Spec lifecycle: the client disconnects when it cannot use the server's version.
            raise LocalProtocolError(
                f"the server wants protocol version {version!r}, which this client does not speak "
                f"(it speaks {', '.join(LEGACY_VERSIONS)})", data={"supported": list(LEGACY_VERSIONS), "requested": self.requested},
            )
        self.version = version
        self.rules = RULES[version]
        await session.notify("notifications/initialized")
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


async def choose_era(client: Client, session: Session, key: str | None) -> LegacyEra:
    """Pick the era for this connection (the seam for 2026-07-28; see the module docstring).

    ``session`` is running and nothing was sent yet, so a probe may be the first request."""
    wanted = client.era
    if wanted == MODERN:
        raise NotImplementedError(
            "the 2026-07-28 (modern, stateless) protocol is not implemented in this client yet; "
            "use era='legacy' or era='auto'"
        )
    if wanted == "auto" and key is not None and ERA_CACHE.get(key) == MODERN:  # pragma: no cover - future
        raise NotImplementedError("this server was seen speaking the modern era only")
    # era == "auto": probing server/discover belongs here once the modern era exists.
    return LegacyEra(client.protocol_version)


def remember(key: str | None, era: str) -> None:
    if key is not None:
        ERA_CACHE[key] = era
