"""The inspector's web side: a plain ASGI app (the same stack as the Streamable HTTP server:
no web framework) serving one page, its static assets, and a small JSON API.

Security (the MCP Inspector's proxy had remote-code-execution holes: CVE-2025-49596 and
CVE-2025-58444, both reachable from a web page on another origin):

* bound to 127.0.0.1 only (the CLI refuses anything else);
* every request's ``Host`` must name this loopback address and port (DNS rebinding), and an
  ``Origin``, when sent, must be this page's own origin (by either loopback name): the checks of
  every mcpio HTTP app (``_protocol._http.check_host``/``check_origin``) with this address as
  the only allowed one; no CORS headers are ever sent;
* the page needs this inspector's session cookie (``HttpOnly``, ``SameSite=Strict``), and every
  API call the cookie and the page key (``X-Inspector-Key``), which only the one-time link
  ``mcpio inspect`` opened gives (:mod:`._signin`: the code works once, for a few minutes, and
  is never on a command line), so another local user or page cannot use the inspector;
* API writes must be ``Content-Type: application/json`` (no "simple" cross-site form posts);
  bodies are capped at :data:`MAX_BODY`;
* the page runs under a Content-Security-Policy that allows only its own scripts and styles
  (``default-src 'self'``), and it renders everything the server sends as text.
"""

from __future__ import annotations

import importlib.resources
import logging
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

import msgspec

from .._errors import MCPError
from .._protocol._http import check_host, check_origin
from ._export import call_command, pytest_source
from ._session import InspectorSession
from ._signin import CODE_SECONDS, SignIn

log = logging.getLogger("mcpio.inspect")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

