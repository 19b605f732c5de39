"""Calling an operation: arguments -> an HTTP request (httpx), the answer -> a tool result.

Path parameters are percent-escaped (a ``/`` in a value cannot reach another path), and a value
that would leave its segment empty, ``.`` or ``..`` is refused (RFC 3986 §5.2.4 dot-segment removal,
or a proxy merging ``//``, would send the request to another operation's path); query,
header and cookie values are written per their ``style``/``explode`` (OAS 3.x §4.8.12.4: form,
spaceDelimited, pipeDelimited, deepObject; simple, label, matrix in paths). Bodies are sent as
declared: JSON, ``application/x-www-form-urlencoded``, ``multipart/form-data`` (file fields arrive
base64-encoded) or text.

A 2xx JSON answer is the result's structuredContent (``{"result": …}`` when the output schema
wraps it) and its text; other 2xx answers are text (images: image content), except for a tool with
an output schema, which must answer structured content: there an answer that is not the JSON the
document describes is an ``isError`` result with its text. Any other status is
an ``isError`` result saying the method, path and status with the API's error body, cut to
``ERROR_BODY_CHARS``; an API that does not answer in time or cannot be reached is an ``isError``
result too: ``timeout`` bounds the whole call, the answer's body included (an answer trickling in
byte by byte never trips httpx's per-read timeout). Answers are read up to ``max_response_bytes``.
The tool result's text is then capped by the server's ``max_result_bytes`` like any tool's.

Credentials (:class:`Credentials`) come from configuration only, never from the MCP request: the
MCP client's token is for this server (spec 2025-11-25 basic/authorization §Token Passthrough).
No header value leaves with a line break or control character (RFC 9110 §5.5): an argument's is an
argument error, a configured one (``headers=``, ``credentials=``, a credential) an error naming the
header, never its value; a message never shows the user:password of the base URL either.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from .. import _log
from .._content import ToolResult
from .._shown import shown
from ._operations import CONTENT, Operation, Param
from ._redact import Redactor, credential_headers, header_text, redact_http_log, secret_values
from ._schemas import obj

if TYPE_CHECKING:
    import asyncio

    import httpx

log = _log.logger("mcpio.openapi", globals())
ERROR_BODY_CHARS = 2000
ENV_PREFIX = "MCPIO_OPENAPI_"
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # what no HTTP field value holds (tab aside)
_DOT_OR_EMPTY = ("", ".", "..")


def env_name(scheme: str) -> str:
    """The environment variable holding the credential of security scheme ``scheme``."""
    return ENV_PREFIX + re.sub(r"[^A-Za-z0-9]", "_", scheme).upper()


class Credentials:
    """The API credentials an operation's ``security`` asks for, from ``MCPIO_OPENAPI_<SCHEME>``
    environment variables (or ``secrets=``): a bearer token (http bearer, oauth2, openIdConnect),
    ``user:password`` (http basic) or the key (apiKey, in its header, query or cookie)."""

    def __init__(self, doc: dict[str, Any], secrets: Mapping[str, str] | None, environ: Mapping[str, str]) -> None:
        found = obj(obj(doc.get("components")).get("securitySchemes"))
        self.schemes: dict[str, dict[str, Any]] = {k: v for k, v in found.items() if isinstance(v, dict)}
        self.values: dict[str, str] = {}
        for name in self.schemes:
            value = ((secrets or {}).get(name) or environ.get(env_name(name)) or "").strip()  # a file's newline
            if value:
                self.values[name] = value

    def sent(self) -> list[str]:
        """Each credential as it goes out (a key, a token, ``Basic …``): what no answer may show."""
        return [
            _basic(value) if self._is_basic(self.schemes[name]) else value for name, value in self.values.items()
        ] + list(self.values.values())

    @staticmethod
    def _is_basic(scheme: dict[str, Any]) -> bool:
        return scheme.get("type") == "http" and str(scheme.get("scheme", "")).lower() == "basic"

    def apply(self, op: Operation, headers: dict[str, Any], params: list[tuple[str, str]], cookies: list[str]) -> None:
        for requirement in op.security or ():
            if not isinstance(requirement, dict):
                continue
            if all(name in self.values for name in requirement):  # {} (no credentials needed) included
                for name in requirement:
                    self._one(name, headers, params, cookies)
                return

    def _one(self, name: str, headers: dict[str, Any], params: list[tuple[str, str]], cookies: list[str]) -> None:
        scheme, value = self.schemes[name], self.values[name]
        kind = scheme.get("type")
        if kind == "apiKey":
            where, key = scheme.get("in"), str(scheme.get("name", ""))
            if where == "query":
                params[:] = [(k, v) for k, v in params if k != key]
                params.append((key, value))
            elif where == "cookie":
                cookies[:] = [c for c in cookies if c.split("=", 1)[0] != key]
                cookies.append(f"{key}={value}")
            else:
                put(headers, key, value)
        elif self._is_basic(scheme):
            put(headers, "Authorization", _basic(value))
        else:  # http bearer, oauth2, openIdConnect: a token
            put(headers, "Authorization", f"Bearer {value}")


def _basic(pair: str) -> str:
    return "Basic " + base64.b64encode(pair.encode()).decode()


def put(headers: dict[str, Any], key: str, value: Any) -> None:
    """Set header ``key``, removing any other spelling of it: a configured value (``headers=``, a
    credential, the ``credentials=`` hook) replaces an argument's rather than going beside it (an
    API reads the first of two, which was the model's). Query and cookie credentials likewise."""
    for other in [k for k in headers if k.lower() == key.lower()]:
        del headers[other]
    headers[key] = value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _parts(value: Any, explode: bool, escape: Callable[[str], str]) -> list[str]:
    """The items of a simple, label or matrix value: an object's ``key=value`` pairs exploded,
    else its keys and values in turn; a list's items; a value alone (OAS 3.1 §4.8.12.4)."""
    if isinstance(value, dict):
        pairs = [(escape(str(k)), escape(_text(v))) for k, v in value.items()]
        return [f"{k}={v}" for k, v in pairs] if explode else [x for kv in pairs for x in kv]
    if isinstance(value, list):
        return [escape(_text(v)) for v in value]
    return [escape(_text(value))]


