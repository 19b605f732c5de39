"""The client's side of extensions (SEP-2133): what it declares, and typed custom requests.

``Client(extensions={"io.modelcontextprotocol/ui": {"mimeTypes": [...]}})`` declares client
extensions: in ``capabilities.extensions`` of a legacy ``initialize`` (hosts send it there, as
the MCP Apps specification shows) and of every 2026-07-28 request's ``_meta`` client
capabilities (``_opening.Declaring._capabilities``). ``await call_method(client, "acme/search", {"query": "q"}, Hits)`` sends a custom
request and converts its result to ``Hits`` (a dataclass, Struct or TypedDict; msgspec rules),
without the era's ``_meta``/``resultType`` members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ._client import Client

T = TypeVar("T")
_ERA_MEMBERS = ("_meta", "resultType", "ttlMs", "cacheScope")


async def call_method(client: Client, method: str, params: dict[str, Any] | None, result_type: type[T]) -> T:
    """Send custom request ``method`` and convert its result to ``result_type``; a result that
    does not fit raises :class:`msgspec.ValidationError` naming the member."""
    import msgspec

    raw = await client.request(method, params)
    data = {k: v for k, v in raw.items() if k not in _ERA_MEMBERS} if isinstance(raw, dict) else raw
    return msgspec.convert(data, result_type, strict=False)
