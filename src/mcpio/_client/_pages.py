"""Following a paginated list to its end (spec basic/utilities/pagination), for every list method.

Each page is one request with the previous ``nextCursor``; the items are gathered in order.
Defences against a server that misbehaves: at most ``client.max_pages`` pages, a repeated cursor
stops the loop, and an item listed twice (same identifying key) is kept once, with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._errors import RemoteProtocolError

if TYPE_CHECKING:
    from ._client import Client

log = logging.getLogger("mcpio.client")


async def collect(
    client: Client,
    method: str,
    key: str,
    id_key: str | None,
    accept_tools: Callable[[list[Any]], list[Any]] | None = None,
    pages: list[Any] | None = None,
) -> list[Any]:
    """Every item of ``method``'s ``key`` list, all pages. ``id_key`` names the field that
    identifies an item (duplicates dropped); ``accept_tools`` filters each tools/list page (HTTP
    drops tools with invalid x-mcp-header annotations); each page's raw result is appended to
    ``pages`` when given (the cache reads their ttlMs and cacheScope)."""
    items: list[Any] = []
    seen_cursors: set[Any] = set()
    seen_items: set[Any] = set()
    cursor = None
    for _ in range(client.max_pages):
        result = await client.request(method, {"cursor": cursor} if cursor is not None else None)
        page = result.get(key) if isinstance(result, dict) else None
        if not isinstance(page, list):
            raise RemoteProtocolError(f"{method}: the result has no {key!r} list")
        if pages is not None:
            pages.append(result)
        if accept_tools is not None and key == "tools":
            page = accept_tools(page)
        for item in page:
            ident = item.get(id_key) if id_key is not None and isinstance(item, dict) else None
            if ident is not None and ident in seen_items:
                log.warning("%s: the server listed %r twice; keeping the first", method, ident)
                continue
            seen_items.add(ident)
            items.append(item)
        cursor = result.get("nextCursor")
        if cursor is None:
            return items
        if cursor in seen_cursors:
            raise RemoteProtocolError(
                f"{method}: the server returned the cursor {cursor!r} twice; stopping to avoid a loop"
            )
        seen_cursors.add(cursor)
    raise RemoteProtocolError(f"{method}: more than {client.max_pages} pages (max_pages); stopping")
