"""The user-agent step of the authorization code flow: show the user the authorization URL and
bring back the redirect URL (with ``code``, ``state`` and maybe ``iss``).

* :class:`LoopbackBrowser` (the default): opens the system browser and waits for the redirect
  on a one-shot listener at ``http://127.0.0.1:<port>/callback`` (RFC 8252 §7.3; a random free
  port unless one is given). Only a request carrying the expected ``state`` ends the wait; any
  other request gets a 400 and is otherwise ignored. When no browser can be opened the URL is
  printed for the user to open, or, with ``wait_for_url=False`` (nobody reads the announcement:
  a proxy's upstream, the stdio bridge whose stderr is a host's log), the login fails at once
  saying to run ``mcpio login``.
* Any callable ``fn(authorization_url) -> redirect_url`` (sync or async) with a fixed
  ``redirect_uri``: an app's own UI, or :func:`fetch_redirect` for an authorization server
  that approves without a user (test servers, the conformance suite's mock).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import sys
import webbrowser
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

MAX_REQUEST_HEAD = 16 * 1024

_PAGE = b"<!doctype html><meta charset=utf-8><title>mcpio</title><p>%s</p><p>You can close this window.</p>"


class UserAgentSession(Protocol):
    redirect_uri: str

    async def authorize(self, url: str) -> str: ...


class UserAgent(Protocol):
    """Anything that can open a :class:`UserAgentSession` (an async context manager)."""

    def session(self) -> contextlib.AbstractAsyncContextManager[UserAgentSession]: ...


class _Fixed:
    def __init__(self, fn: Callable[[str], Any], redirect_uri: str) -> None:
        self.redirect_uri = redirect_uri
        self._fn = fn

    async def authorize(self, url: str) -> str:
        out = self._fn(url)
        if inspect.isawaitable(out):
            out = await out
        if not isinstance(out, str):
            raise TypeError("the user agent callable must return the redirect URL (a str)")
        return out


class CallableUserAgent:
    """A user agent made of ``fn(authorization_url) -> redirect_url`` and a fixed redirect URI."""

    def __init__(self, fn: Callable[[str], str | Awaitable[str]], redirect_uri: str) -> None:
        self.fn = fn
        self.redirect_uri = redirect_uri

    @contextlib.asynccontextmanager
    async def session(self) -> AsyncIterator[UserAgentSession]:
        yield _Fixed(self.fn, self.redirect_uri)


class LoopbackBrowser:
    """The system browser plus a one-shot redirect listener on 127.0.0.1 (see the module doc).

    ``port``: 0 for a free port (the default), or a fixed one when the client's registration
    names it. ``open_browser(url) -> bool`` defaults to :func:`webbrowser.open`; ``announce``
    (default: print to stderr) tells the user what is happening and gives the URL. ``timeout``
    bounds the wait for the user (seconds). ``wait_for_url``: when no browser opens, announce
    the URL and wait for the user (True), or raise :class:`AuthorizationError` at once naming
    ``mcpio login RESOURCE`` (False: for a process whose stderr no user watches).
    """

    def __init__(
        self,
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        path: str = "/callback",
        timeout: float = 300.0,
        open_browser: Callable[[str], bool] | None = None,
        announce: Callable[[str], None] | None = None,
        wait_for_url: bool = True,
    ) -> None:
        self.port = port
        self.host = host
        self.path = path
        self.timeout = timeout
        self.open_browser = open_browser or webbrowser.open
        self.announce = announce or (lambda text: print(text, file=sys.stderr, flush=True))
        self.wait_for_url = wait_for_url

    @contextlib.asynccontextmanager
    async def session(self, *, reuse: Sequence[str] = ()) -> AsyncIterator[UserAgentSession]:
        """A listener for one login. ``reuse``: redirect URIs this client registered earlier;
        with ``port=0`` the listener takes the port of the first of them that names this host
        and path and is free, so that registration serves again (an authorization server that
        matches redirect URIs exactly, ignoring RFC 8252 §7.3, would otherwise need a new one
        for every login); else any free port."""
        waiters: dict[str, asyncio.Future[str]] = {}

        def handler(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> Awaitable[None]:
            return self._handle(r, w, waiters)

        server = None
        for uri in reuse if self.port == 0 else ():
            parts = urlsplit(uri)
            if parts.scheme == "http" and parts.hostname == self.host and parts.path == self.path and parts.port:
                with contextlib.suppress(OSError):
                    server = await asyncio.start_server(handler, self.host, parts.port)
                    break
        if server is None:
            server = await asyncio.start_server(handler, self.host, self.port)
        try:
            port = server.sockets[0].getsockname()[1]
            yield _LoopbackSession(self, f"http://{self.host}:{port}{self.path}", waiters)
        finally:
            server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)

    async def _handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, waiters: dict[str, asyncio.Future[str]]
    ) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            writer.close()
            return
        status, text = b"404 Not Found", b"Not the authorization callback."
        try:
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            parts = urlsplit(target)
            if method == "GET" and parts.path == self.path:
                state = (parse_qs(parts.query).get("state") or [""])[0]
                fut = waiters.get(state)
                if fut is not None and not fut.done():
                    fut.set_result(f"http://{self.host}:{writer.get_extra_info('sockname')[1]}{target}")
                    status, text = b"200 OK", b"Authorization received by mcpio."
                else:
                    status, text = b"400 Bad Request", b"This callback does not match the login in progress (state)."
        except ValueError:
            status, text = b"400 Bad Request", b"Malformed request."
        body = _PAGE % text
        writer.write(
            b"HTTP/1.1 "
            + status
            + b"\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: "
            + str(len(body)).encode()
            + b"\r\nconnection: close\r\ncache-control: no-store\r\n\r\n"
            + body
        )
        with contextlib.suppress(OSError):
            await writer.drain()
        writer.close()


class _LoopbackSession:
    def __init__(self, owner: LoopbackBrowser, redirect_uri: str, waiters: dict[str, asyncio.Future[str]]) -> None:
        self.owner = owner
        self.redirect_uri = redirect_uri
        self._waiters = waiters

    async def authorize(self, url: str) -> str:
        state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
        fut: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._waiters[state] = fut
        try:
            opened = False
            with contextlib.suppress(Exception):
                opened = bool(await asyncio.to_thread(self.owner.open_browser, url))
            if opened:
                self.owner.announce(f"Opened your browser to log in. If it did not open, visit:\n  {url}")
            elif not self.owner.wait_for_url:
                from ._discovery import AuthorizationError

                server = (parse_qs(urlsplit(url).query).get("resource") or ["URL"])[0]
                raise AuthorizationError(
                    f"{server} needs a login and no browser could be opened here: "
                    f"run `mcpio login {server}` in a terminal, then try again"
                )
            else:
                self.owner.announce(f"Open this URL in a browser to log in:\n  {url}")
            try:
                return await asyncio.wait_for(fut, self.owner.timeout)
            except TimeoutError:
                from ._discovery import AuthorizationError

                raise AuthorizationError(
                    f"no login completed within {self.owner.timeout:.0f} s (the browser never "
                    f"came back to {self.redirect_uri}); run the login again"
                ) from None
        finally:
            self._waiters.pop(state, None)


async def fetch_redirect(url: str) -> str:
    """GET the authorization URL without following redirects and return the ``Location``: the
    user agent for an authorization server that approves without a user (tests, conformance)."""
    import httpx

    async with httpx.AsyncClient(follow_redirects=False, timeout=30) as http:
        resp = await http.get(url)
    location: str | None = resp.headers.get("location")
    if resp.status_code not in (301, 302, 303, 307, 308) or not location:
        from ._discovery import AuthorizationError

        raise AuthorizationError(
            f"the authorization endpoint answered HTTP {resp.status_code} without a redirect; "
            "it needs a user (use the browser user agent)"
        )
    return location
