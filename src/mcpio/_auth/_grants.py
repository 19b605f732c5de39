"""Talking to the authorization server's endpoints: Dynamic Client Registration (RFC 7591), the
token endpoint (authorization_code, refresh_token, client_credentials grants) and client
authentication (``client_secret_basic``, ``client_secret_post``, ``private_key_jwt``, ``none``).

Errors are :class:`~._discovery.AuthorizationError` naming the endpoint and the server's
``error`` / ``error_description``; request bodies (codes, verifiers, secrets, tokens) are never
put in a message.
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from ._discovery import MAX_METADATA_BYTES, AuthorizationError, wants_token

MAX_TOKEN_RESPONSE_BYTES = 64 * 1024


@dataclass
class ClientCredentials:
    """How this client is known to one authorization server."""

    client_id: str
    client_secret: str | None = None
    auth_method: str | None = None  # token_endpoint_auth_method; None: choose from the AS metadata
    private_key: str | None = None  # PEM, for private_key_jwt
    signing_alg: str = "ES256"
    source: str = "pre-registered"  # "pre-registered", "client-id-metadata-document" or "dynamic-registration"
    redirect_uris: list[str] = field(default_factory=list)
    scope: str | None = None  # the scopes a dynamically registered client may request (RFC 7591 §2); None: any

    def allows(self, scopes: list[str] | None) -> bool:
        """Whether this registration lets the client request ``scopes`` (an authorization server
        such as oidc-provider refuses a scope outside the registered ``scope`` with invalid_scope)."""
        return self.scope is None or not scopes or set(scopes) <= set(self.scope.split())

    def __repr__(self) -> str:  # never show the secret or the key
        return (
            f"ClientCredentials(client_id={self.client_id!r}, source={self.source!r}, auth_method={self.auth_method!r})"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientCredentials:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


def same_issuer(a: str, b: str) -> bool:
    """Issuer identifiers compared as strings (RFC 8414 §3.3), a trailing ``/`` aside."""
    return a.rstrip("/") == b.rstrip("/")


class PreRegistered:
    """The client's pre-registered credentials: ``clients`` (``{issuer: {"client_id": …,
    "client_secret": …}}``) and/or one ``client_id`` bound to ``issuer``.

    A client secret is a password for one authorization server: ``issuer`` is required with it,
    and :meth:`credentials` refuses (never sends) them when discovery names another issuer (a
    hostile MCP server names its own authorization server to collect them). A public
    ``client_id`` (no secret) without ``issuer`` is used with whichever issuer is discovered.
    """

    def __init__(
        self,
        *,
        client_id: str | None,
        client_secret: str | None,
        private_key: str | None,
        signing_alg: str,
        issuer: str | None,
        clients: dict[str, dict[str, Any]],
    ) -> None:
        if client_secret and not issuer:
            raise ValueError(
                "client_secret= needs issuer=: the authorization server the client is registered with "
                "(mcpio sends the secret to that issuer only, never to one another MCP server names)"
            )
        if client_secret and not client_id:
            raise ValueError("client_secret= goes with client_id= (the client the secret belongs to)")
        self.client_id, self.client_secret, self.private_key = client_id, client_secret, private_key
        self.signing_alg, self.issuer, self.clients = signing_alg, issuer, clients

    def credentials(self, issuer: str) -> ClientCredentials | None:
        """The pre-registered credentials for ``issuer``; None if there are none (register then);
        :class:`AuthorizationError` when the ``client_id`` is bound to another issuer."""
        entry = next((v for k, v in self.clients.items() if same_issuer(k, issuer)), None)
        if entry is not None:
            return ClientCredentials(
                client_id=entry["client_id"],
                client_secret=entry.get("client_secret"),
                private_key=entry.get("private_key"),
                signing_alg=entry.get("signing_alg", self.signing_alg),
                auth_method=entry.get("auth_method"),
            )
        if not self.client_id:
            return None
        if self.issuer is not None and not same_issuer(self.issuer, issuer):
            raise AuthorizationError(
                f"the MCP server sends its clients to the authorization server {issuer}, but the pre-registered "
                f"client {self.client_id!r} belongs to {self.issuer}: mcpio refuses to send its credentials "
                "there. If the server really moved to that authorization server, register a client with it and "
                "pass that (issuer=, or clients={issuer: …}; mcpio login --issuer); otherwise the server is "
                "misconfigured or hostile: tell its operator"
            )
        return ClientCredentials(
            client_id=self.client_id,
            client_secret=self.client_secret,
            private_key=self.private_key,
            signing_alg=self.signing_alg,
        )


def choose_auth_method(creds: ClientCredentials, metadata: dict[str, Any]) -> str:
    """The token endpoint authentication method for ``creds`` at this authorization server."""
    if creds.auth_method:
        return creds.auth_method
    if creds.private_key:
        return "private_key_jwt"
    supported = metadata.get("token_endpoint_auth_methods_supported")
    if not isinstance(supported, list) or not supported:
        supported = ["client_secret_basic"]  # RFC 8414 §2: the default when omitted
    if creds.client_secret:
        for method in ("client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        return "none" if "none" in supported else "client_secret_basic"
    return "none"


def client_auth(
    creds: ClientCredentials, metadata: dict[str, Any], data: dict[str, str], headers: dict[str, str]
) -> None:
    """Add client authentication to a token request's form ``data`` and ``headers``."""
    method = choose_auth_method(creds, metadata)
    if method == "client_secret_basic":
        if not creds.client_secret:
            raise AuthorizationError(f"the client {creds.client_id!r} must use client_secret_basic but has no secret")
        pair = f"{quote(creds.client_id, safe='')}:{quote(creds.client_secret, safe='')}"  # RFC 6749 §2.3.1
        headers["authorization"] = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    elif method == "client_secret_post":
        if not creds.client_secret:
            raise AuthorizationError(f"the client {creds.client_id!r} must use client_secret_post but has no secret")
        data["client_id"] = creds.client_id
        data["client_secret"] = creds.client_secret
    elif method == "private_key_jwt":
        if not creds.private_key:
            raise AuthorizationError(f"the client {creds.client_id!r} must use private_key_jwt but has no private key")
        from ._client_assertion import ASSERTION_TYPE, sign_client_assertion

        audience = metadata.get("issuer") or metadata["token_endpoint"]
        data["client_id"] = creds.client_id
        data["client_assertion_type"] = ASSERTION_TYPE
        data["client_assertion"] = sign_client_assertion(
            creds.client_id, audience, creds.private_key, creds.signing_alg
        )
    elif method == "none":
        data["client_id"] = creds.client_id
    else:
        raise AuthorizationError(
            f"the token endpoint authentication method {method!r} is not supported by mcpio "
            "(supported: client_secret_basic, client_secret_post, private_key_jwt, none)"
        )


