"""PKCE (RFC 7636, S256 only: spec basic/authorization "Authorization Code Protection") and
the ``state`` value (OAuth 2.1 §4.1.1): fresh random values for each authorization."""

from __future__ import annotations

import base64
import hashlib
import secrets


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def new_verifier() -> str:
    """A code verifier: 43 characters of the unreserved set (256 bits of randomness)."""
    return _b64url(secrets.token_bytes(32))


def challenge_s256(verifier: str) -> str:
    """``BASE64URL(SHA256(verifier))`` (RFC 7636 §4.2)."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def new_state() -> str:
    return _b64url(secrets.token_bytes(24))
