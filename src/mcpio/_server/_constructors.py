"""The Server's alternative constructors: a server made from an API description (``_openapi``,
loaded only when one of them is called)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._server import Server


class FromAPI:
    """``Server.from_openapi`` and ``Server.from_fastapi`` (the guide: docs/guides/openapi.md)."""

    @classmethod
    def from_openapi(cls, spec: Any, **options: Any) -> Server:
        """A server whose tools call the HTTP API that OpenAPI 3.0/3.1 document ``spec`` describes
        (a dict, a path or a URL; JSON or YAML); in a coroutine, a URL needs :meth:`from_openapi_async`
        (this one would block the event loop while it downloads: it raises ``RuntimeError``). Options (keyword-only): ``base_url`` (default: the
        document's first ``servers`` URL), ``client`` (an ``httpx.AsyncClient`` with its own auth),
        ``headers`` (sent with every request), ``public_headers`` (names of headers whose values are no
        credential: not redacted from answers, as every other configured value is), ``secrets`` (credentials by security scheme name,
        else the ``MCPIO_OPENAPI_<SCHEME>`` environment variables), ``credentials`` (a function of the
        request's Context returning headers: the verified principal -> API credentials),
        ``route_map`` (operationId, "METHOD /path" or "METHOD" -> "tool", "resource" or "skip"; or a
        function of the Operation), ``names`` (operationId or "METHOD /path" -> tool name),
        ``timeout`` (30 s per request), ``max_response_bytes`` (16 MiB), ``output_schemas`` (True: each
        tool's from its 2xx JSON response, results with structuredContent), ``name``/``version`` (default:
        the document's info); any other option is the Server's."""
        from .._openapi import from_openapi

        return from_openapi(spec, **options)

    @classmethod
    async def from_openapi_async(cls, spec: Any, **options: Any) -> Server:
        """:meth:`from_openapi` for a coroutine: a URL's document downloaded without blocking the
        running event loop, then read and converted on a thread of its own; the same options."""
        from .._openapi import from_openapi_async

        return await from_openapi_async(spec, **options)

    @classmethod
    def from_fastapi(cls, app: Any, **options: Any) -> Server:
        """:meth:`from_openapi` of a FastAPI app's own document, its requests served in-process (ASGI)."""
        from .._openapi import from_fastapi

        return from_fastapi(app, **options)
