"""The upstream identity provider of the OAuth proxy: where the user logs in.

:class:`Upstream` holds the fixed client registration at the IdP (client id and secret: the
secret is sent to the IdP's token endpoint only, never logged, never in a message) and runs the
two calls the proxy makes there: the code exchange (with the proxy's own PKCE verifier) and,
when configured, the userinfo request that names the user. :func:`discover` reads an issuer's
RFC 8414 / OIDC metadata (or a metadata URL) for the endpoints.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._shown import shown, shown_repr
from ._jwks import TIMEOUT, AuthUnavailable, check_url, discover_metadata, fetch_json


@dataclass(repr=False)
class Upstream:
    authorize_url: str
    token_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: list[str]
    userinfo_url: str | None = None
    subject_claim: str = "sub"
    auth_method: str = "client_secret_post"  # or client_secret_basic
    timeout: float = TIMEOUT

    __repr__ = shown_repr  # its endpoints without their credentials

    def __post_init__(self) -> None:
        check_url(self.authorize_url, "the upstream authorization endpoint")
        check_url(self.token_url, "the upstream token endpoint")
        if self.userinfo_url:
            check_url(self.userinfo_url, "the upstream userinfo endpoint")
        if self.auth_method not in ("client_secret_post", "client_secret_basic"):
            raise ValueError("upstream_auth_method must be client_secret_post or client_secret_basic")
        if not self.client_id or not self.client_secret:
            raise ValueError(
                "the upstream client id and secret are required (register this proxy at the IdP with "
                "its callback URL as redirect URI)"
            )

    async def exchange(self, client: Any, code: str, redirect_uri: str, verifier: str) -> dict[str, Any]:
        """The IdP's token response for ``code``; AuthUnavailable when the IdP refuses or fails
        (the message names the endpoint as :func:`.._shown.shown` shows it, and the status: never
        a secret)."""
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        auth = None
        if self.auth_method == "client_secret_basic":
            auth = (self.client_id, self.client_secret)
        else:
            data.update(client_id=self.client_id, client_secret=self.client_secret)
        doc = await fetch_json(
            client,
            self.token_url,
            "the upstream token endpoint",
            method="POST",
            data=data,
            auth=auth,
            timeout=self.timeout,
        )
        if not isinstance(doc.get("access_token"), str):
            raise AuthUnavailable(
                f"the upstream token endpoint {shown(self.token_url)} answered without an access_token"
                + (f" (error {str(doc.get('error'))[:60]!r})" if doc.get("error") else "")
            )
        return doc

    async def subject(self, client: Any, tokens: dict[str, Any]) -> str | None:
        """Who logged in: the userinfo endpoint's ``subject_claim`` when configured, else the
        ``sub`` of the ID token the IdP returned over TLS to this authenticated client (OIDC
        Core §3.1.3.7 allows it unverified in that case), else None."""
        if self.userinfo_url:
            import httpx

            doc = await fetch_json(
                client,
                self.userinfo_url,
                "the upstream userinfo endpoint",
                auth=_Bearer(tokens["access_token"], httpx),
                timeout=self.timeout,
            )
            value = doc.get(self.subject_claim)
            return str(value) if isinstance(value, str | int) else None
        id_token = tokens.get("id_token")
        if isinstance(id_token, str):
            import jwt

            try:
                sub = jwt.decode(id_token, options={"verify_signature": False}).get("sub")
            except jwt.PyJWTError:
                return None
            return sub if isinstance(sub, str) else None
        return None


def _Bearer(token: str, httpx: Any) -> Any:
    class Bearer(httpx.Auth):  # type: ignore[misc]  # httpx is passed in (imported lazily), so typed Any here
        def auth_flow(self, request: Any) -> Any:
            request.headers["authorization"] = f"Bearer {token}"
            yield request

    return Bearer()


async def discover(url: str, timeout: float = TIMEOUT) -> dict[str, Any]:
    """The upstream metadata from an issuer URL (RFC 8414 then OIDC discovery) or the URL of a
    metadata document itself (any URL containing ``/.well-known/``)."""
    import httpx

    async with httpx.AsyncClient(follow_redirects=False, trust_env=False) as client:
        if "/.well-known/" in url:
            return await fetch_json(
                client, check_url(url, "the upstream metadata URL"), "the upstream metadata", timeout=timeout
            )
        return await discover_metadata(client, check_url(url.rstrip("/"), "the upstream issuer"), timeout)
