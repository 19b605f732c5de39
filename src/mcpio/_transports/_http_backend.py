"""The HTTP client backends of the Streamable HTTP client transport, behind one shape.

:class:`Backend` is what ``_http_client`` (and ``_http_client_sse``) call: ``stream(method,
url, content=, headers=)`` yields an :class:`Answer` (status, reason, headers, HTTP version,
the body piece by piece); ``send`` is the same without the context manager; ``send_nowait``
hands the answer to a callback when the request can go at once (the lean client's; httpx's
never can); ``aclose``. Two
backends provide it:

* the lean HTTP/1.1 client (``_http1_client``) for a plain ``http://`` URL, when the caller
  gave no client of their own and no proxy of the environment applies to the URL (httpx's
  ``trust_env`` rules: ``HTTP_PROXY``/``ALL_PROXY``/``http_proxy``…, ``NO_PROXY``);
* :class:`HttpxBackend`, an adapter over ``httpx.AsyncClient``, for everything else: ``https``
  (TLS, HTTP/2 when ``h2`` is installed), an environment proxy, a caller's ``client=``.

Both raise httpx's exception types (``httpx.HTTPError`` and its subclasses) and follow
redirects; an ``httpx.Auth`` runs its flow on either.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import ssl
import urllib.request
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, Protocol, runtime_checkable

import httpx

from .._shown import show_urls_in_httpx_log


class Headers(Protocol):
    def get(self, name: str, default: str | None = None) -> str | None: ...

    def __getitem__(self, name: str) -> str: ...


class Answer(Protocol):
    """A response being read (the part of ``httpx.Response`` the transport uses)."""

    status_code: int
    reason_phrase: str
    http_version: str

    @property
    def headers(self) -> Headers: ...

    def aiter_bytes(self) -> AsyncIterator[bytes]: ...

    async def aclose(self) -> None: ...


class Backend(Protocol):
    def stream(
        self, method: str, url: str, *, content: bytes | None = None, headers: dict[str, str] | None = None
    ) -> contextlib.AbstractAsyncContextManager[Any]: ...

    async def send(self, method: str, url: str, content: bytes | None, headers: dict[str, str] | None) -> Any: ...

    def send_nowait(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: dict[str, str] | None,
        on_answer: Callable[[Any, BaseException | None], None],
    ) -> Callable[[], None] | None:
        """``send`` with its response by callback, when the request can go at once (the lean
        client's ``send_nowait``); None: nothing was sent, ``send`` it."""
        ...

    async def aclose(self) -> None: ...


@runtime_checkable
class ReadyAuth(Protocol):
    """An ``httpx.Auth`` that can say its headers without I/O and resume its flow from a
    request already sent with them (mcpio's ``OAuth``; ``_http1_client``'s docstring)."""

    def ready_headers(self) -> tuple[dict[str, str], str | None] | None: ...

    def async_auth_flow(
        self, request: httpx.Request, sent: tuple[str | None, httpx.Response] | None = None
    ) -> AsyncGenerator[httpx.Request, httpx.Response]: ...


class HttpxBackend:
    """:class:`Backend` over an ``httpx.AsyncClient`` (a URL string is parsed once)."""

    def __init__(self, client: httpx.AsyncClient, own: bool = True) -> None:
        self.client = client
        self._own = own
        self._urls: dict[str, httpx.URL] = {}

    def _url(self, url: str) -> httpx.URL:
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = httpx.URL(url)
            if len(self._urls) < 64:
                self._urls[url] = parsed
        return parsed

    def stream(
        self, method: str, url: str, *, content: bytes | None = None, headers: dict[str, str] | None = None
    ) -> contextlib.AbstractAsyncContextManager[Any]:
        return self.client.stream(method, self._url(url), content=content, headers=headers)

    async def send(self, method: str, url: str, content: bytes | None, headers: dict[str, str] | None) -> Any:
        request = self.client.build_request(method, self._url(url), content=content, headers=headers)
        return await self.client.send(request, stream=True)

    def send_nowait(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: dict[str, str] | None,
        on_answer: Callable[[Any, BaseException | None], None],
    ) -> None:
        return None  # httpx sends only by awaiting

    async def aclose(self) -> None:
        if self._own:
            await self.client.aclose()


def _httpx_client(
    url: str,
    headers: dict[str, str],
    timeout: float,
    auth: httpx.Auth | None,
    verify: Any,
    on_response: Callable[[Any], None],
    limits: tuple[int, float],
) -> httpx.AsyncClient:
    if isinstance(verify, (str, os.PathLike)):  # a CA bundle (httpx 0.28 wants a context)
        verify = ssl.create_default_context(cafile=os.fspath(verify))

    async def saw(resp: httpx.Response) -> None:
        on_response(resp)

    show_urls_in_httpx_log()  # httpx logs each request's URL: shown without its credentials
    return httpx.AsyncClient(
        # offered in TLS's ALPN (h2 is never used over cleartext: no import for http://)
        http2=url.lower().startswith("https:") and importlib.util.find_spec("h2") is not None,
        verify=verify,
        event_hooks={"response": [saw]},
        headers=headers,
        follow_redirects=True,
        auth=auth,
        timeout=httpx.Timeout(timeout, read=None),
        # max_keepalive_connections = max_connections: busy connections count against it
        limits=httpx.Limits(max_connections=limits[0], max_keepalive_connections=limits[0], keepalive_expiry=limits[1]),
    )


def lean_applies(url: str) -> bool:
    """Whether the lean client serves ``url``: plain http, no environment proxy for it."""
    if url[:7].lower() != "http://":
        return False
    from .._protocol._http1 import proxied, split_url

    try:
        origin = split_url(url)
    except ValueError:
        return False
    return not proxied(origin, urllib.request.getproxies())


def make_backend(
    url: str,
    *,
    headers: dict[str, str],
    timeout: float,
    auth: httpx.Auth | None,
    verify: Any,
    on_response: Callable[[Any], None],
    max_connections: int,
    keepalive_expiry: float,
) -> Backend:
    """The backend for ``url`` (the module docstring); the caller's own client is wrapped with
    ``HttpxBackend(client, own=False)`` instead."""
    limits = (max_connections, keepalive_expiry)

    if not lean_applies(url):
        return HttpxBackend(_httpx_client(url, headers, timeout, auth, verify, on_response, limits))
    from ._http1_client import LeanClient

    def fallback() -> HttpxBackend:  # a redirect off plain http (the lean client runs ``auth`` itself)
        return HttpxBackend(_httpx_client(url, headers, timeout, None, verify, on_response, limits))

    return LeanClient(
        headers=headers,
        timeout=timeout,
        auth=auth,
        max_connections=max_connections,
        keepalive_expiry=keepalive_expiry,
        fallback=fallback,
        on_response=on_response,
    )
