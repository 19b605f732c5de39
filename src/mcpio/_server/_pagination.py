"""Opaque cursors for every list method (spec: pagination). A cursor encodes the list kind and
an offset; anything we did not issue is answered with -32602."""

from __future__ import annotations

import base64
from typing import Any

from .._errors import InvalidParams


def _encode(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"mcpio:{kind}:{offset}".encode()).decode().rstrip("=")


def paginate(
    items: list[Any], params: dict[str, Any] | None, page_size: int, kind: str
) -> tuple[list[Any], str | None]:
    """The page of ``items`` the request's cursor names, and the next cursor (None at the end)."""
    cursor = params.get("cursor") if params else None
    offset = 0
    if cursor is not None:
        try:
            text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
            tag, ckind, num = text.split(":")
            offset = int(num)
            if tag != "mcpio" or ckind != kind or offset < 0:
                raise ValueError
        except Exception:
            raise InvalidParams(
                f"Invalid params: cursor {cursor!r} was not issued by this server for {kind}; "
                "start again without a cursor"
            ) from None
    end = offset + page_size
    return items[offset:end], (_encode(kind, end) if end < len(items) else None)
