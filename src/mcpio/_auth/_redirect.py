"""The authorization response (RFC 6749 §4.1.2) as it comes back to the redirect URI: checked
before any code is redeemed — the same redirect URI, the ``state`` sent, the RFC 9207 ``iss`` of
the discovered issuer (required when the server advertises it), an ``error`` reported as such.
Pure: no I/O."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from ._discovery import AuthorizationError

if TYPE_CHECKING:
    from ._discovery import Discovery


def code_of_redirect(redirect: str, redirect_uri: str, state: str, disc: Discovery) -> str:
    """The code of the authorization response, after the ``state`` and RFC 9207 ``iss`` checks."""
    got, sent = urlsplit(redirect), urlsplit(redirect_uri)
    if (got.scheme, got.netloc, got.path) != (sent.scheme, sent.netloc, sent.path):
        raise AuthorizationError(
            f"the user agent came back with {got.scheme}://{got.netloc}{got.path}, not the "
            f"redirect URI {redirect_uri}; nothing was exchanged"
        )
    query = {k: v[0] for k, v in parse_qs(got.query, keep_blank_values=True).items()}
    if query.get("state") != state:
        raise AuthorizationError(
            "the authorization response's state is "
            + ("missing" if "state" not in query else "not the one sent")
            + " (a forged or stale redirect); nothing was exchanged. Start the login again"
        )
    iss = query.get("iss")
    if iss is not None and iss != disc.metadata.get("issuer"):
        raise AuthorizationError(
            f"the authorization response names the issuer {iss!r}, not {disc.metadata.get('issuer')!r} "
            "(RFC 9207: a mix-up attack or a misconfigured server); the code was not redeemed"
        )
    if iss is None and disc.metadata.get("authorization_response_iss_parameter_supported") is True:
        raise AuthorizationError(
            f"the authorization server {disc.issuer} advertises the iss parameter but its response has none "
            "(RFC 9207); the code was not redeemed"
        )
    if "error" in query:
        desc = query.get("error_description", "")[:300]
        raise AuthorizationError(
            f"the authorization server {disc.issuer} refused the authorization: "
            f"{query['error']}" + (f": {desc}" if desc else "")
        )
    code = query.get("code")
    if not code:
        raise AuthorizationError("the authorization response carries no code")
    return code
