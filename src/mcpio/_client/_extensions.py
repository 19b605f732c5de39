"""The client's side of extensions (SEP-2133): what it declares, and typed custom requests.

``Client(extensions={"io.modelcontextprotocol/ui": {"mimeTypes": [...]}})`` declares client
extensions: in ``capabilities.extensions`` of a legacy ``initialize`` (hosts send it there, as
the MCP Apps specification shows) and of every 2026-07-28 request's ``_meta`` client
capabilities. ``await call_method(client, "acme/search", {"query": "q"}, Hits)`` sends a custom
request and converts its result to ``Hits`` (a dataclass, Struct or TypedDict; msgspec rules),
without the era's ``_meta``/``resultType`` members.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from .._versions import TASKS_EXTENSION

if TYPE_CHECKING:
    from ._client import Client

T = TypeVar("T")
_ERA_MEMBERS = ("_meta", "resultType", "ttlMs", "cacheScope")


def capabilities(client: Client, rules: Any) -> dict[str, Any]:
    """The ClientCapabilities ``client`` declares under ``rules``."""
    caps: dict[str, Any] = {}
    if client.roots is not None:
        caps["roots"] = {} if rules.stateless else {"listChanged": True}
    if client.sampling is not None:
        caps["sampling"] = {}
    if client.elicitation is not None and rules.elicitation:  # {}: form only; modes named since 2025-11-25
        modes = client.elicitation_modes
        caps["elicitation"] = {m: {} for m in modes} if rules.icons and modes != ("form",) else {}
    extensions: dict[str, Any] = {TASKS_EXTENSION: {}} if client.tasks and rules.tasks_extension else {}
    extensions.update(client.extensions)
    if extensions:
        caps["extensions"] = extensions
    return caps


async def call_method(client: Client, method: str, params: dict[str, Any] | None, result_type: type[T]) -> T:
    """Send custom request ``method`` and convert its result to ``result_type``; a result that
    does not fit raises :class:`msgspec.ValidationError` naming the member."""
    import msgspec

    raw = await client.request(method, params)
    data = {k: v for k, v in raw.items() if k not in _ERA_MEMBERS} if isinstance(raw, dict) else raw
    return msgspec.convert(data, result_type, strict=False)
