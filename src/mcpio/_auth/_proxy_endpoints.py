"""The HTTP endpoints of the OAuth proxy (:class:`ProxyGuard`), in ASGI.

``/.well-known/oauth-authorization-server`` (RFC 8414), ``/jwks``, ``/register`` (RFC 7591),
``/authorize`` → the upstream IdP → ``/callback`` → the consent screen → ``POST /consent`` →
the client's redirect URI with ``code``, ``state`` and ``iss`` (RFC 9207), and ``/token``
(authorization_code with PKCE, refresh_token with rotation). Any other request goes to the
resource server guard the proxy wraps. Errors follow RFC 6749 §4.1.2.1 / §5.2: a bad client or
redirect URI is answered here (never redirected to an unverified URI); the rest go back to the
client's redirect URI. Secrets (client secrets, codes, tokens) never appear in a log line.
"""

from __future__ import annotations

import base64
import html
import json
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlencode

from ._jwks import AuthUnavailable
from ._proxy_rules import (
    MAX_REGISTRATION,
    OAuthError,
    _Code,
    _Family,
    _Login,
    check_challenge,
    check_verifier,
    digest,
    redirect_matches,
    s256,
    same_secret,
    token,
)
from ._resource import _json, _raw

if TYPE_CHECKING:
    from ._proxy import OAuthProxy

log = logging.getLogger("mcpio.auth")

MAX_FORM = 64 * 1024
COOKIE = "mcpio_oauth_"
_PRAGMA = [(b"pragma", b"no-cache")]  # _json already says cache-control: no-store
_NO_STORE = [(b"cache-control", b"no-store"), *_PRAGMA]


class TooLarge(Exception):
    pass


async def _body(receive: Any, limit: int) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message.get("type") != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _headers(scope: dict[str, Any]) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or ()}


def _cookies(headers: dict[str, str]) -> dict[str, str]:
    out = {}
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name.startswith(COOKIE):
            out[name] = value
    return out


