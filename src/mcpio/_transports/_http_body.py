"""Response bodies for the HTTP client (``_http_client``): read whole, but never past a cap.

A connection goes back to the pool (httpx's or the lean client's) only once its response is read to the end; one left
with its body unread is closed. So a body is read to its end (capped), and the rest of a
request-scoped SSE stream after its answer is read too, for at most ``DRAIN_SECONDS``
(Streamable HTTP: after the response the server SHOULD close the stream; one that does not
costs that connection, never the request).
"""

from __future__ import annotations

import json
import ssl
from typing import Any

from ._http_backend import Answer

# After the answer on a request's SSE stream: how long its end is awaited (the server closes it
# at once; a server that keeps it open loses that connection when this passes)
DRAIN_SECONDS = 1.0


def content_type(resp: Answer) -> str:
    value = resp.headers.get("content-type") or ""
    return value.split(";")[0].strip().lower()


class BodyTooLarge(ValueError):
    """A response body over ``max_message_size``: not read further."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"the server's response body exceeds this client's limit of {limit} bytes (at least "
            f"{size}; max_message_size); it was not read"
        )


async def read_capped(resp: Answer, limit: int) -> bytes:
    """The body of ``resp``, or :class:`BodyTooLarge` once it passes ``limit`` bytes (a declared
    Content-Length over it fails before anything is read)."""
    declared = resp.headers.get("content-length") or ""
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(int(declared), limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(size, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def verify_message(exc: BaseException) -> str:
    """The reason of the certificate check that failed under ``exc`` (its cause chain)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return str(seen.verify_message)
        seen = seen.__cause__ or seen.__context__
    return str(exc)


def json_bytes(msg: dict[str, Any]) -> bytes:
    """``msg`` encoded as httpx's ``json=`` encodes a body (the bytes on the wire unchanged)."""
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
