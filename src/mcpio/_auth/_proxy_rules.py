"""The rules of the OAuth proxy (:mod:`._proxy`), without I/O: client registration validation
(RFC 7591), redirect URI matching (RFC 8252), PKCE (RFC 7636), and the records the proxy keeps
(in a :mod:`._proxy_store`) as JSON.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ._jwks import is_loopback_host

MAX_REGISTRATION = 16 * 1024  # bytes of a DCR request body
MAX_REDIRECT_URIS = 10
MAX_URI = 2000
MAX_NAME = 200
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")  # RFC 7636 §4.1
_CHALLENGE = re.compile(r"[A-Za-z0-9\-_]{43}")  # base64url(SHA-256), no padding
_FORBIDDEN_SCHEMES = {"javascript", "data", "file", "vbscript", "about", "blob"}


class OAuthError(Exception):
    """An OAuth error response: ``error`` code (RFC 6749 §5.2 / RFC 7591 §3.2.2), a description
    that says what to fix, and the HTTP status."""

    def __init__(self, error: str, description: str, status: int = 400, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.status = status
        self.retry_after = retry_after

    def body(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


def token(nbytes: int = 32) -> str:
    return secrets.token_urlsafe(nbytes)


def digest(secret: str) -> str:
    """What is stored instead of a secret (refresh tokens, client secrets, browser bindings)."""
    return hashlib.sha256(secret.encode()).hexdigest()


def same_secret(given: str, stored_digest: str) -> bool:
    return hmac.compare_digest(digest(given), stored_digest)


def s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def check_challenge(challenge: str | None, method: str | None) -> str:
    """The PKCE challenge of an authorization request; S256 only (OAuth 2.1 §4.1.1, spec
    basic/authorization "Authorization Code Protection")."""
    if not challenge:
        raise OAuthError("invalid_request", "code_challenge is required: this server needs PKCE (S256)")
    if method != "S256":
        raise OAuthError("invalid_request", f"code_challenge_method must be S256, not {str(method)[:20]!r}")
    if not _CHALLENGE.fullmatch(challenge):
        raise OAuthError("invalid_request", "code_challenge must be 43 base64url characters (SHA-256 of the verifier)")
    return challenge


def check_verifier(verifier: str | None, challenge: str) -> None:
    if not verifier:
        raise OAuthError("invalid_grant", "code_verifier is required (PKCE)")
    if not _VERIFIER.fullmatch(verifier) or not hmac.compare_digest(s256(verifier), challenge):
        raise OAuthError(
            "invalid_grant", "code_verifier does not match the code_challenge of the authorization request"
        )


def redirect_matches(given: str, registered: list[str]) -> bool:
    """Exact string match; for http://127.0.0.1 / localhost / [::1] registrations any port
    matches (RFC 8252 §7.3: native apps' loopback listeners get a port at run time)."""
    if given in registered:
        return True
    g = urlsplit(given)
    if g.scheme != "http" or not is_loopback_host(g.hostname):
        return False
    for r in registered:
        p = urlsplit(r)
        if (p.scheme, p.hostname, p.path, p.query) == (g.scheme, g.hostname, g.path, g.query) and not g.fragment:
            return True
    return False


def check_redirect_uri(uri: Any) -> str:
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI:
        raise OAuthError("invalid_redirect_uri", f"each redirect URI must be a string of at most {MAX_URI} characters")
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if not scheme or scheme in _FORBIDDEN_SCHEMES:
        raise OAuthError("invalid_redirect_uri", f"redirect URI {uri[:100]!r} must be absolute, with a usable scheme")
    if parts.fragment or "#" in uri:
        raise OAuthError("invalid_redirect_uri", f"redirect URI {uri[:100]!r} must not have a #fragment")
    if scheme == "http" and not is_loopback_host(parts.hostname):
        raise OAuthError(
            "invalid_redirect_uri",
            f"redirect URI {uri[:100]!r}: http:// is accepted on loopback only "
            "(127.0.0.1, [::1], localhost); use https://",
        )
    if scheme in ("http", "https") and not parts.hostname:
        raise OAuthError("invalid_redirect_uri", f"redirect URI {uri[:100]!r} has no host")
    return uri


@dataclass
class ClientInfo:
    """A registered client (by DCR) or one described by its metadata document (CIMD)."""

    client_id: str
    redirect_uris: list[str]
    client_name: str | None = None
    auth_method: str = "none"  # token_endpoint_auth_method
    secret_digest: str | None = None
    grant_types: list[str] = field(default_factory=lambda: ["authorization_code", "refresh_token"])
    scope: str | None = None
    confirmed: bool = False  # a user approved it here once: errors may go to its redirect URI


def validate_registration(doc: Any, *, scopes: frozenset[str], client_id: str | None = None) -> ClientInfo:
    """A :class:`ClientInfo` from client metadata (RFC 7591 §2, or a CIMD document), or OAuthError
    ``invalid_client_metadata`` / ``invalid_redirect_uri`` naming the field."""
    if not isinstance(doc, dict):
        raise OAuthError("invalid_client_metadata", "the client metadata must be a JSON object")
    uris = doc.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise OAuthError(
            "invalid_redirect_uri",
            f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs "
            "(this server supports the authorization code flow only)",
        )
    uris = [check_redirect_uri(u) for u in uris]
    grants = doc.get("grant_types", ["authorization_code", "refresh_token"])
    if (
        not isinstance(grants, list)
        or not set(grants) <= {"authorization_code", "refresh_token"}
        or "authorization_code" not in grants
    ):
        raise OAuthError(
            "invalid_client_metadata",
            "grant_types must include authorization_code and may add refresh_token (no other grant is supported)",
        )
    responses = doc.get("response_types", ["code"])
    if responses != ["code"]:
        raise OAuthError("invalid_client_metadata", 'response_types must be ["code"]')
    method = doc.get("token_endpoint_auth_method", "none" if client_id else "client_secret_basic")
    allowed = ("none",) if client_id else ("none", "client_secret_basic", "client_secret_post")
    if method not in allowed:
        raise OAuthError("invalid_client_metadata", f"token_endpoint_auth_method must be one of {', '.join(allowed)}")
    name = doc.get("client_name")
    if name is not None and (not isinstance(name, str) or len(name) > MAX_NAME):
        raise OAuthError("invalid_client_metadata", f"client_name must be a string of at most {MAX_NAME} characters")
    scope = doc.get("scope")
    if scope is not None:
        if not isinstance(scope, str) or len(scope) > 1000:
            raise OAuthError("invalid_client_metadata", "scope must be a space-separated string")
        unknown = set(scope.split()) - scopes
        if unknown:
            raise OAuthError(
                "invalid_client_metadata",
                f"unknown scopes {sorted(unknown)[:5]}; this server offers {' '.join(sorted(scopes))}",
            )
    return ClientInfo(
        client_id=client_id or "",
        redirect_uris=uris,
        client_name=name,
        auth_method=method,
        grant_types=list(grants),
        scope=scope,
    )


@dataclass
class _Login:  # one authorization request, from /authorize to the consent answer
    client: ClientInfo
    redirect_uri: str
    state: str | None
    challenge: str
    scope: list[str]
    resource: str
    browser: str  # digest of the cookie binding this login to the browser that started it
    upstream_state: str
    upstream_verifier: str
    csrf: str = ""
    subject: str | None = None
    grant: str | None = None
    redirect_given: bool = True  # the request named its redirect_uri: the token request must repeat it


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    challenge: str
    scope: list[str]
    resource: str
    subject: str
    grant: str
    redirect_given: bool = True


@dataclass
class _Family:  # the tokens of one authorization, refreshed with rotation
    client_id: str
    scope: list[str]
    resource: str
    subject: str
    grant: str


def dump(record: Any) -> dict[str, str]:
    """A store record (``v``: the JSON) of a :class:`ClientInfo`, ``_Login``, ``_Code`` or ``_Family``."""
    return {"v": json.dumps(asdict(record), separators=(",", ":"))}


def load_client(record: dict[str, str] | None) -> ClientInfo | None:
    return ClientInfo(**json.loads(record["v"])) if record else None


def load_login(record: dict[str, str] | None) -> _Login | None:
    if not record:
        return None
    doc = json.loads(record["v"])
    return _Login(**{**doc, "client": ClientInfo(**doc["client"])})


def load_code(record: dict[str, str]) -> _Code:
    return _Code(**json.loads(record["v"]))


def load_family(record: dict[str, str]) -> _Family:
    return _Family(**json.loads(record["v"]))
