"""The incremental Server-Sent Events parser (WHATWG HTML §9.2.6) a Streamable HTTP client reads
streams with: linear in the bytes it is fed, events capped by size. No I/O; the server side
writes events with :mod:`._sse`. ``_protocol/_http`` re-exports these names (``h.SSEParser``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SSEEvent:
    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SSETooLarge(ValueError):
    """An SSE line or event over the parser's ``max_event_size``: the stream must be dropped."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"the server sent an SSE event of more than {limit} bytes (at least {size}), over this "
            f"client's limit (max_message_size); the stream was dropped"
        )
        self.size = size
        self.limit = limit


_EOL = re.compile(rb"\r\n|\r|\n")
DEFAULT_MAX_EVENT_SIZE = 256 * 1024 * 1024  # as the stdio framing's DEFAULT_MAX_LINE_SIZE


class SSEParser:
    """Incremental SSE parser (WHATWG HTML §9.2.6): ``feed(bytes)`` returns complete events.

    ``last_event_id`` and ``retry`` keep the stream's latest values (an event with an id and no
    data — a priming event — moves ``last_event_id`` without being dispatched).

    Linear in the stream: each byte is scanned for a line end once, however
    the stream is chunked (``scanned`` counts the bytes looked at), and a line or an event's
    data over ``max_event_size`` bytes raises :class:`SSETooLarge` instead of being buffered.
    """

    def __init__(self, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        self._buf = bytearray()
        self._scan = 0  # bytes of _buf already known to hold no line end
        self._data: list[str] = []
        self._size = 0  # bytes of data in the event being built
        self._event = ""
        self._id: str | None = None
        self.max_event_size = max_event_size
        self.scanned = 0
        self.last_event_id: str | None = None
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        out: list[SSEEvent] = []
        buf = self._buf
        buf += chunk
        start = 0
        pos = self._scan
        end = len(buf)
        while True:
            m = _EOL.search(buf, pos)
            if m is None or (m.end() == end and buf[m.start()] == 13 and m.end() - m.start() == 1):
                # No line end (or a lone CR at the end: maybe the first half of CRLF).
                scan_to = end if m is None else m.start()
                self.scanned += scan_to - pos
                pos = scan_to
                break
            self.scanned += m.end() - pos
            line = bytes(buf[start : m.start()])
            start = pos = m.end()
            self._line(line.decode("utf-8", "replace"), out)
        if start:
            del buf[:start]
        self._scan = pos - start
        if len(buf) > self.max_event_size:
            size = len(buf)
            self._buf = bytearray()
            self._scan = 0
            raise SSETooLarge(size, self.max_event_size)
        return out

    def _line(self, line: str, out: list[SSEEvent]) -> None:
        if not line:
            if self._id is not None:
                self.last_event_id = self._id
            if self._data:
                out.append(SSEEvent("\n".join(self._data), self._event or "message", self.last_event_id, self.retry))
            self._data, self._event, self._id, self._size = [], "", None, 0
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._size += len(value) + 1
            if self._size > self.max_event_size:
                size, self._data, self._size = self._size, [], 0
                raise SSETooLarge(size, self.max_event_size)
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            self.retry = int(value)
