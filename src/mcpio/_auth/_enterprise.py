"""Enterprise-managed authorization (SEP-990): the user's enterprise identity provider issues an
Identity Assertion JWT Authorization Grant (ID-JAG) by token exchange (RFC 8693), and the MCP
server's authorization server takes it in the JWT bearer grant (RFC 7523).

:func:`id_jag_assertion` makes the ``assertion`` callable of ``OAuth(grant="jwt_bearer")``: it
exchanges the user's ID token at the IdP for an ID-JAG whose audience is the authorization
server's issuer and whose resource is the MCP server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import httpx

from ._discovery import AuthorizationError, oauth_http, require_secure

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"


def id_jag_assertion(
    idp_token_endpoint: str,
    id_token: str | Callable[[], str],
    idp_client_id: str,
    *,
    idp_client_secret: str | None = None,
    timeout: float = 30.0,
) -> Callable[[str, str], Awaitable[str]]:
    """An ``assertion`` callable ``(issuer, resource) -> ID-JAG`` for ``OAuth(grant="jwt_bearer")``.

    ``id_token``: the user's ID token from the enterprise IdP (or a callable returning a fresh
    one). Raises :class:`AuthorizationError` when the IdP refuses the exchange.
    """
    require_secure(idp_token_endpoint, "the identity provider's token endpoint")

    async def exchange(issuer: str, resource: str) -> str:
        data = {
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": ID_JAG,
            "audience": issuer,
            "resource": resource,
            "subject_token": id_token() if callable(id_token) else id_token,
            "subject_token_type": ID_TOKEN,
            "client_id": idp_client_id,
        }
        if idp_client_secret:
            data["client_secret"] = idp_client_secret
        async with oauth_http(timeout) as http:
            try:
                resp = await http.post(idp_token_endpoint, data=data, headers={"accept": "application/json"})
                doc = resp.json()
            except (httpx.HTTPError, ValueError) as exc:
                raise AuthorizationError(
                    f"the token exchange at {idp_token_endpoint} failed: {type(exc).__name__}"
                ) from None
        token = doc.get("access_token") if isinstance(doc, dict) else None
        if resp.status_code != 200 or not isinstance(token, str):
            err = doc.get("error") if isinstance(doc, dict) else None
            raise AuthorizationError(
                f"the identity provider {idp_token_endpoint} refused the token exchange "
                f"(HTTP {resp.status_code}): {err or 'no error code'}"
            )
        return token

    return exchange
