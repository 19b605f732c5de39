"""A legacy session as a stored record, and back: what lets any process of a shared HTTP server
(``http_app(state=RedisState(...))``) serve any legacy session.

The record (fields: :class:`mcpio._state._base.SessionDirectory`) holds what a session's
handshake and its requests leave behind: the negotiated version, the client's capabilities and
clientInfo, the server capabilities announced, the log level (``logging/setLevel``) and the
resource subscriptions. :class:`SessionMirror` reads it off a live
:class:`~mcpio._session.Session` (``snapshot``) and writes it into one (``apply``): a process
that receives a request for a session another process created starts a local server session
and applies the record, which resumes it without a handshake (``Connection.resume_legacy``).
Requests in flight, their streams and server-to-client requests are not in the record: they
belong to the process running them.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from .._session import Session

if TYPE_CHECKING:
    from ._server import Server

_SUB = "sub:"


def _dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _load(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class SessionMirror:
    """The record of one server session of ``server`` (see the module docstring)."""

    __slots__ = ("server", "session")

    def __init__(self, session: Session, server: Server) -> None:
        self.session, self.server = session, server

    def snapshot(self) -> dict[str, str]:
        """The session's record fields now (``rev`` aside); nothing before initialize."""
        conn = self.session.connection
        state = self.session.state
        out: dict[str, str] = {}
        if conn.version is None or not conn.lifecycle.initialized:
            return out
        out["v"] = conn.version
        out["caps"] = _dump(conn.peer_capabilities)
        out["info"] = _dump(conn.peer_info)
        caps = state.get("capabilities")
        if caps is not None:
            out["scaps"] = _dump(caps)
        level = state.get("log_level")
        if isinstance(level, str):
            out["lvl"] = level
        for uri in state.get("subscriptions", ()):
            out[_SUB + uri] = "1"
        return out

    def apply(self, record: dict[str, str]) -> None:
        """Make the session match ``record``: resume it if it has not been initialized here
        (a replica), then the log level and the subscriptions (replaced as a whole)."""
        conn = self.session.connection
        state = self.session.state
        version = record.get("v")
        if not version:
            return  # initialize has not completed where the session was made
        if conn.version is None:
            conn.resume_legacy(version, _load(record.get("caps")), _load(record.get("info")))
        if "scaps" in record:
            state["capabilities"] = _load(record["scaps"])
        level = record.get("lvl")
        if level:
            state["log_level"] = level
        else:
            state.pop("log_level", None)
        held: set[str] = state.get("subscriptions") or set()
        subscriptions = state["subscriptions"] = {k[len(_SUB) :] for k in record if k.startswith(_SUB)}
        if held != subscriptions:  # this copy's subscriptions are watched here, as its own (_subscriptions)
            from ._subscriptions import follow

            self.server.changes.spawn(
                asyncio.get_running_loop(), follow(self.server, subscriptions - held, held - subscriptions)
            )
