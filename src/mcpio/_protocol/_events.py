"""Events a :class:`~mcpio._protocol._connection.Connection` hands to its caller.

Frozen, slotted, keyword-constructed value objects; don't subclass them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._errors import MCPError

RequestId = str | int


@dataclass(frozen=True, slots=True)
class RequestReceived:
    """The peer asks us something; answer with ``Connection.respond``/``respond_error``.

    ``version`` is the protocol version this request is served under: the negotiated legacy
    version (None before initialize), or the version its modern ``_meta`` names.
    """

    id: RequestId
    method: str
    params: dict[str, Any] | None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class NotificationReceived:
    method: str
    params: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class ResponseReceived:
    """A result for a request we sent."""

    id: RequestId
    method: str
    result: Any


@dataclass(frozen=True, slots=True)
class ErrorReceived:
    """An error for a request we sent."""

    id: RequestId
    method: str
    error: MCPError


@dataclass(frozen=True, slots=True)
class CancelRequested:
    """The peer cancelled request ``id`` it had sent us (``notifications/cancelled``)."""

    id: RequestId
    reason: str | None


@dataclass(frozen=True, slots=True)
class Reply:
    """A protocol-level answer (parse error, invalid request …) to write back as is."""

    message: Any


Event = RequestReceived | NotificationReceived | ResponseReceived | ErrorReceived | CancelRequested | Reply