class ProxyGuard:
    """The ASGI guard of an :class:`OAuthProxy` (``http_app(auth=proxy)`` installs it)."""

    def __init__(self, proxy: OAuthProxy, inner: Any) -> None:
        self.proxy = proxy
        self.inner = inner
        p = proxy.prefix
        self.routes = {
            "/.well-known/oauth-authorization-server" + p: self.metadata,
            p + "/jwks": self.jwks,
            p + "/register": self.register,
            p + "/authorize": self.authorize,
            p + "/callback": self.callback,
            p + "/consent": self.consent,
            p + "/token": self.token,
        }
        self._metadata = json.dumps(proxy.metadata()).encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        path = scope.get("path", "/")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        handler = self.routes.get(path)
        if handler is None:
            return await self.inner(scope, receive, send)
        try:
            await handler(scope, receive, send)
        except OAuthError as exc:
            extra = [(b"www-authenticate", b'Basic realm="token"')] if exc.status == 401 else []  # RFC 6749 §5.2
            await _json(send, exc.status, exc.body(), [*_PRAGMA, *extra])
        except TooLarge:
            await _json(send, 413, {"error": "invalid_request", "error_description": "the request body is too large"})
        return None

    # ------------------------------------------------------------------ discovery
    async def metadata(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        cors = [(b"access-control-allow-origin", b"*")]
        await _raw(
            send,
            200,
            self._metadata,
            cors + [(b"content-type", b"application/json"), (b"cache-control", b"max-age=3600")],
        )

    async def jwks(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await _raw(
            send,
            200,
            json.dumps(self.proxy._jwks).encode(),
            [(b"content-type", b"application/json"), (b"access-control-allow-origin", b"*")],
        )

    # ------------------------------------------------------------------ RFC 7591
    async def register(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("method") != "POST":
            raise OAuthError("invalid_request", "register a client with POST and a JSON body (RFC 7591)", 405)
        try:
            body = await _body(receive, MAX_REGISTRATION)
        except TooLarge:
            raise OAuthError(
                "invalid_client_metadata", f"the registration request is over {MAX_REGISTRATION} bytes", 413
            ) from None
        try:
            doc = json.loads(body)
        except ValueError:
            raise OAuthError("invalid_client_metadata", "the registration request must be a JSON object") from None
        out = self.proxy.register(doc)
        log.info("registered client %s (%s)", out["client_id"], str(out.get("client_name", ""))[:80])
        await _json(send, 201, out, _PRAGMA)

    # ------------------------------------------------------------------ authorization
    async def authorize(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        q = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        try:
            client = await self.proxy.find_client(q.get("client_id"))
        except OAuthError as exc:
            return await self._page(send, 400, "Unknown application", exc.description)
        redirect = q.get("redirect_uri")
        given = redirect is not None
        if redirect is None and len(client.redirect_uris) == 1:
            redirect = client.redirect_uris[0]
        if not redirect or not redirect_matches(redirect, client.redirect_uris):
            return await self._page(
                send,
                400,
                "Invalid redirect URI",
                "the redirect_uri is not one the client registered; nothing was sent to it",
            )
        state = q.get("state")
        try:
            if q.get("response_type") != "code":
                raise OAuthError("unsupported_response_type", "response_type must be code")
            challenge = check_challenge(q.get("code_challenge"), q.get("code_challenge_method"))
            scopes = self._scopes(q.get("scope"), client.scope)
            resource = self._resource(q.get("resource"))
        except OAuthError as exc:
            return await self._redirect(
                send, _back(redirect, state, self.proxy.issuer, error=exc.error, error_description=exc.description)
            )
        browser = token(24)
        login = _Login(
            client,
            redirect,
            state,
            challenge,
            scopes,
            resource,
            digest(browser),
            token(24),
            token(48),
            redirect_given=given,
        )
        self.proxy._logins.put(login.upstream_state, login)
        up = self.proxy.upstream
        target = (
            up.authorize_url
            + ("&" if "?" in up.authorize_url else "?")
            + urlencode(
                {
                    "response_type": "code",
                    "client_id": up.client_id,
                    "redirect_uri": self.proxy.callback_url,
                    "scope": " ".join(up.scopes),
                    "state": login.upstream_state,
                    "code_challenge": s256(login.upstream_verifier),
                    "code_challenge_method": "S256",
                }
            )
        )
        await self._redirect(send, target, [self._cookie(login.upstream_state, browser, self.proxy.login_ttl)])
        return None

    async def callback(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """The upstream IdP's redirect: check ``state`` and the browser, exchange the code."""
        q = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        login = self.proxy._logins.pop(q.get("state", "")) if q.get("state") else None
        if login is None:
            return await self._page(
                send,
                400,
                "Sign-in expired",
                "this sign-in is unknown or expired (state mismatch); start again from your application",
            )
        cookie = _cookies(_headers(scope)).get(COOKIE + login.upstream_state[:16], "")
        if not same_secret(cookie, login.browser):
            return await self._page(
                send,
                400,
                "Sign-in not started here",
                "this sign-in was started in another browser; start again from your application",
            )
        clear = [self._cookie(login.upstream_state, "", 0)]
        expected_iss = self.proxy.upstream_issuer
        if expected_iss is not None and "iss" in q and q["iss"] != expected_iss:  # RFC 9207 §2.4: a mix-up
            log.warning("the upstream callback named another issuer; sign-in refused")
            return await self._deny(
                send, login, "access_denied", "the identity provider's answer came from another issuer", clear
            )
        if "error" in q or "code" not in q:
            return await self._deny(
                send, login, "access_denied", "the sign-in at the identity provider did not complete", clear
            )
        try:
            tokens = await self.proxy.upstream.exchange(
                self.proxy.client_http(), q["code"], self.proxy.callback_url, login.upstream_verifier
            )
            subject = await self.proxy.upstream.subject(self.proxy.client_http(), tokens)
        except AuthUnavailable as exc:
            log.warning("upstream sign-in failed: %s", exc)
            return await self._deny(send, login, "server_error", "the identity provider refused the sign-in", clear)
        login.grant = token(16)
        self.proxy._grants.put(login.grant, tokens)  # upstream tokens: server-side only
        login.subject = subject or "upstream-user-" + login.grant
        login.csrf = token(24)
        consent_id = token(24)
        self.proxy._consents.put(consent_id, login)
        await self._consent_page(
            send, consent_id, login, clear, self._cookie(consent_id, login.csrf, self.proxy.login_ttl)
        )
        return None

    async def consent(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("method") != "POST":
            raise OAuthError("invalid_request", "the consent form is sent with POST", 405)
        form = dict(parse_qsl((await _body(receive, MAX_FORM)).decode("utf-8", "replace")))
        cid = form.get("consent", "")
        login = self.proxy._consents.pop(cid) if cid else None
        if login is None:
            return await self._page(
                send, 400, "Request expired", "this approval is unknown or expired; start again from your application"
            )
        cookie = _cookies(_headers(scope)).get(COOKIE + cid[:16], "")
        if not (same_secret(form.get("csrf", ""), digest(login.csrf)) and same_secret(cookie, digest(login.csrf))):
            return await self._page(
                send,
                403,
                "Request refused",
                "the approval did not come from the page this server showed (CSRF check failed)",
            )
        clear = [self._cookie(cid, "", 0)]
        if form.get("decision") != "allow":
            return await self._deny(send, login, "access_denied", "the user declined", clear)
        code = token(32)
        assert login.subject is not None and login.grant is not None
        self.proxy._codes.put(
            digest(code),
            _Code(
                login.client.client_id,
                login.redirect_uri,
                login.challenge,
                login.scope,
                login.resource,
                login.subject,
                login.grant,
                redirect_given=login.redirect_given,
            ),
        )
        await self._redirect(send, _back(login.redirect_uri, login.state, self.proxy.issuer, code=code), clear)
        return None

    # ------------------------------------------------------------------ token endpoint
    async def token(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("method") != "POST":
            raise OAuthError(
                "invalid_request", "the token endpoint takes POST (application/x-www-form-urlencoded)", 405
            )
        form = dict(parse_qsl((await _body(receive, MAX_FORM)).decode("utf-8", "replace"), keep_blank_values=True))
        client_id = await self._authenticate(_headers(scope), form)
        grant = form.get("grant_type")
        if grant == "authorization_code":
            out = self._redeem(client_id, form)
        elif grant == "refresh_token":
            out = self._refresh(client_id, form)
        else:
            raise OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
        await _json(send, 200, out, _PRAGMA)

    async def _authenticate(self, headers: dict[str, str], form: dict[str, str]) -> str:
        """The client id, after checking the client's credentials (RFC 6749 §2.3; 401 invalid_client)."""
        given_secret = form.get("client_secret")
        client_id = form.get("client_id")
        auth = headers.get("authorization", "")
        method = "client_secret_post" if given_secret is not None else "none"
        if auth[:6].lower() == "basic ":
            try:
                user, _, pw = base64.b64decode(auth[6:].strip(), validate=True).decode().partition(":")
            except ValueError:
                raise OAuthError("invalid_client", "the Basic credentials are malformed", 401) from None
            client_id, given_secret, method = unquote(user), unquote(pw), "client_secret_basic"
        try:
            client = await self.proxy.find_client(client_id)
        except OAuthError:
            raise OAuthError("invalid_client", "unknown client (register first, or check the client_id)", 401) from None
        if client.auth_method != method:
            raise OAuthError(
                "invalid_client", f"this client authenticates with {client.auth_method}, not {method}", 401
            )
        if method != "none" and not (client.secret_digest and same_secret(given_secret or "", client.secret_digest)):
            raise OAuthError("invalid_client", "the client credentials are wrong", 401)
        return client.client_id

    def _redeem(self, client_id: str, form: dict[str, str]) -> dict[str, Any]:
        code = form.get("code") or ""
        record = self.proxy._codes.get(digest(code)) if code else None
        if record is None:
            raise OAuthError("invalid_grant", "the authorization code is unknown, expired or already used")
        if record.family is not None:  # a replay: what the first redemption issued is revoked too
            self.proxy._revoke(record.family)
            raise OAuthError(
                "invalid_grant", "the authorization code was already used; the tokens it gave were revoked"
            )
        if record.client_id != client_id:
            raise OAuthError("invalid_grant", "the authorization code was issued to another client")
        given = form.get("redirect_uri")
        if given is None and record.redirect_given:  # OAuth 2.1 §4.1.3
            raise OAuthError("invalid_request", "redirect_uri is required: the authorization request had one")
        if given is not None and given != record.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri differs from the one of the authorization request")
        check_verifier(form.get("code_verifier"), record.challenge)
        if "resource" in form and self._resource(form["resource"]) != record.resource:
            raise OAuthError("invalid_target", "resource differs from the one of the authorization request")
        family = token(24)
        record.family = family
        return self.proxy._issue(
            family, _Family(client_id, record.scope, record.resource, record.subject, record.grant)
        )

    def _refresh(self, client_id: str, form: dict[str, str]) -> dict[str, Any]:
        family_id, _, secret = (form.get("refresh_token") or "").partition(".")
        fam = self.proxy._families.get(family_id) if family_id and secret else None
        if fam is None:
            raise OAuthError("invalid_grant", "the refresh token is unknown, expired or revoked")
        if not same_secret(secret, fam.refresh):  # an old (rotated) refresh token: it leaked
            self.proxy._revoke(family_id)
            raise OAuthError(
                "invalid_grant", "the refresh token was already used; this grant is revoked (sign in again)"
            )
        if fam.client_id != client_id:
            raise OAuthError("invalid_grant", "the refresh token was issued to another client")
        if "resource" in form and self._resource(form["resource"]) != fam.resource:
            raise OAuthError("invalid_target", "resource differs from the one this grant is for")
        if form.get("scope"):
            narrower = form["scope"].split()
            if not set(narrower) <= set(fam.scope):
                raise OAuthError("invalid_scope", "a refresh may only narrow the granted scopes")
            fam.scope = narrower
        return self.proxy._issue(family_id, fam)

    # ------------------------------------------------------------------ pieces
    def _scopes(self, requested: str | None, registered: str | None) -> list[str]:
        offered = self.proxy.scopes
        if not requested:
            return registered.split() if registered else list(offered)
        asked = list(dict.fromkeys(requested.split()))
        unknown = [s for s in asked if s not in offered]
        if unknown:
            raise OAuthError(
                "invalid_scope", f"unknown scopes {' '.join(unknown)[:200]}; this server offers {' '.join(offered)}"
            )
        return asked

    def _resource(self, value: str | None) -> str:
        assert self.proxy.resource is not None
        if value is None or value.rstrip("/") == self.proxy.resource:
            return self.proxy.resource
        raise OAuthError(
            "invalid_target", f"this server issues tokens for {self.proxy.resource} only (RFC 8707 resource)"
        )

    def _cookie(self, key: str, value: str, max_age: float) -> tuple[bytes, bytes]:
        secure = "; Secure" if self.proxy.issuer.startswith("https://") else ""
        path = self.proxy.prefix or "/"
        return (
            b"set-cookie",
            f"{COOKIE}{key[:16]}={value}; Path={path}; Max-Age={int(max_age)}; HttpOnly; SameSite=Lax{secure}".encode(),
        )

    async def _redirect(self, send: Any, location: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
        await _raw(send, 302, b"", [(b"location", location.encode()), *_NO_STORE, *(headers or [])])

    async def _deny(
        self, send: Any, login: Any, error: str, description: str, headers: list[tuple[bytes, bytes]]
    ) -> None:
        """Send the login's browser back to its client with an OAuth error (RFC 6749 §4.1.2.1)."""
        location = _back(login.redirect_uri, login.state, self.proxy.issuer, error=error, error_description=description)
        await self._redirect(send, location, headers)

    async def _page(
        self, send: Any, status: int, title: str, text: str, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        body = _html(title, f"<p>{html.escape(text)}</p>")
        await _raw(send, status, body, [*_PAGE, *(headers or [])])

    async def _consent_page(
        self, send: Any, consent_id: str, login: _Login, clear: list[tuple[bytes, bytes]], cookie: tuple[bytes, bytes]
    ) -> None:
        c = login.client
        e = html.escape
        name = c.client_name or c.client_id
        how = (
            ("its metadata document at " + c.client_id)
            if c.client_id.startswith(("https://", "http://"))
            else "self-registered (the name is not verified)"
        )
        scopes = "".join(f"<li><code>{e(s)}</code></li>" for s in login.scope) or "<li>(no scope)</li>"
        content = (
            f"<p><b>{e(name)}</b> ({e(how)}) asks to use <code>{e(login.resource)}</code> as "
            f"<b>{e(login.subject or '')}</b>.</p><p>Scopes:</p><ul>{scopes}</ul>"
            f"<p>After approval you go back to <code>{e(login.redirect_uri)}</code>.</p>"
            f'<form method="post" action="{e(self.proxy.url("consent"))}">'
            f'<input type="hidden" name="consent" value="{e(consent_id)}">'
            f'<input type="hidden" name="csrf" value="{e(login.csrf)}">'
            '<button name="decision" value="allow">Allow</button> '
            '<button name="decision" value="deny">Deny</button></form>'
        )
        await _raw(send, 200, _html("Allow access?", content), [*_PAGE, *clear, cookie])


_PAGE = [
    (b"content-type", b"text/html; charset=utf-8"),
    *_NO_STORE,
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'"),
    (b"referrer-policy", b"no-referrer"),
]


def _html(title: str, content: str) -> bytes:
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1>{content}</body></html>"
    ).encode()


def _back(redirect_uri: str, state: str | None, issuer: str, **params: str) -> str:
    """The client's redirect URI with the response parameters, ``state`` and RFC 9207 ``iss``."""
    if state is not None:
        params["state"] = state
    params["iss"] = issuer
    return redirect_uri + ("&" if "?" in redirect_uri else "?") + urlencode(params)
