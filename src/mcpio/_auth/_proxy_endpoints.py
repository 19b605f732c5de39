"""The HTTP endpoints of the OAuth proxy (:class:`ProxyGuard`), in ASGI.

``/.well-known/oauth-authorization-server`` (RFC 8414), ``/jwks``, ``/register`` (RFC 7591),
``/authorize`` → the upstream IdP → ``/callback`` → the consent screen → ``POST /consent`` →
the client's redirect URI with ``code``, ``state`` and ``iss`` (RFC 9207), and ``/token``
(authorization_code with PKCE, refresh_token with rotation). Any other request goes to the
resource server guard the proxy wraps. Errors follow RFC 6749 §4.1.2.1 / §5.2: a bad client or
redirect URI is answered here (never redirected to an unverified URI); so is any error before
the user acted for a client no user has approved here yet (RFC 9700 §4.11.2: a self-registered
client's redirect URI is not trusted to receive errors, or the proxy is an open redirector).
Later errors go back to the client's redirect URI. A full store (:mod:`._proxy_store`) or a
source address over its limit gets 503 / 429 with Retry-After: nobody else's entry is dropped.
Secrets (client secrets, codes, tokens) never appear in a log line.
"""

from __future__ import annotations

import base64
import ipaddress
import json
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlencode

from .._state._base import StateUnavailable
from ._jwks import AuthUnavailable
from ._proxy_pages import PAGE_HEADERS, consent_page, page
from ._proxy_rules import (
    MAX_REGISTRATION,
    ClientInfo,
    OAuthError,
    _Code,
    _Login,
    check_challenge,
    digest,
    dump,
    load_client,
    load_login,
    redirect_matches,
    s256,
    same_secret,
    token,
    validate_registration,
)
from ._proxy_store import RETRY_AFTER, StoreFull
from ._proxy_tokens import Grants, full
from ._resource import _json, _raw

if TYPE_CHECKING:
    from ._proxy import OAuthProxy
    from ._proxy_store import ProxyStore

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


def source_of(scope: dict[str, Any]) -> str:
    """The source address limits count by: the peer's address, an IPv6 one as its /64 (one
    host usually holds a whole /64). Behind a reverse proxy every request comes from the proxy:
    run uvicorn with its proxy-headers option so that the client's address is the peer."""
    client = scope.get("client")
    host = str(client[0]) if client else "unknown"
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host[:64]
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.IPv6Network(f"{ip}/64", strict=False))
    return str(ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped else ip)


def _cookies(headers: dict[str, str]) -> dict[str, str]:
    out = {}
    for part in headers.get("cookie", "").split(";"):
        name, _, value = part.strip().partition("=")
        if name.startswith(COOKIE):
            out[name] = value
    return out