async def _read_json(resp: httpx.Response, limit: int, what: str) -> dict[str, Any]:
    body = bytearray()
    async for chunk in resp.aiter_bytes():
        body += chunk
        if len(body) > limit:
            raise AuthorizationError(f"{what}: the answer is over {limit} bytes; refused")
    try:
        doc = json.loads(bytes(body)) if body else {}
    except ValueError:
        ctype = resp.headers.get("content-type", "no content type")
        raise AuthorizationError(f"{what}: HTTP {resp.status_code}, and the answer is not JSON ({ctype})") from None
    if not isinstance(doc, dict):
        raise AuthorizationError(f"{what}: HTTP {resp.status_code}, and the answer is not a JSON object")
    return doc


def _oauth_error(doc: dict[str, Any]) -> str:
    err = doc.get("error")
    desc = doc.get("error_description")
    text = f"{err}" if isinstance(err, str) else "no error code"
    if isinstance(desc, str) and desc:
        text += f": {desc[:300]}"
    return text


async def token_request(
    http: httpx.AsyncClient, metadata: dict[str, Any], creds: ClientCredentials, data: dict[str, str], dpop: Any = None
) -> dict[str, Any]:
    """POST a grant to the token endpoint; the token response with ``expires_at`` added.

    ``dpop`` (a :class:`~._dpop.DPoPKey`): send a DPoP proof, and once more with the server's
    nonce when it answers ``use_dpop_nonce`` (RFC 9449 §8). Raises :class:`AuthorizationError`
    for an error answer or a response without an ``access_token`` of a type mcpio can send.
    """
    url = metadata["token_endpoint"]
    grant = data.get("grant_type", "?")
    what = f"the token endpoint {url} ({grant} grant)"
    for attempt in (0, 1):
        headers = {"accept": "application/json"}
        body = dict(data)
        client_auth(creds, metadata, body, headers)
        if dpop is not None:
            headers["dpop"] = dpop.proof("POST", url)
        try:
            async with http.stream("POST", url, data=body, headers=headers) as resp:
                doc = await _read_json(resp, MAX_TOKEN_RESPONSE_BYTES, what)
                status = resp.status_code
                fresh_nonce = dpop is not None and dpop.remember_nonce(url, resp.headers)
        except httpx.HTTPError as exc:
            if isinstance(exc, AuthorizationError):
                raise
            raise AuthorizationError(f"{what} could not be reached: {type(exc).__name__}") from None
        if attempt == 0 and status == 400 and doc.get("error") == "use_dpop_nonce" and fresh_nonce:
            continue
        break
    if status != 200 or "error" in doc:
        raise AuthorizationError(f"{what} refused the request (HTTP {status}): {_oauth_error(doc)}")
    token = doc.get("access_token")
    kind = doc.get("token_type", "Bearer")
    if not isinstance(token, str) or not token:
        raise AuthorizationError(f"{what} answered without an access_token")
    usable = ("bearer", "dpop") if dpop is not None else ("bearer",)
    if not isinstance(kind, str) or kind.lower() not in usable:
        raise AuthorizationError(f"{what} issued a {kind!r} token; mcpio sends {' and '.join(usable)} tokens only")
    expires_in = doc.get("expires_in")
    out = dict(doc)
    if isinstance(expires_in, (int, float)) and not isinstance(expires_in, bool) and expires_in > 0:
        out["expires_at"] = time.time() + float(expires_in)
    return out


