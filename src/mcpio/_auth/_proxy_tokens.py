"""The OAuth proxy's token endpoint logic (:class:`Grants`): redeeming a code (PKCE, the same
client, redirect URI and resource), refreshing with rotation, issuing JWTs, revoking a grant.

A *family* is the tokens of one authorization: its record (client, scopes, resource, subject,
the IdP grant) plus ``r``, the digest of the one refresh token that is current. Every access
token carries the family id as ``sid``; the resource server accepts it only while the family
record exists (:class:`._proxy._NotRevoked`). Races between processes are decided in the store
(:mod:`._proxy_store`): the first redemption of a code claims it, a replay revokes what it
gave; a refresh swaps ``r`` only if it is still the digest presented, a reused one revokes.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from ._proxy_rules import (
    OAuthError,
    _Family,
    check_verifier,
    digest,
    dump,
    load_client,
    load_code,
    load_family,
    same_secret,
    token,
)
from ._proxy_store import RETRY_AFTER, StoreFull

if TYPE_CHECKING:
    from ._proxy import OAuthProxy
    from ._proxy_store import ProxyStore

log = logging.getLogger("mcpio.auth")


def full(what: str, cap: int) -> OAuthError:
    return OAuthError(
        "temporarily_unavailable",
        f"this server holds its maximum of {cap} {what}; try again later (the operator can raise the cap)",
        503,
        RETRY_AFTER,
    )


class Grants:
    def __init__(self, proxy: OAuthProxy, store: ProxyStore) -> None:
        self.proxy = proxy
        self.store = store

    def family_ttl(self, refreshable: bool) -> float:
        p = self.proxy
        return max(p.refresh_token_ttl, p.access_token_ttl + 60) if refreshable else p.access_token_ttl + 60

    async def redeem(self, client_id: str, form: dict[str, str], resource_of: Any) -> dict[str, Any]:
        code = form.get("code") or ""
        key = digest(code)
        record = await self.store.get("code", key) if code else None
        if record is None:
            raise OAuthError("invalid_grant", "the authorization code is unknown, expired or already used")
        if record.get("fam"):  # a replay: what the first redemption issued is revoked too
            await self.revoke(record["fam"])
            raise OAuthError(
                "invalid_grant", "the authorization code was already used; the tokens it gave were revoked"
            )
        found = load_code(record)
        if found.client_id != client_id:
            raise OAuthError("invalid_grant", "the authorization code was issued to another client")
        given = form.get("redirect_uri")
        if given is None and found.redirect_given:  # OAuth 2.1 §4.1.3
            raise OAuthError("invalid_request", "redirect_uri is required: the authorization request had one")
        if given is not None and given != found.redirect_uri:
            raise OAuthError("invalid_grant", "redirect_uri differs from the one of the authorization request")
        check_verifier(form.get("code_verifier"), found.challenge)
        if "resource" in form and resource_of(form["resource"]) != found.resource:
            raise OAuthError("invalid_target", "resource differs from the one of the authorization request")
        family = token(24)
        earlier = await self.store.claim("code", key, "fam", family)  # one redemption wins
        if earlier is None:
            raise OAuthError("invalid_grant", "the authorization code is unknown, expired or already used")
        if earlier:
            await self.revoke(earlier)
            raise OAuthError(
                "invalid_grant", "the authorization code was already used; the tokens it gave were revoked"
            )
        fam = _Family(client_id, found.scope, found.resource, found.subject, found.grant)
        refreshable = await self._refreshable(client_id)
        secret = token(32) if refreshable else ""
        try:
            await self.store.put(
                "family",
                family,
                {**dump(fam), "r": digest(secret) if secret else ""},
                ttl=self.family_ttl(refreshable),
                cap=self.proxy.max_grants,
                unless_revoked=True,
            )
        except StoreFull as exc:
            if exc.who == "revoked":  # a replay of this code revoked the family meanwhile
                raise OAuthError(
                    "invalid_grant", "the authorization code was already used; the tokens it gave were revoked"
                ) from None
            raise full("grants", self.proxy.max_grants) from None
        await self._used(client_id)
        return self.issue(family, fam, secret)

    async def refresh(self, client_id: str, form: dict[str, str], resource_of: Any) -> dict[str, Any]:
        family_id, _, secret = (form.get("refresh_token") or "").partition(".")
        record = await self.store.get("family", family_id) if family_id and secret else None
        if record is None:
            raise OAuthError("invalid_grant", "the refresh token is unknown, expired or revoked")
        if not record.get("r") or not same_secret(secret, record["r"]):  # an old (rotated) one: it leaked
            await self.revoke(family_id)
            raise OAuthError(
                "invalid_grant", "the refresh token was already used; this grant is revoked (sign in again)"
            )
        fam = load_family(record)
        if fam.client_id != client_id:
            raise OAuthError("invalid_grant", "the refresh token was issued to another client")
        if "resource" in form and resource_of(form["resource"]) != fam.resource:
            raise OAuthError("invalid_target", "resource differs from the one this grant is for")
        if form.get("scope"):
            narrower = form["scope"].split()
            if not set(narrower) <= set(fam.scope):
                raise OAuthError("invalid_scope", "a refresh may only narrow the granted scopes")
            fam.scope = narrower
        new = token(32)
        outcome = await self.store.rotate(
            "family", family_id, record["r"], {**dump(fam), "r": digest(new)}, self.family_ttl(True)
        )
        if outcome == "reused":  # another request rotated it first: two holders of one token
            await self.revoke(family_id)
            raise OAuthError(
                "invalid_grant", "the refresh token was already used; this grant is revoked (sign in again)"
            )
        if outcome != "ok":
            raise OAuthError("invalid_grant", "the refresh token is unknown, expired or revoked")
        await self._used(client_id)
        return self.issue(family_id, fam, new)

    def issue(self, family_id: str, fam: _Family, refresh_secret: str) -> dict[str, Any]:
        p = self.proxy
        now = int(time.time())
        claims = {
            "iss": p.issuer,
            "aud": fam.resource,
            "sub": fam.subject,
            "client_id": fam.client_id,
            "scope": " ".join(fam.scope),
            "iat": now,
            "exp": now + int(p.access_token_ttl),
            "jti": token(16),
            "sid": family_id,
        }
        out: dict[str, Any] = {
            "access_token": p.sign(claims),
            "token_type": "Bearer",
            "expires_in": int(p.access_token_ttl),
            "scope": " ".join(fam.scope),
        }
        if refresh_secret:
            out["refresh_token"] = f"{family_id}.{refresh_secret}"
        return out

    async def revoke(self, family_id: str) -> None:
        record = await self.store.revoke("family", family_id)
        if record is None:
            return
        fam = load_family(record)
        await self.store.take("grant", fam.grant)  # the IdP's tokens of this grant go too
        log.warning(
            "revoked the tokens of a grant to client %s (a code replay or a refresh token reuse)", fam.client_id[:80]
        )

    async def _refreshable(self, client_id: str) -> bool:
        client = load_client(await self.store.get("client", client_id))
        if client is None:
            cached = self.proxy.cimd.cached(client_id)
            return cached is None or "refresh_token" in cached.get("grant_types", ["refresh_token"])
        return "refresh_token" in client.grant_types

    async def _used(self, client_id: str) -> None:
        """A registration that gets tokens is in use: it lives ``client_ttl`` from now."""
        if not client_id.startswith(("https://", "http://")):
            await self.store.touch("client", client_id, {}, self.proxy.client_ttl)