def _path_value(p: Param, value: Any) -> str:
    """A path parameter's text (style simple, label or matrix), escaped: for an object
    ``{"role": "admin", "firstName": "Alex"}`` exploded, ``role=admin,firstName=Alex``,
    ``.role=admin.firstName=Alex``, ``;role=admin;firstName=Alex`` (OAS 3.1 §4.8.12.4)."""
    parts = _parts(value, p.explode, lambda x: quote(x, safe=""))
    if p.style == "label":
        return "." + ("." if p.explode else ",").join(parts)
    if p.style == "matrix":
        if p.explode and isinstance(value, dict):
            return "".join(f";{x}" for x in parts)
        if p.explode and isinstance(value, list):
            return "".join(f";{p.name}={x}" for x in parts)
        return f";{p.name}=" + ",".join(parts)
    return ",".join(parts)


def _query(p: Param, value: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(value, dict):
        if p.style == "deepObject":
            out.extend((f"{p.name}[{k}]", _text(v)) for k, v in value.items())
        elif p.explode:
            out.extend((k, _text(v)) for k, v in value.items())
        else:
            out.append((p.name, ",".join(x for k, v in value.items() for x in (k, _text(v)))))
    elif isinstance(value, list):
        if p.explode and p.style == "form":
            out.extend((p.name, _text(v)) for v in value)
        else:
            sep = {"spaceDelimited": " ", "pipeDelimited": "|"}.get(p.style, ",")
            out.append((p.name, sep.join(_text(v) for v in value)))
    else:
        out.append((p.name, _text(value)))


def build_request(op: Operation, arguments: dict[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``httpx.AsyncClient.build_request`` for ``arguments`` (path
    relative to the base URL). Raises ValueError for a file argument that is not base64."""
    path = op.path
    params: list[tuple[str, str]] = []
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for p in op.params:
        if p.arg not in arguments or arguments[p.arg] is None:
            if p.location == "path":
                raise ValueError(f"argument {p.arg!r} needs a value: it is part of the path {op.path}")
            continue
        value = arguments[p.arg]
        if p.style == CONTENT:  # serialised as its media type, JSON, not per a style (OAS 3.1 §4.8.12.2)
            value = json.dumps(value, separators=(",", ":"))  # a string too: "abc" is the JSON text "abc"
        if p.location == "path":
            path = path.replace("{" + p.name + "}", _path_value(p, value))
        elif p.location == "query":
            _query(p, value, params)
        elif p.location == "header":
            headers[p.name] = ",".join(_parts(value, p.explode, str))  # style simple
            if _CONTROL.search(headers[p.name]):
                raise ValueError(
                    f"argument {p.arg!r} is an HTTP header: it cannot hold line breaks or control characters"
                )
        else:
            cookies.append(f"{p.name}={quote(_text(value), safe='')}")
    _check_segments(op.path, path)
    request: dict[str, Any] = {"method": op.method, "url": path.lstrip("/"), "params": params, "headers": headers}
    if op.body_kind is not None:
        if op.body_args is not None:
            body: Any = {k: arguments[k] for k in op.body_args if k in arguments}
            present = bool(body)
        else:
            body, present = arguments.get("body"), "body" in arguments
        if present:
            _body(op, body, request)
    request["cookies"] = cookies
    return request


def _check_segments(template: str, path: str) -> None:
    """Each segment of ``path`` is its template segment's: values are escaped (no ``/``), so the
    segments line up one to one; one that a value leaves empty, ``.`` or ``..`` is refused."""
    for before, after in zip(template.split("/"), path.split("/"), strict=False):
        if after != before and after in _DOT_OR_EMPTY:
            raise ValueError(
                f"the path {template} cannot have its segment {before!r} be {after!r} (that is another path): "
                "pass the value the parameter names"
            )


def _body(op: Operation, body: Any, request: dict[str, Any]) -> None:
    kind = op.body_kind
    if kind == "json":
        request["content"] = json.dumps(body, separators=(",", ":")).encode()
        request["headers"]["Content-Type"] = op.body_media if "json" in op.body_media else "application/json"
    elif kind == "text":
        request["content"] = _text(body).encode()
        request["headers"]["Content-Type"] = op.body_media
    elif kind == "form" and isinstance(body, dict):
        request["data"] = {k: [_text(x) for x in v] if isinstance(v, list) else _text(v) for k, v in body.items()}
    elif kind == "multipart" and isinstance(body, dict):
        files: list[tuple[str, tuple[str, bytes, str]]] = []
        data: dict[str, Any] = {}
        for k, v in body.items():
            if k in op.files:
                for i, item in enumerate(v if isinstance(v, list) else [v]):
                    try:
                        raw = base64.b64decode(str(item), validate=True)
                    except (binascii.Error, ValueError):
                        raise ValueError(f"argument {k!r} must be the file's content, base64-encoded") from None
                    files.append((k, (f"{k}{i or ''}", raw, "application/octet-stream")))
            else:
                data[k] = [_text(x) for x in v] if isinstance(v, list) else _text(v)
        request["data"], request["files"] = data, files or None
    else:
        raise ValueError(f"the request body must be an object of fields for {op.body_media}")


def api_client(timeout: float, **options: Any) -> httpx.AsyncClient:
    """The httpx client mcpio makes for an API: no redirects followed, and no cookie jar. One server
    serves every MCP client (and, with ``credentials=``, every principal) through it: a cookie the
    API sets on one call (a session) would go out with the next, which may be another user's."""
    from http.cookiejar import CookieJar, DefaultCookiePolicy

    import httpx

    class _Refuse(DefaultCookiePolicy):
        def set_ok(self, cookie: Any, request: Any) -> bool:
            return False

    return httpx.AsyncClient(timeout=timeout, follow_redirects=False, cookies=CookieJar(policy=_Refuse()), **options)


class Caller:
    """Serves the operations of one API: one httpx client, made on first use for the serving loop,
    and made again when the server is served on another loop (a pooled connection belongs to the
    loop that opened it: reused from a later ``asyncio.run`` it fails, "Event loop is closed"). A
    ``client=`` of the user's is theirs to keep on one loop."""

    def __init__(
        self,
        base_url: str,
        *,
        client: httpx.AsyncClient | None,
        make_client: Callable[[], httpx.AsyncClient],
        headers: Mapping[str, str] | None,
        credentials: Credentials,
        auth_hook: Callable[..., Any] | None,
        max_response_bytes: int,
        timeout: float,
        public_headers: frozenset[str] = frozenset(),
    ) -> None:
        self.timeout = timeout  # the whole call's, answer read included (httpx's are per read)
        self.base_url = base_url.rstrip("/") + "/"
        self.shown_url = shown(self.base_url)
        self.client, self._make = client, make_client
        self._loop: object = None  # the loop of the client made here (None: none made, or the user's)
        self._making: tuple[object, asyncio.Future[httpx.AsyncClient]] | None = None  # (loop, the client being made)
        self.headers, self.public_headers = dict(headers or {}), public_headers  # public: lower-case names
        self.credentials = credentials
        self.auth_hook = auth_hook
        self._watch = client is not None or auth_hook is not None  # a request may carry more than configured
        self.max_response_bytes = max_response_bytes
        user, password = urlsplit(base_url).username or "", urlsplit(base_url).password or ""
        userinfo = [unquote(password), f"{unquote(user)}:{unquote(password)}"] if password else []
        # httpx logs a request's URL before its answer comes (redact_http_log): the query of a
        # client= of the user's is redacted from the start; the rest of a request is (send).
        query = [v for _, v in client.params.multi_items()] if client is not None else []
        configured = [*credential_headers(self.headers, public_headers), *credentials.sent(), *userinfo, *query]
        self._secrets = secret_values(configured)  # what no text returned shows (._redact)
        self._redact = Redactor(self._secrets)
        redact_http_log(self._redact if self._secrets else None)  # httpx logs each request's URL

    async def call(self, op: Operation, arguments: dict[str, Any], ctx: Any) -> ToolResult:
        """The tool result of ``op`` called with ``arguments`` (module docstring)."""
        sent = await self.send(op, arguments, ctx)
        return _error(sent) if isinstance(sent, str) else answer(op, *sent)

    async def send(
        self, op: Operation, arguments: dict[str, Any], ctx: Any
    ) -> tuple[httpx.Response, bytes, Redactor] | str:
        """The API's answer, its body and what to redact from it, or why there is none (a message
        for the model, redacted): every configured credential and what the request carried as it
        went out but for what the arguments put there (:func:`_carried`: the ``credentials=``
        hook's headers, a ``client=``'s own headers, query, cookies and what its auth added)."""
        went: list[Any] = []  # (the requests sent, the arguments' headers, query, cookies; the query built)
        sent = await self._send(op, arguments, ctx, went)
        if not self._watch:  # mcpio's own client (no auth, headers, query) sends the configuration alone
            went = []
        redact = self._redact
        if went and (carried := secret_values(_carried(*went, public=self.public_headers)) - self._secrets):
            redact = _redactor(self._secrets | carried)
        return redact(sent) if isinstance(sent, str) else (*sent, redact)

    async def _send(
        self, op: Operation, arguments: dict[str, Any], ctx: Any, went: list[Any]
    ) -> tuple[httpx.Response, bytes] | str:
        import asyncio

        try:
            spec = build_request(op, arguments)
        except ValueError as exc:
            from .._schema import ArgumentError

            return str(ArgumentError(str(exc), op.name))
        headers: dict[str, Any] = spec.pop("headers")
        for key, value in self.headers.items():
            if key.lower() != "content-type" or "Content-Type" not in headers:  # the body's own type stays
                put(headers, key, value)
        cookies: list[str] = spec.pop("cookies")
        given = (dict(headers), list(spec["params"]), list(cookies))  # the arguments' (before configuration's)
        self.credentials.apply(op, headers, spec["params"], cookies)
        if self.auth_hook is not None:  # the documented hook: the verified principal -> API credentials
            try:
                extra = self.auth_hook(ctx)
                if hasattr(extra, "__await__"):
                    extra = await extra
            except Exception as exc:  # a cancellation (BaseException) goes on
                return self._hook_failed(op, exc, ctx)
            for key, value in dict(extra or {}).items():
                put(headers, key, value)
        if cookies:
            put(headers, "Cookie", "; ".join(cookies))
        for key, value in headers.items():
            if not isinstance(value, (str, bytes)):
                continue
            text = value if isinstance(value, str) else header_text(value)
            if _CONTROL.search(text):  # not an argument's (build_request checked those): configuration's
                return (
                    f"{op.label}: the {key} header configured for the API (headers=, credentials= or an "
                    f"{ENV_PREFIX}* credential) holds a line break or control character; the server's operator must fix it"
                )
            if isinstance(value, str) and not value.isascii():
                headers[key] = value.encode()  # UTF-8 (RFC 9110 §5.5 obs-text); httpx would refuse it
        try:
            client = await self._client()
        except OSError as exc:  # ssl.SSLError is one: the certificates configured (SSL_CERT_FILE)
            return (
                f"{op.label}: cannot make the HTTP client for the API ({type(exc).__name__}: {exc}); the server's "
                "operator must fix its certificates (SSL_CERT_FILE, SSL_CERT_DIR)"
            )
        import httpx  # imported by then (on the worker thread that made the client, or by its maker)

        request = client.build_request(url=self.base_url + spec.pop("url"), headers=headers, **spec)
        went[:] = [[request], *given, request.url.query]  # an auth flow changes it in place or sends others
        try:
            async with asyncio.timeout(self.timeout):  # an answer trickling in never times out a read
                response = await client.send(request, stream=True)
                went[0] = [r.request for r in (*response.history, response)]
                try:
                    return response, await _read(response, self.max_response_bytes)
                finally:
                    await response.aclose()
        except TimeoutError:
            return f"{op.label}: the API did not answer within the timeout ({self.timeout} s)"
        except _TooLarge as exc:
            return f"{op.label}: the API's answer is over {exc.args[0]:,} bytes (max_response_bytes); not read"
        except httpx.TimeoutException:
            return f"{op.label}: the API did not answer within the timeout ({client.timeout.read} s)"
        except httpx.HTTPError as exc:
            return f"{op.label}: cannot reach the API at {self.shown_url} ({type(exc).__name__}: {exc})"

    def _hook_failed(self, op: Operation, exc: Exception, ctx: Any) -> str:
        """The message for the model when the ``credentials=`` hook raised: the server's fault, not
        the caller's, with the exception's type and text (the type only where the session hides
        exceptions' text, ``expose_errors``), as a tool's exception is; logged as one ERROR line,
        the traceback at DEBUG. Every configured credential is redacted from all three."""
        import traceback

        from .._errors import HIDDEN_DETAIL
        from .._server._tools import _expose, _summary

        summary = self._redact(_summary(exc))
        log.error("%s: the credentials hook failed: %s", op.label, summary)
        log.debug("the credentials hook's traceback:\n%s", self._redact("".join(traceback.format_exception(exc))))
        shown = summary if _expose(getattr(ctx, "session", None)) else f"{type(exc).__name__}, {HIDDEN_DETAIL}"
        return f"{op.label}: the server's credentials hook failed ({shown}); the server's operator must fix it"

    async def _client(self) -> httpx.AsyncClient:
        """The client for the running loop, made on a thread of its own: making the first one
        imports httpx and loads the certificate store (0.15-0.35 s), which on the loop would stall
        every other request (and the loop watchdog would blame the generated tool); on the loop's
        default executor it would wait for a free worker, which the application's ``to_thread``
        calls may all hold. Concurrent first calls share one."""
        import asyncio

        loop = asyncio.get_running_loop()
        if self.client is not None and (self._loop is None or self._loop is loop):
            return self.client
        if self._making is None or self._making[0] is not loop:
            self._making = (loop, on_a_thread(loop, self._make))
        making = self._making[1]
        try:
            client = await asyncio.shield(making)
        except BaseException:
            if making.done() and self._making is not None and self._making[1] is making:
                self._making = None  # it failed: the next call tries again
            raise
        self.client, self._loop = client, loop
        return client


# A credentials= hook returns its caller's token on each call: the redactor of a set of values is
# made once (~1 ms of pattern building), for the last 128 sets seen.
_redactor = lru_cache(maxsize=128)(Redactor)


def _carried(
    requests: list[httpx.Request],
    headers: dict[str, str],
    params: list[tuple[str, str]],
    cookies: list[str],
    built: bytes,
    *,
    public: frozenset[str],
) -> list[str]:
    """The values ``requests`` carried as they went out (headers, but those that carry no
    credential and the ``public`` ones, :func:`credential_headers`; query parameters; cookies), but for the arguments'
    ``headers``, ``params`` and ``cookies``: what configuration, the ``credentials=`` hook, a
    ``client=``'s own settings and its auth flow put there, which no answer may show. A query is
    read only when it is not the ``built`` one (an auth flow or a redirect changed it): the built
    one holds the arguments and the values ``Caller`` redacts from the start."""
    found: list[str] = []
    given = {k.lower(): v for k, v in headers.items()}
    for request in requests:
        sent: list[tuple[str, str]] = []
        for raw_key, raw_value in request.headers.raw:
            key, value = raw_key.decode("latin-1").lower(), header_text(raw_value)
            if key == "cookie":
                value = "; ".join(c for c in value.split("; ") if c not in cookies)
            if value and given.get(key) != value:
                sent.append((key, value))
        found += credential_headers(sent, public)
        if request.url.query == built:  # arguments, credentials and the client's query: known already
            continue
        query = request.url.params.multi_items()
        for pair in params:  # each argument's once (a list argument repeats its name)
            if pair in query:
                query.remove(pair)
        found += [v for _, v in query]
    return found


def on_a_thread(loop: asyncio.AbstractEventLoop, make: Callable[[], Any], name: str = "client") -> asyncio.Future[Any]:
    """``make()`` run on a new daemon thread (it never delays the process's exit), its outcome
    the future's; a loop closed meanwhile drops it."""
    import threading

    future = loop.create_future()

    def settle(outcome: Any, failed: bool) -> None:
        if future.done():
            return
        if failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)

    def run() -> None:
        try:
            outcome, failed = make(), False
        except BaseException as exc:  # the caller's to see, as run_in_executor would
            outcome, failed = exc, True
        try:
            loop.call_soon_threadsafe(settle, outcome, failed)
        except RuntimeError:  # the loop is closed: no one waits
            pass

    threading.Thread(target=run, name=f"mcpio-openapi-{name}", daemon=True).start()
    return future


class _TooLarge(Exception):
    pass


async def _read(response: httpx.Response, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise _TooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)


def answer(op: Operation, response: httpx.Response, body: bytes, redact: Redactor, tool: bool = True) -> ToolResult:
    """The tool result for the API's answer (module docstring), every configured credential
    redacted from its text (an API may echo the request); ``tool=False``: a resource's contents,
    whose text needs no structured content."""
    media = response.headers.get("content-type", "").split(";")[0].strip().lower()
    is_json = media == "application/json" or media.endswith("+json")
    raw = body.decode(response.encoding or "utf-8", "replace")
    text = redact(raw)
    success = 200 <= response.status_code < 300
    data: Any = None  # the answer's JSON, redacted value by value (Redactor.json), when it is JSON
    is_json = is_json and bool(body)
    structured = success and tool and op.output_schema is not None
    if body and (structured or (is_json and (not success or text != raw))):  # else the text goes as it is
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):  # nested deeper than the interpreter's stack: no JSON to use
            is_json = False
        else:
            is_json = True
            if text != raw:
                data = redact.json(data)
                text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    if not success:
        if is_json:
            text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        cut = f"… ({len(text) - ERROR_BODY_CHARS:,} more characters)" if len(text) > ERROR_BODY_CHARS else ""
        where = f" (Location: {response.headers['location']})" if "location" in response.headers else ""
        status = redact(f"{response.status_code} {response.reason_phrase}{where}")  # a reason may echo too
        return _error(f"{op.label} failed: HTTP {status}\n{text[:ERROR_BODY_CHARS]}{cut}")
    if structured:  # structured content or an error, never bare text (_operations._output)
        content = ({"result": data} if op.wrap_output else data) if is_json else None
        if isinstance(content, dict):
            return ToolResult(content=[{"type": "text", "text": text}], structured_content=content)
        what = (media or "no content type") if body else "no content"
        return _error(
            f"{op.label}: the API answered HTTP {response.status_code} with {what}, not the JSON its OpenAPI "
            f"document describes (serve it with output_schemas=False if it answers so)\n{text[:ERROR_BODY_CHARS]}"
        )
    if not body:
        return ToolResult(content=[{"type": "text", "text": f"{op.label}: HTTP {response.status_code} (no content)"}])
    if media.startswith("image/"):
        if media == "image/svg+xml" and text != raw:  # XML text: what it spells reaches whoever reads it
            body = text.encode()
        data = base64.b64encode(body).decode()
        return ToolResult(content=[{"type": "image", "data": data, "mimeType": media}])
    return ToolResult(content=[{"type": "text", "text": text}])


def _error(message: str) -> ToolResult:
    return ToolResult(content=[{"type": "text", "text": message}], is_error=True)
