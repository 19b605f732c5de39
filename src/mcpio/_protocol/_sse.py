"""Server-Sent Events framing (WHATWG HTML §9.2) for Streamable HTTP: events, comments and the
event ids of resumable streams (re-exported by ``_protocol/_http``). Pure functions, no I/O."""

from __future__ import annotations


def sse_event(data: bytes, *, id: str | None = None, event: str | None = None, retry: int | None = None) -> bytes:
    """One SSE event (WHATWG HTML §9.2). JSON from msgspec holds no raw newline, so ``data`` is
    one ``data:`` line (listeners that read NDJSON-like lines rely on that); a payload with
    newlines is split over several ``data:`` lines, which a parser joins back."""
    parts = []
    if id is not None:
        parts.append(b"id: " + id.encode())
    if event is not None:
        parts.append(b"event: " + event.encode())
    if retry is not None:
        parts.append(b"retry: %d" % retry)
    if b"\n" in data or b"\r" in data:
        parts.extend(b"data: " + line for line in data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"))
    else:
        parts.append(b"data: " + data if data else b"data: ")
    return b"\n".join(parts) + b"\n\n"


def sse_comment(text: str = "keep-alive") -> bytes:
    """A comment line: ignored by clients, keeps proxies from closing an idle stream."""
    return b": " + text.encode() + b"\n\n"


def event_id(stream_id: str, seq: int) -> str:
    """Event ids are ``<stream>-<seq>``; the store keys them by session, so an id is only ever
    looked up in the session that presents it (no cross-session replay, a pain point of other SDKs)."""
    return f"{stream_id}-{seq}"


def parse_event_id(value: str) -> tuple[str, int] | None:
    stream, sep, seq = value.strip().rpartition("-")
    if not sep or not stream or not (seq.isascii() and seq.isdigit()):  # "²".isdigit() is True
        return None
    return stream, int(seq)
