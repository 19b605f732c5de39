"""The OAuth 2.1 client of an MCP client (spec basic/authorization, 2025-11-25 and 2026-07-28).

:class:`OAuth` is an ``httpx.Auth``: the HTTP client transport hands it every request (the one
seam: ``HTTPClientTransport(auth=…)``, which ``Client(url, auth=…)`` passes on). It adds
``Authorization: Bearer`` and answers the server's challenges:

* **401** (no token, or one the server no longer takes; a ``Bearer`` or ``DPoP`` challenge): discovery (``_discovery``), then, if
  the token's authorization server is unchanged and a refresh token is held, a refresh;
  otherwise a new authorization. The request is sent again once authorized.
* **403** ``error="insufficient_scope"``: step-up: a new authorization for the union of the
  scopes requested so far and the challenged ones, at most ``max_step_ups`` times per request,
  and not at all when the token already holds every challenged scope (the server will never be
  satisfied: the request fails with a message saying so).
* Before a request, a token that expires within ``refresh_margin`` seconds is refreshed.

Registration, in the spec's priority: pre-registered credentials (``client_id=`` bound to
``issuer=``, or ``clients={issuer: {...}}`` per issuer; refused, not sent, to another issuer), a Client ID Metadata Document (``client_metadata_url=``,
when the authorization server lists ``client_id_metadata_document_supported``), a client
registered earlier with that issuer (kept in the store), Dynamic Client Registration (with
``application_type``). Credentials belong to one issuer: when the server's authorization
server changes, the client registers anew (2026-07-28).

Authorization code with PKCE S256 (an authorization server that does not list S256 is refused),
``state`` checked, RFC 9207 ``iss`` compared by exact string to the issuer (a missing ``iss``
refused when the server advertises it), ``resource`` (the PRM's value, exactly as published) on
the authorization, token and refresh requests. ``grant="client_credentials"`` uses the
client_credentials grant instead (``client_secret_basic``/``_post`` or ``private_key_jwt``).

DPoP (RFC 9449) when the server asks for it and the authorization server supports ES256
proofs (or ``dpop=True``): the token is bound to a key kept with it, every request carries a
fresh proof, and a ``use_dpop_nonce`` answer (token endpoint or server) is retried with the
nonce.

Tokens go to a :class:`~._tokens.TokenStore` (file-based by default) and are never logged.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx

from . import _pkce
from ._browser import CallableUserAgent, LoopbackBrowser, UserAgent
from ._discovery import (
    DPOP_CHALLENGED,
    AuthorizationError,
    Discovery,
    as_authorization_error,
    discover,
    oauth_http,
    parse_www_authenticate,
    scopes_of,
    select_scopes,
    server_identity,
    union,
)
from ._grants import ClientCredentials, PreRegistered, register, token_request
from ._once import Once
from ._redirect import code_of_redirect
from ._tokens import FileTokenStore, MemoryTokenStore, TokenStore

log = logging.getLogger("mcpio.auth")

GRANTS = ("authorization_code", "client_credentials", "jwt_bearer")
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"  # RFC 7523 §2.1


class OAuth(httpx.Auth):
    """OAuth 2.1 for ``Client(url, auth=OAuth(...))`` (see the module docstring).

    Parameters (all optional):

    ``client_id``/``client_secret``: pre-registered credentials of the authorization server
    ``issuer`` (required with a secret; never sent to another issuer: the authorization fails
    instead); ``clients``: per issuer, ``{issuer: {"client_id": ..., "client_secret": ...}}``. ``private_key`` (PEM) and
    ``signing_alg``: authenticate with ``private_key_jwt``. ``client_metadata_url``: this
    client's Client ID Metadata Document (an https URL). ``scopes``: request these instead of
    the server's (``WWW-Authenticate`` scope, else the PRM's ``scopes_supported``, else none).
    ``grant``: ``"authorization_code"`` (a user logs in), ``"client_credentials"`` (a
    machine) or ``"jwt_bearer"`` (RFC 7523 §2.1 with ``assertion=``, a JWT or a callable
    ``(issuer, resource) -> JWT`` (sync or async) that makes a fresh one for that authorization
    server and resource: workload identity federation (SEP-1933), or an enterprise IdP's ID-JAG
    (SEP-990, :func:`~._enterprise.id_jag_assertion`); a refused assertion is not retried). ``user_agent``: a callable ``fn(authorization_url) -> redirect_url`` (sync or
    async; with ``redirect_uri``), or a :class:`LoopbackBrowser` (the default, on
    ``callback_port``, 0 = any free port). ``store``: a :class:`TokenStore` (default: the file
    :func:`~._tokens.default_store_path`; ``store="memory"`` keeps nothing). ``client_name``,
    ``application_type`` ("native" unless the redirect URI is not a loopback one): for dynamic
    registration. ``offline_access``: ask for it when the authorization server lists it.
    ``dpop``: ask for DPoP-bound tokens (RFC 9449); None (the default) does when the
    authorization server supports ES256 proofs and the server asks for DPoP (its challenge, or
    ``dpop_bound_access_tokens_required`` in its metadata).

    Every failure raises :class:`AuthorizationError` (the pending MCP request fails with its
    message); no message contains a token, a secret, a code or a verifier.
    """

    def __init__(
        self,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        issuer: str | None = None,
        clients: Mapping[str, Mapping[str, Any]] | None = None,
        private_key: str | None = None,
        signing_alg: str = "ES256",
        client_metadata_url: str | None = None,
        scopes: list[str] | str | None = None,
        grant: str = "authorization_code",
        assertion: str | Callable[[str, str], str | Awaitable[str]] | None = None,
        user_agent: UserAgent | Callable[[str], str | Awaitable[str]] | None = None,
        redirect_uri: str | None = None,
        callback_port: int = 0,
        store: TokenStore | str | None = None,
        client_name: str = "mcpio",
        application_type: str | None = None,
        offline_access: bool = True,
        dpop: bool | None = None,
        max_step_ups: int = 2,
        refresh_margin: float = 60.0,
        timeout: float = 30.0,
    ) -> None:
        if grant not in GRANTS:
            raise ValueError(f"grant must be one of {', '.join(GRANTS)}, not {grant!r}")
        if client_metadata_url is not None and (
            not client_metadata_url.startswith("https://") or urlsplit(client_metadata_url).path in ("", "/")
        ):
            raise ValueError("client_metadata_url must be an https URL with a path (the Client ID Metadata Document)")
        if grant == "client_credentials" and not client_id and not clients:
            raise ValueError("the client_credentials grant needs client_id= (with client_secret= or private_key=)")
        if grant == "jwt_bearer" and (assertion is None or not client_id):
            raise ValueError(
                "the jwt_bearer grant needs client_id= and assertion= (a JWT, or a callable (issuer, resource) -> JWT)"
            )
        if grant == "jwt_bearer" and isinstance(assertion, str) and not issuer:
            raise ValueError(  # a fixed JWT is a credential for one authorization server, like a secret
                "a fixed assertion= needs issuer=: the authorization server it is for (mcpio sends it there only)"
            )
        self.assertion = assertion
        self.client_id = client_id
        self.client_secret = client_secret
        self.issuer = issuer
        self.clients = {k: dict(v) for k, v in (clients or {}).items()}
        self.private_key = private_key
        self.signing_alg = signing_alg
        self._pre = PreRegistered(
            client_id=client_id,
            client_secret=client_secret,
            private_key=private_key,
            signing_alg=signing_alg,
            issuer=issuer,
            clients=self.clients,
        )
        self.client_metadata_url = client_metadata_url
        self.scopes = scopes.split() if isinstance(scopes, str) else list(scopes) if scopes is not None else None
        self.grant = grant
        if user_agent is None:
            self.user_agent: UserAgent = LoopbackBrowser(port=callback_port)
        elif hasattr(user_agent, "session"):
            self.user_agent = user_agent
        else:
            uri = redirect_uri or f"http://127.0.0.1:{callback_port or 33418}/callback"
            self.user_agent = CallableUserAgent(user_agent, uri)
        if store == "memory":
            store = MemoryTokenStore()
        elif store is None:
            store = FileTokenStore()
        elif isinstance(store, str):
            store = FileTokenStore(store)
        self.store: TokenStore = store
        self.client_name = client_name
        self.application_type = application_type
        self.offline_access = offline_access
        self.dpop = dpop
        self._dpop_key: tuple[str, Any] | None = None  # (PEM, DPoPKey) of the current DPoP-bound token
        self.max_step_ups = max_step_ups
        self.refresh_margin = refresh_margin
        self.timeout = timeout
        self.server_url: str | None = None
        self.token: dict[str, Any] | None = None  # the current store entry (access token, metadata …)
        self.last_steps: list[str] = []  # what the last discovery did, step by step
        self.authorizations = 0  # authorization flows run (for tests and diagnostics)
        self._lock: asyncio.Lock | None = None
        self._once = Once()  # the login in progress: not abandoned when its request is cancelled
        self._loaded = False

    def __repr__(self) -> str:
        return f"OAuth(grant={self.grant!r}, client_id={self.client_id!r}, store={self.store!r})"

    # ------------------------------------------------------------------ the httpx.Auth seam
    def ready_headers(self) -> tuple[dict[str, str], str | None] | None:
        """``(headers, token)`` for a request when the flow has nothing to do before sending it
        (the store was read, no authorization is under way, the token held, if any, is a Bearer
        token not about to expire); None when :meth:`async_auth_flow` must run first. A response
        to that request needs the flow only if it is a 401 or a 403: then
        ``async_auth_flow(request, sent=(token, response))`` goes on from it. The lean HTTP
        client's per-request path: no ``httpx.Request`` is built (``_http1_client``)."""
        if not self._loaded or self.server_url is None or (self._lock is not None and self._lock.locked()):
            return None
        tok = self.token
        if tok is None:
            return {}, None
        expires = tok.get("expires_at")
        if isinstance(expires, (int, float)) and expires - self.refresh_margin <= time.time():
            return None  # _prepare refreshes it
        token = tok.get("access_token")
        if token is None:
            return {}, None
        if str(tok.get("token_type", "")).lower() == "dpop" and tok.get("dpop_key"):
            return None  # a fresh proof per request, and the server's nonces to remember
        return {"authorization": f"Bearer {token}"}, token

    async def async_auth_flow(
        self, request: httpx.Request, sent: tuple[str | None, httpx.Response] | None = None
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """The httpx.Auth flow; ``sent``: ``request`` already went out with
        :meth:`ready_headers` (that token) and got this response."""
        flow = self._flow(request, sent)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except httpx.HTTPError:
            raise
        except Exception as exc:  # a bug must fail the request, not leave it hanging in the transport
            raise AuthorizationError(f"authorization failed: {type(exc).__name__}: {exc}") from exc

    async def _flow(
        self, request: httpx.Request, sent: tuple[str | None, httpx.Response] | None
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        if self.server_url is None:
            self.server_url = server_identity(request.url)
        server_url = self.server_url
        if sent is not None:  # ready_headers() held: _prepare and _apply had nothing more to do
            used, response = sent
        else:
            async with self._lock, as_authorization_error():
                await self._prepare(server_url)
            used = self._apply(request)
            response = yield request
        reauthorized = step_ups = nonce_retries = 0
        while True:
            challenge = parse_www_authenticate(response.headers.get("www-authenticate"))
            key = self._dpop()
            fresh_nonce = (
                key is not None and used is not None and key.remember_nonce(str(request.url), response.headers)
            )
            if (
                response.status_code == 401
                and challenge.get("error") == "use_dpop_nonce"
                and fresh_nonce
                and nonce_retries < 2
            ):
                nonce_retries += 1  # RFC 9449 §9: the same request again, with the server's nonce
            elif response.status_code == 401:
                if reauthorized >= 2:
                    raise AuthorizationError(
                        f"the MCP server {server_url} refused a freshly issued token (HTTP 401): "
                        "it does not accept tokens from its own authorization server; "
                        "contact the server's operator"
                    )
                reauthorized += 1
                async with self._lock, as_authorization_error():
                    if self._current() == used:  # else another request already got a new token
                        await self._once.run(self._on_unauthorized, server_url, challenge, had_token=used is not None)
            elif response.status_code == 403 and challenge.get("error") == "insufficient_scope":
                wanted = scopes_of(challenge.get("scope"))
                async with self._lock, as_authorization_error():
                    if self._current() == used:
                        held = self._granted()
                        if (wanted and all(s in held for s in wanted)) or step_ups >= self.max_step_ups:
                            raise AuthorizationError(
                                f"the MCP server {server_url} still refuses the request for lack of scope "
                                f"({' '.join(wanted) or 'unnamed'}) after {step_ups} step-up authorization(s) "
                                f"with the token holding {' '.join(held) or 'no scopes'}: the authorization server "
                                "does not grant what the server asks; ask its operator for access"
                            )
                        step_ups += 1
                        prior = scopes_of((self.token or {}).get("requested_scope"))
                        await self._once.run(self._authorize, server_url, challenge, union(prior, held, wanted))
            else:
                return
            used = self._apply(request)
            response = yield request

    def _current(self) -> str | None:
        return (self.token or {}).get("access_token")

    def _granted(self) -> list[str]:
        tok = self.token or {}
        return scopes_of(tok.get("scope") if isinstance(tok.get("scope"), str) else tok.get("requested_scope"))

    def _apply(self, request: httpx.Request) -> str | None:
        token = self._current()
        if token is None:  # the request goes as it is (with the app's own header, if any)
            return None
        key = self._dpop()
        if key is not None:  # RFC 9449 §7.1: the DPoP scheme and a fresh proof per request
            request.headers["authorization"] = f"DPoP {token}"
            request.headers["dpop"] = key.proof(request.method, str(request.url), access_token=token)
        else:
            request.headers["authorization"] = f"Bearer {token}"
        return token

    def _dpop(self) -> Any:
        """The DPoPKey the current token is bound to, or None for a bearer token."""
        tok = self.token or {}
        if str(tok.get("token_type", "")).lower() != "dpop" or not tok.get("dpop_key"):
            return None
        if self._dpop_key is None or self._dpop_key[0] != tok["dpop_key"]:
            from ._dpop import DPoPKey

            self._dpop_key = (tok["dpop_key"], DPoPKey(tok["dpop_key"]))
        return self._dpop_key[1]

    def _new_key(self, disc: Discovery, challenge: dict[str, str]) -> Any:
        """A fresh DPoPKey if this authorization should ask for a DPoP-bound token, else None."""
        use = self.dpop
        if use is None:
            algs = disc.metadata.get("dpop_signing_alg_values_supported")
            use = (
                isinstance(algs, list)
                and "ES256" in algs
                and (DPOP_CHALLENGED in challenge or disc.prm.get("dpop_bound_access_tokens_required") is True)
            )
        if not use:
            return None
        from ._dpop import DPoPKey

        return DPoPKey()

    # ------------------------------------------------------------------ tokens kept
    def _store_key(self, resource: str, issuer: str) -> str:
        return f"token {resource} {issuer}"

    async def _prepare(self, server_url: str) -> None:
        """Load a stored token for this server once; refresh it if it is about to expire."""
        if not self._loaded:
            self._loaded = True
            try:
                found = [
                    e
                    for k in await asyncio.to_thread(self.store.keys)
                    if k.startswith("token ")
                    if (e := await asyncio.to_thread(self.store.load, k)) and e.get("server_url") == server_url
                ]
            except OSError as exc:  # an unusable store must not break servers that need no login
                log.warning("not using stored tokens: %s", exc)
                found = []
            if found:
                self.token = max(found, key=lambda e: e.get("saved_at", 0))
        tok = self.token
        if tok is None or not isinstance(tok.get("expires_at"), (int, float)):
            return
        if tok["expires_at"] - self.refresh_margin > time.time():
            return
        if not (tok.get("refresh_token") and await self._refresh()):
            self.token = {k: v for k, v in tok.items() if k != "access_token"} if tok.get("refresh_token") else None

    async def _save(self, disc: Discovery, response: dict[str, Any], requested: list[str], key: Any = None) -> None:
        old = self.token if self.token and self.token.get("issuer") == disc.issuer else {}
        entry = {
            "server_url": disc.server_url,
            "resource": disc.resource,
            "issuer": disc.issuer,
            "access_token": response["access_token"],
            "refresh_token": response.get("refresh_token") or (old or {}).get("refresh_token"),
            "expires_at": response.get("expires_at"),
            "scope": response.get("scope") if isinstance(response.get("scope"), str) else None,
            "requested_scope": " ".join(requested),
            "metadata": disc.metadata,
            "prm": disc.prm,
            "saved_at": time.time(),
            "token_type": response.get("token_type", "Bearer"),
            "dpop_key": key.pem() if key is not None and str(response.get("token_type")).lower() == "dpop" else None,
        }
        self.token = entry
        await asyncio.to_thread(self.store.save, self._store_key(disc.resource, disc.issuer), entry)

    def forget(self) -> None:
        """Drop this server's tokens from memory and from the store (``mcpio logout``)."""
        for key in self.store.keys():  # noqa: SIM118 (a TokenStore is not iterable: keys() is its listing)
            if key.startswith("token "):
                entry = self.store.load(key)
                if entry and entry.get("server_url") in (self.server_url, None):
                    self.store.delete(key)
        self.token = None

    # ------------------------------------------------------------------ 401: refresh or authorize
    def _http(self) -> httpx.AsyncClient:
        return oauth_http(self.timeout)

    async def _on_unauthorized(self, server_url: str, challenge: dict[str, str], *, had_token: bool) -> None:
        tok = self.token
        if tok and tok.get("refresh_token"):
            steps: list[str] = []
            async with self._http() as http:
                disc = await discover(http, server_url, challenge, steps)
            self.last_steps = steps
            if disc.issuer == tok.get("issuer") and disc.resource == tok.get("resource") and await self._refresh():
                return
        await self._authorize(server_url, challenge, None)

    async def _refresh(self) -> bool:
        """Use the refresh token (with the same ``resource``); False if the server refuses it."""
        tok = self.token or {}
        metadata = tok.get("metadata") or {}
        if not tok.get("refresh_token") or "token_endpoint" not in metadata:
            return False
        try:
            creds = await self._credentials_for(tok["issuer"], metadata, None, register_if_needed=False)
        except AuthorizationError:  # a token of another issuer than the client's: authorize anew
            return False
        if creds is None:
            return False
        data = {"grant_type": "refresh_token", "refresh_token": tok["refresh_token"], "resource": tok["resource"]}
        key = self._dpop()  # a DPoP-bound refresh token is refreshed with the same key (RFC 9449 §5)
        try:
            async with self._http() as http:
                response = await token_request(http, metadata, creds, data, dpop=key)
        except AuthorizationError as exc:
            log.info("refreshing the token for %s failed (%s); authorizing anew", tok.get("server_url"), exc)
            return False
        disc = Discovery(
            server_url=tok["server_url"],
            resource=tok["resource"],
            issuer=tok["issuer"],
            prm=tok.get("prm") or {},
            metadata=metadata,
        )
        await self._save(disc, response, scopes_of(tok.get("requested_scope")), key)
        log.info("refreshed the access token for %s", tok.get("server_url"))
        return True

    async def _authorize(self, server_url: str, challenge: dict[str, str], scopes: list[str] | None) -> None:
        """Discover, register if needed, and obtain a new token (for ``scopes`` if given)."""
        steps: list[str] = []
        self.authorizations += 1
        async with self._http() as http:
            disc = await discover(http, server_url, challenge, steps)
            self.last_steps = steps
            if scopes is None:
                scopes = select_scopes(
                    disc, challenge, self.scopes, self.offline_access and self.grant == "authorization_code"
                )
            key = self._new_key(disc, challenge)
            if self.grant in ("client_credentials", "jwt_bearer"):
                creds = await self._credentials_for(disc.issuer, disc.metadata, None, register_if_needed=False)
                if creds is None:
                    raise AuthorizationError(f"no client credentials configured for {disc.issuer}")
                data = {"grant_type": "client_credentials", "resource": disc.resource}
                if self.grant == "jwt_bearer":
                    assertion = (
                        self.assertion(disc.issuer, disc.resource) if callable(self.assertion) else self.assertion
                    )
                    if inspect.isawaitable(assertion):
                        assertion = await assertion
                    data.update(grant_type=JWT_BEARER, assertion=str(assertion))
                if scopes:
                    data["scope"] = " ".join(scopes)
                response = await token_request(http, disc.metadata, creds, data, dpop=key)
            else:
                response = await self._authorization_code(http, disc, scopes, key)
        await self._save(disc, response, scopes, key)
        log.info("authorized with %s for %s", disc.issuer, server_url)

    async def _authorization_code(
        self, http: httpx.AsyncClient, disc: Discovery, scopes: list[str], key: Any = None
    ) -> dict[str, Any]:
        meta = disc.metadata
        methods = meta.get("code_challenge_methods_supported")
        if not isinstance(methods, list) or "S256" not in methods:
            raise AuthorizationError(
                f"the authorization server {disc.issuer} does not list S256 in code_challenge_methods_supported "
                f"(it lists {methods!r}); MCP requires PKCE with S256, so mcpio will not authorize with it. "
                "The authorization server must be fixed"
            )
        endpoint = meta.get("authorization_endpoint")
        if not isinstance(endpoint, str) or not endpoint.startswith(("https://", "http://")):
            raise AuthorizationError(
                f"the authorization server {disc.issuer} publishes no usable authorization_endpoint"
            )
        ua, reuse = self.user_agent, []
        if isinstance(ua, LoopbackBrowser):  # the port of an earlier registration, so it serves again
            stored = await asyncio.to_thread(self.store.load, f"client {disc.issuer}")
            reuse = [u for u in (stored or {}).get("redirect_uris") or [] if isinstance(u, str)]
        async with ua.session(reuse=reuse) if isinstance(ua, LoopbackBrowser) else ua.session() as agent:
            creds = await self._credentials_for(
                disc.issuer, meta, agent.redirect_uri, register_if_needed=True, http=http, scopes=scopes
            )
            assert creds is not None
            verifier, state = _pkce.new_verifier(), _pkce.new_state()
            params = {
                "response_type": "code",
                "client_id": creds.client_id,
                "redirect_uri": agent.redirect_uri,
                "state": state,
                "code_challenge": _pkce.challenge_s256(verifier),
                "code_challenge_method": "S256",
                "resource": disc.resource,
            }
            if scopes:
                params["scope"] = " ".join(scopes)
            if "offline_access" in scopes:
                # OIDC Core §11: offline access is requested with prompt=consent; OpenID
                # providers (oidc-provider, among others) drop offline_access without it, and
                # then issue no refresh token
                params["prompt"] = "consent"
            url = endpoint + ("&" if urlsplit(endpoint).query else "?") + urlencode(params)
            redirect = await agent.authorize(url)
        code = code_of_redirect(redirect, agent.redirect_uri, state, disc)
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": agent.redirect_uri,
            "code_verifier": verifier,
            "resource": disc.resource,
        }
        return await token_request(http, meta, creds, data, dpop=key)

    # ------------------------------------------------------------------ who this client is
    async def _credentials_for(
        self,
        issuer: str,
        metadata: dict[str, Any],
        redirect_uri: str | None,
        *,
        register_if_needed: bool,
        http: httpx.AsyncClient | None = None,
        scopes: list[str] | None = None,
    ) -> ClientCredentials | None:
        """Credentials for ``issuer``, in the spec's priority (see the module docstring)."""
        pre = self._pre.credentials(issuer)  # refuses credentials bound to another issuer
        if pre is not None:
            return pre
        if self.client_metadata_url and metadata.get("client_id_metadata_document_supported") is True:
            return ClientCredentials(
                client_id=self.client_metadata_url,
                source="client-id-metadata-document",
                private_key=self.private_key,
                signing_alg=self.signing_alg,
                auth_method="private_key_jwt" if self.private_key else "none",
            )
        key = f"client {issuer}"
        stored = await asyncio.to_thread(self.store.load, key)
        registered_scopes: list[str] = []
        if stored is not None:
            creds = ClientCredentials.from_json(stored)
            if (
                redirect_uri is None or not creds.redirect_uris or redirect_uri in creds.redirect_uris
            ) and creds.allows(scopes):
                return creds
            if creds.redirect_uris and redirect_uri in creds.redirect_uris:
                # a step-up beyond the registered scope (RFC 7591 §2): the authorization server
                # would answer invalid_scope, so register again for the union
                registered_scopes = scopes_of(creds.scope)
                log.info(
                    "the client registered with %s may not request %s; registering it again",
                    issuer,
                    " ".join(s for s in scopes or [] if s not in registered_scopes),
                )
        if not register_if_needed or http is None or redirect_uri is None:
            return None
        scopes = union(registered_scopes, scopes or [])
        host = urlsplit(redirect_uri).hostname or ""
        app_type = self.application_type or (
            "native" if host in ("127.0.0.1", "localhost", "::1") or not redirect_uri.startswith("https://") else "web"
        )
        creds = await register(
            http,
            metadata,
            client_name=self.client_name,
            redirect_uris=[redirect_uri],
            grant_types=["authorization_code", "refresh_token"],
            application_type=app_type,
            scope=" ".join(scopes) if scopes else None,
        )
        await asyncio.to_thread(self.store.save, key, creds.to_json())
        log.info("registered this client with %s (dynamic client registration)", issuer)
        return creds