MAX_BODY = 16 * 1024 * 1024
POLL_SECONDS = 20.0
STATIC = {
    "app.js": "text/javascript; charset=utf-8",
    "appview.js": "text/javascript; charset=utf-8",
    "tasks.js": "text/javascript; charset=utf-8",
    "skills.js": "text/javascript; charset=utf-8",
    "favicon.svg": "image/svg+xml",
    "app.css": "text/css; charset=utf-8",
    "index.html": "text/html; charset=utf-8",
}
CSP = (
    "default-src 'self'; img-src 'self' data:; media-src 'self' data:; style-src 'self'; "
    "script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'none'"
)
SECURITY_HEADERS = [  # _send adds the Content-Security-Policy: CSP, or the page's own (CSP with frame-src)
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _asset(name: str) -> bytes:
    return importlib.resources.files("mcpio._inspect").joinpath("static", name).read_bytes()


# What ``GET /?code=…`` answers once the cookie is set: a page of this origin that moves to
# ``/#k=KEY`` (a navigation started by the launcher file is cross-site: a redirect would not
# carry the SameSite=Strict cookie, a navigation from this page does; the fragment hands the
# page its key without sending it to any server).
SIGNED_IN = (
    '<!doctype html><meta charset="utf-8"><link rel="icon" href="/favicon.ico" type="image/svg+xml">'
    '<meta http-equiv="refresh" content="0;url=/#k={key}">'
    '<title>mcpio inspect</title><p>Signed in: <a href="/#k={key}">open mcpio inspect</a></p>\n'
)


class InspectorApp:
    """ASGI app: ``GET /?code=…`` signs a browser in, ``GET /`` the page, ``GET /static/*``,
    ``POST /api/*`` the JSON API. :meth:`new_code` makes the one-time code of the link."""

    def __init__(
        self,
        session: InspectorSession,
        *,
        port: int,
        initial: dict[str, Any] | None = None,
        code_seconds: float = CODE_SECONDS,
        frame_origin: str | None = None,
    ) -> None:
        self.session = session
        self.signin = SignIn(port, code_seconds=code_seconds)
        self.port = port
        self.initial = initial or {}  # what the page's connect form starts with (target, era, headers)
        self.hosts = (f"127.0.0.1:{port}", f"localhost:{port}")  # that port only: DNS rebinding
        self.origins = tuple(f"http://{h}" for h in self.hosts)  # this page's own origin only
        # the page may frame only the sandbox origin of MCP Apps views (:mod:`._sandbox`)
        frames = f" frame-src {frame_origin};" if frame_origin else ""
        self.page_csp = CSP.replace("default-src 'self';", "default-src 'self';" + frames, 1)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, self.session)
            return
        if scope["type"] != "http":
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            self._check_origin(headers)
            await self._route(scope, receive, send, headers)
        except _Refused as exc:
            log.info("refused %s %s: %s", scope.get("method"), scope.get("path"), exc)
            await _json(send, exc.status, {"error": {"message": str(exc)}})

    def _check_origin(self, headers: dict[str, str]) -> None:
        if check_host(headers, self.hosts) is not None:
            raise _Refused(403, "wrong Host header: open the inspector at the URL it printed")
        if check_origin(headers, self.origins) is not None:
            raise _Refused(403, "cross-origin request refused")

    def new_code(self) -> str:
        """The one-time code for the link that opens the page (see :mod:`._signin`)."""
        return self.signin.new_code()

    def _check_session(self, headers: dict[str, str], *, api: bool = True) -> None:
        """The session cookie, and for the API the page key too (see :mod:`._signin`)."""
        if not self.signin.has_session(headers.get("cookie")) or (
            api and not self.signin.has_key(headers.get("x-inspector-key"))
        ):
            raise _Refused(
                403,
                "not signed in: open the link that `mcpio inspect` printed (it works once, for a few "
                "minutes; restart mcpio inspect for a new one)",
            )

    async def _route(self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        method, path = scope["method"], scope["path"]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if method == "GET" and path == "/":
            if "code" in query and not self.signin.has_session(headers.get("cookie")):
                refused = self.signin.redeem(query["code"][0])
                if refused is not None:
                    raise _Refused(403, f"{refused}: restart mcpio inspect for a new link")
                cookie = [(b"set-cookie", self.signin.set_cookie())]
                page = SIGNED_IN.format(key=self.signin.page_key).encode()
                await _send(send, 200, page, STATIC["index.html"], cookie)
                return
            self._check_session(headers, api=False)
            await _send(send, 200, _asset("index.html"), STATIC["index.html"], csp=self.page_csp)
            return
        if method == "GET" and path.startswith("/static/"):
            name = path[len("/static/") :]
            if name not in STATIC or name == "index.html":
                raise _Refused(404, "no such file")
            await _send(send, 200, _asset(name), STATIC[name])
            return
        if method == "GET" and path == "/favicon.ico":  # browsers ask for it on every page
            await _send(send, 200, _asset("favicon.svg"), STATIC["favicon.svg"])
            return
        if not path.startswith("/api/"):
            raise _Refused(404, "no such page")
        op = path[len("/api/") :]
        if method == "GET" and op == "events":
            self._check_session(headers)
            after = int((query.get("after") or ["0"])[0] or 0) if (query.get("after") or ["0"])[0].isascii() else 0
            events = await self.session.wait(after, POLL_SECONDS)
            await _json(send, 200, {"events": events})
            return
        if method != "POST":
            raise _Refused(405, "use POST for the API")
        self._check_session(headers)
        if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            raise _Refused(415, "the API takes Content-Type: application/json")
        body = await _read(receive)
        try:
            data = msgspec.json.decode(body) if body else {}
        except msgspec.DecodeError:
            raise _Refused(400, "the body is not JSON") from None
        if not isinstance(data, dict):
            raise _Refused(400, "the body must be a JSON object")
        status, answer = await self._api(op, data)
        await _json(send, status, answer)

    async def _api(self, op: str, data: dict[str, Any]) -> tuple[int, Any]:
        s = self.session
        try:
            if op == "initial":
                return 200, {
                    **self.initial,
                    "connected": s.client is not None,
                    "connecting": s.connecting,
                    "info": s.info() if s.client is not None else None,
                    "seq": s.last_seq,
                }
            if op == "connect":
                headers = data.get("headers") or {}
                if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
                    raise _Refused(400, "headers must be an object of strings")
                target = str(data.get("target") or "").strip()
                if not target:
                    raise _Refused(400, "say which server to connect to (a .py file, a command line or a URL)")
                return 200, await s.connect(target, era=str(data.get("era") or "auto"), headers=headers)
            if op == "disconnect":
                await s.disconnect()
                return 200, {}
            if op == "request":
                params = data.get("params")
                result = await s.request(
                    str(data.get("method")),
                    params if isinstance(params, dict) else None,
                    call_id=str(data["call"]) if data.get("call") else None,
                )
                return 200, {"result": result}
            if op == "task":
                name, arguments = data.get("name"), data.get("arguments")
                if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
                    raise _Refused(400, "a task needs the tool's name and its arguments as an object")
                return 200, await s.start_task(name, arguments)
            if op == "skills":
                return 200, {"skills": await s.list_skills()}
            if op == "skill_file":
                return 200, {"text": await s.read_skill_file(str(data.get("skill")), str(data.get("uri")))}
            if op == "subscribe":
                await s.subscribe(str(data.get("uri")))
                return 200, {}
            if op == "cancel":
                return 200, {"cancelled": s.cancel(str(data.get("call")))}
            if op == "answer":
                return 200, {"answered": s.answer(str(data.get("id")), data.get("result"))}
            if op == "roots":
                roots = data.get("roots")
                if not isinstance(roots, list) or not all(
                    isinstance(r, dict) and isinstance(r.get("uri"), str) for r in roots
                ):
                    raise _Refused(400, "roots must be a list of {uri, name} objects")
                await s.set_roots(roots)
                return 200, {}
            if op == "export":
                history = data.get("history")
                if not isinstance(history, list):
                    raise _Refused(400, "history must be a list")
                era = self.initial.get("era", "auto")
                source = pytest_source(s.target or "", history, era=era, env=s.server_env, cwd=s.server_cwd)
                return 200, {"source": source}
            if op == "command":
                return 200, {"command": call_command(s.target or "", data.get("name"), data.get("arguments"))}
        except MCPError as exc:
            return 200, {"error": exc.to_error_object()}
        except LookupError as exc:
            return 409, {"error": {"message": str(exc)}}
        except _Refused:
            raise
        except Exception as exc:  # a failed connection or transport: say what happened, keep serving
            log.debug("inspector request failed", exc_info=True)
            return 502, {"error": {"message": f"{type(exc).__name__}: {exc}"}}
        raise _Refused(404, f"no API operation {op!r}")


async def _read(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Refused(400, "the request was cut off")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise _Refused(413, f"the body is over {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send(
    send: Send,
    status: int,
    body: bytes,
    content_type: str,
    extra: list[tuple[bytes, bytes]] | None = None,
    csp: str = CSP,
) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"content-security-policy", csp.encode()),
        *SECURITY_HEADERS,
        *(extra or []),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _default(obj: Any) -> Any:
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    raise TypeError(type(obj).__name__)


async def _json(send: Send, status: int, data: Any) -> None:
    await _send(send, status, msgspec.json.encode(data, enc_hook=_default), "application/json")


async def _lifespan(receive: Receive, send: Send, session: InspectorSession) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                await session.disconnect()
            except Exception:  # the inspected server may already be gone
                log.debug("disconnect at shutdown failed", exc_info=True)
            await send({"type": "lifespan.shutdown.complete"})
            return
