"""NDJSON framing for stdio (spec-notes §8): one UTF-8 JSON message per line.

``LineBuffer.feed(chunk)`` takes bytes exactly as they arrive from a pipe, in chunks of any
size and with lines split anywhere, and returns the complete lines. It is linear in the input
(each byte is scanned once, however a 100 MiB line is chunked), strips a trailing CR (lenient
with CRLF writers), and drops blank lines (the spec allows none; they carry nothing).

A line longer than ``max_line_size`` bytes is not buffered: its bytes are discarded as they
arrive and one :class:`Oversized` marker stands in its place, so the caller can answer with a
clear error and keep serving the next line.
"""

from __future__ import annotations

from typing import Any, final

import msgspec

DEFAULT_MAX_LINE_SIZE = 256 * 1024 * 1024  # 256 MiB: large tool results are normal (pain point #7)


@final  # so `type(frame) is Oversized` narrows both ways (mypy: a final class has no subclass)
class Oversized(msgspec.Struct, frozen=True):  # a Struct: defined ~40x faster than a dataclass
    """Stands in for a line that exceeded the size limit (its bytes were discarded)."""

    size: int  # bytes seen before the newline (or so far, at end of stream)
    limit: int


@final
class Decoded(msgspec.Struct, frozen=True):
    """A frame its transport has decoded already (Streamable HTTP parses a POST body to check
    and route it): the session takes ``value`` instead of decoding ``raw`` a second time;
    ``raw`` stays for tracing. ``value`` is what :func:`mcpio._jsonrpc.decode` gives for ``raw``."""

    raw: bytes
    value: Any


class LineBuffer:
    """Incremental splitter of a byte stream into lines. See the module docstring."""

    __slots__ = ("_buf", "_discarding", "_limit", "_scan")

    def __init__(self, max_line_size: int = DEFAULT_MAX_LINE_SIZE) -> None:
        if max_line_size < 1:
            raise ValueError("max_line_size must be positive")
        self._buf = bytearray()
        self._scan = 0  # bytes of _buf already known to hold no newline
        self._limit = max_line_size
        self._discarding = 0  # >0: size of the oversized line being discarded

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        if self._discarding:
            nl = data.find(b"\n")
            if nl < 0:
                self._discarding += len(data)
                return out
            out.append(Oversized(self._discarding + nl, self._limit))
            self._discarding = 0
            data = data[nl + 1 :]
        buf = self._buf
        if not buf:
            # Fast path: whole lines in the chunk need no copy into the buffer.
            start = 0
            find = data.find
            while True:
                nl = find(b"\n", start)
                if nl < 0:
                    break
                self._emit(data[start:nl], out)
                start = nl + 1
            rest = len(data) - start
            if rest:
                if rest > self._limit:
                    self._discarding = rest
                else:
                    buf += data[start:] if start else data
            return out
        buf += data
        start = 0
        scan = self._scan
        while True:
            nl = buf.find(b"\n", scan)
            if nl < 0:
                break
            self._emit(bytes(buf[start:nl]), out)
            start = scan = nl + 1
        if start:
            del buf[:start]
        self._scan = len(buf)
        if len(buf) > self._limit:
            self._discarding = len(buf)
            buf.clear()
            self._scan = 0
        return out

    def _emit(self, line: bytes, out: list[bytes | Oversized]) -> None:
        if len(line) > self._limit:
            out.append(Oversized(len(line), self._limit))
            return
        if line.endswith(b"\r"):
            line = line[:-1]
        if not line or line.isspace():
            return
        out.append(line)

    def close(self) -> list[bytes | Oversized]:
        """End of stream: a final line without newline is still a message (lenient)."""
        out: list[bytes | Oversized] = []
        if self._discarding:
            out.append(Oversized(self._discarding, self._limit))
            self._discarding = 0
        elif self._buf:
            self._emit(bytes(self._buf), out)
        self._buf.clear()
        self._scan = 0
        return out

    @property
    def buffered(self) -> int:
        """Bytes held for an incomplete line."""
        return len(self._buf)