class ProxyGuard:
    """The ASGI guard of an :class:`OAuthProxy` (``http_app(auth=proxy)`` installs it)."""

    def __init__(self, proxy: OAuthProxy, inner: Any, store: ProxyStore) -> None:
        self.proxy = proxy
        self.inner = inner
        self.store = store
        self.grants = Grants(proxy, store)
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
            if exc.retry_after is not None:
                extra.append((b"retry-after", str(exc.retry_after).encode()))
            await _json(send, exc.status, exc.body(), [*_PRAGMA, *extra])
        except TooLarge:
            await _json(send, 413, {"error": "invalid_request", "error_description": "the request body is too large"})
        except StateUnavailable as exc:  # Redis down: the request was fine, retry it
            log.warning("the proxy's store is unreachable: %s", exc)
            await _json(
                send,
                503,
                {
                    "error": "temporarily_unavailable",
                    "error_description": "the server's state store is unreachable; retry",
                },
                [*_PRAGMA, (b"retry-after", str(exc.retry_after).encode())],
            )
        return None

    async def aclose(self) -> None:
        """Close the proxy's HTTP clients and the wrapped resource guard's (at app shutdown)."""
        try:
            await self.inner.aclose()
        finally:
            await self.proxy.aclose()
            await self.store.aclose()

    async def find_client(self, client_id: str | None) -> ClientInfo:
        if not client_id:
            raise OAuthError("invalid_request", "client_id is required")
        info = load_client(await self.store.get("client", client_id))
        if info is not None:
            return info
        if self.proxy.allow_cimd and client_id.startswith(("https://", "http://")):
            return await self.proxy.metadata_document(client_id)
        raise OAuthError(
            "invalid_client",
            "unknown client_id: register at "
            + self.proxy.url("register")
            + " (Dynamic Client Registration) or use a Client ID Metadata Document URL",
            401,
        )

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
        out = await self.register_client(doc, source_of(scope))
        log.info("registered client %s (%s)", out["client_id"], str(out.get("client_name", ""))[:80])
        await _json(send, 201, out, _PRAGMA)

    async def register_client(self, metadata: Any, source: str) -> dict[str, Any]:
        """Register a client (RFC 7591 §3.1); the response body. It lives
        ``unused_client_ttl`` until a user approves it, then ``client_ttl`` from each use."""
        p = self.proxy
        info = validate_registration(metadata, scopes=frozenset(p.scopes))
        info.client_id = "mcpio-" + token(18)
        out: dict[str, Any] = {
            "client_id": info.client_id,
            "client_id_issued_at": int(time.time()),
            "redirect_uris": info.redirect_uris,
            "grant_types": info.grant_types,
            "response_types": ["code"],
            "token_endpoint_auth_method": info.auth_method,
        }
        if info.auth_method != "none":
            secret = token(32)
            info.secret_digest = digest(secret)
            out.update(client_secret=secret, client_secret_expires_at=0)
        if info.client_name:
            out["client_name"] = info.client_name
        if info.scope:
            out["scope"] = info.scope
        try:
            await self.store.put(
                "client",
                info.client_id,
                dump(info),
                ttl=p.unused_client_ttl,
                cap=p.max_clients,
                limits=(("src:" + source, p.max_registrations_per_address),),
                window=3600.0,
            )
        except StoreFull as exc:
            if exc.who == "all":
                raise full("registrations", p.max_clients) from None
            raise OAuthError(
                "temporarily_unavailable",
                f"too many registrations from your address ({p.max_registrations_per_address} an hour); "
                "reuse the client_id you registered, or try again later",
                429,
                RETRY_AFTER,
            ) from None
        return out

    # ------------------------------------------------------------------ authorization
    async def authorize(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        q = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        try:
            client = await self.find_client(q.get("client_id"))
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
            if not client.confirmed:  # RFC 9700 §4.11.2: no redirect to an unapproved client's URI
                return await self._page(send, 400, "Invalid authorization request", f"{exc.error}: {exc.description}")
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
        p = self.proxy
        try:
            await self.store.put(
                "login",
                login.upstream_state,
                dump(login),
                ttl=p.login_ttl,
                cap=p.max_logins,
                limits=(
                    ("src:" + source_of(scope), p.max_logins_per_address),
                    ("client:" + digest(client.client_id), p.max_logins_per_client),
                ),
                window=p.login_ttl,
            )
        except StoreFull as exc:
            why = {
                "all": f"this server has {p.max_logins} sign-ins in progress, its maximum",
                "src": f"too many sign-ins were started from your address ({p.max_logins_per_address})",
                "client": f"too many sign-ins were started for this application ({p.max_logins_per_client})",
            }[exc.who.split(":")[0]]
            status = 503 if exc.who == "all" else 429
            return await self._page(
                send,
                status,
                "Try again later",
                f"{why}; try again in a few minutes",
                [(b"retry-after", str(RETRY_AFTER).encode())],
            )
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
        login = load_login(await self.store.take("login", q["state"])) if q.get("state") else None
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
        login.subject = subject or "upstream-user-" + login.grant
        login.csrf = token(24)
        consent_id = token(24)
        p = self.proxy
        sealed = p.sealer.seal(tokens, "grant:" + login.grant)  # the IdP's tokens, encrypted at rest
        try:
            await self.store.put("grant", login.grant, {"v": sealed}, ttl=p.refresh_token_ttl, cap=p.max_grants)
            await self.store.put("consent", consent_id, dump(login), ttl=p.login_ttl, cap=p.max_logins)
        except StoreFull:
            await self.store.take("grant", login.grant)
            return await self._deny(
                send, login, "temporarily_unavailable", "the server is at capacity; try again later", clear
            )
        await self._consent_page(send, consent_id, login, clear, self._cookie(consent_id, login.csrf, p.login_ttl))
        return None

    async def consent(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("method") != "POST":
            raise OAuthError("invalid_request", "the consent form is sent with POST", 405)
        form = dict(parse_qsl((await _body(receive, MAX_FORM)).decode("utf-8", "replace")))
        cid = form.get("consent", "")
        login = load_login(await self.store.take("consent", cid)) if cid else None
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
        p = self.proxy
        record = _Code(
            login.client.client_id,
            login.redirect_uri,
            login.challenge,
            login.scope,
            login.resource,
            login.subject,
            login.grant,
            redirect_given=login.redirect_given,
        )
        try:
            await self.store.put("code", digest(code), dump(record), ttl=p.code_ttl, cap=p.max_logins)
        except StoreFull:
            return await self._deny(
                send, login, "temporarily_unavailable", "the server is at capacity; try again later", clear
            )
        if not login.client.client_id.startswith(("https://", "http://")):  # a user approved it: confirmed
            login.client.confirmed = True
            await self.store.touch("client", login.client.client_id, dump(login.client), p.client_ttl)
        await self._redirect(send, _back(login.redirect_uri, login.state, p.issuer, code=code), clear)
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
            out = await self.grants.redeem(client_id, form, self._resource)
        elif grant == "refresh_token":
            out = await self.grants.refresh(client_id, form, self._resource)
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
            client = await self.find_client(client_id)
        except OAuthError:
            raise OAuthError("invalid_client", "unknown client (register first, or check the client_id)", 401) from None
        if client.auth_method != method:
            raise OAuthError(
                "invalid_client", f"this client authenticates with {client.auth_method}, not {method}", 401
            )
        if method != "none" and not (client.secret_digest and same_secret(given_secret or "", client.secret_digest)):
            raise OAuthError("invalid_client", "the client credentials are wrong", 401)
        return client.client_id

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
        await _raw(send, status, page(title, text), [*PAGE_HEADERS, *(headers or [])])

    async def _consent_page(
        self, send: Any, consent_id: str, login: _Login, clear: list[tuple[bytes, bytes]], cookie: tuple[bytes, bytes]
    ) -> None:
        body = consent_page(consent_id, login, self.proxy.url("consent"))
        await _raw(send, 200, body, [*PAGE_HEADERS, *clear, cookie])


def _back(redirect_uri: str, state: str | None, issuer: str, **params: str) -> str:
    """The client's redirect URI with the response parameters, ``state`` and RFC 9207 ``iss``."""
    if state is not None:
        params["state"] = state
    params["iss"] = issuer
    return redirect_uri + ("&" if "?" in redirect_uri else "?") + urlencode(params)