async def register(
    http: httpx.AsyncClient,
    metadata: dict[str, Any],
    *,
    client_name: str,
    redirect_uris: list[str],
    grant_types: list[str],
    application_type: str,
    scope: str | None = None,
) -> ClientCredentials:
    """Dynamic Client Registration (RFC 7591) with ``application_type`` (2026-07-28, SEP-837)."""
    url = metadata.get("registration_endpoint")
    if not isinstance(url, str):
        raise AuthorizationError(
            f"the authorization server {metadata.get('issuer')} offers no dynamic client "
            "registration, and no client id was configured for it: register a client with "
            "it and pass client_id= (and client_secret=), or a client_metadata_url"
        )
    supported = metadata.get("token_endpoint_auth_methods_supported")
    method = "none"
    if isinstance(supported, list) and supported and "none" not in supported:
        method = next(
            (m for m in ("client_secret_basic", "client_secret_post") if m in supported), "client_secret_basic"
        )
    body: dict[str, Any] = {
        "client_name": client_name,
        "redirect_uris": redirect_uris,
        "grant_types": grant_types,
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": application_type,
    }
    if scope:
        body["scope"] = scope
    what = f"dynamic client registration at {url}"
    try:
        async with http.stream("POST", url, json=body, headers={"accept": "application/json"}) as resp:
            doc = await _read_json(resp, MAX_METADATA_BYTES, what)
            status = resp.status_code
    except httpx.HTTPError as exc:
        if isinstance(exc, AuthorizationError):
            raise
        raise AuthorizationError(f"{what} could not be reached: {type(exc).__name__}") from None
    if status not in (200, 201) or not isinstance(doc.get("client_id"), str):
        if metadata.get("mcpio_default_endpoints"):  # guessed (no metadata at all): not an OAuth server
            raise wants_token(
                f"it publishes no OAuth metadata, and the 2025-03-26 default registration endpoint {url} "
                f"answered HTTP {status}"
            )
        raise AuthorizationError(
            f"{what} was refused (HTTP {status}): {_oauth_error(doc)}. Register a client "
            "with the authorization server yourself and pass client_id="
        )
    secret = doc.get("client_secret")
    registered = doc.get("token_endpoint_auth_method")
    # RFC 7591 §3.2.1: the answer holds all registered metadata; a ``scope`` there bounds what the
    # client may request (none: the server registered no such bound)
    granted = doc.get("scope") if isinstance(doc.get("scope"), str) else None
    return ClientCredentials(
        client_id=doc["client_id"],
        client_secret=secret if isinstance(secret, str) else None,
        auth_method=registered if isinstance(registered, str) else None,
        source="dynamic-registration",
        redirect_uris=[u for u in doc.get("redirect_uris") or redirect_uris if isinstance(u, str)],
        scope=granted,
    )
