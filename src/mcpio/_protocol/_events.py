"""Events a :class:`~mcpio._protocol._connection.Connection` hands to its caller.

Frozen, slotted, keyword-constructed value objects; don't subclass them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .._errors import MCPError

RequestId = str | int


class RequestReceived(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass
    """The peer asks us something, served under ``version``: the negotiated legacy version (None
    before initialize), or the one its modern ``_meta`` names."""

    id: RequestId
    method: str
    params: dict[str, Any] | None
    version: str | None = None


class NotificationReceived(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass
    method: str
    params: dict[str, Any] | None


class ResponseReceived(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass
    """A result for a request we sent."""

    id: RequestId
    method: str
    result: Any


class ErrorReceived(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass
    """An error for a request we sent."""

    id: RequestId
    method: str
    error: MCPError


class CancelRequested(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass
    """The peer cancelled request ``id`` it had sent us (``notifications/cancelled``)."""

    id: RequestId
    reason: str | None


class Reply(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass
    """A protocol-level answer (parse error, invalid request …) to write back as is."""

    message: Any


Event = RequestReceived | NotificationReceived | ResponseReceived | ErrorReceived | CancelRequested | Reply
