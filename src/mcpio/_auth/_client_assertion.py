"""The one place the client signs JWTs (:func:`sign_jwt`): ``private_key_jwt`` client
assertions (RFC 7523 §2.2, SEP-1046) and DPoP proofs (RFC 9449, ``_dpop``).

The JOSE library (pyjwt with cryptography, the ``auth`` extra) is imported here only, when a
signature is first needed, so swapping the library touches :func:`sign_jwt` alone.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_LIFETIME = 300  # seconds


def sign_client_assertion(
    client_id: str,
    audience: str,
    private_key_pem: str,
    algorithm: str = "ES256",
    *,
    key_id: str | None = None,
    now: float | None = None,
) -> str:
    """A signed JWT asserting ``client_id`` to the authorization server ``audience`` (its issuer).

    Claims: ``iss`` = ``sub`` = the client id, ``aud`` = the issuer, ``iat``, ``exp`` (5 min),
    a random ``jti``. Raises :class:`RuntimeError` when the JOSE library is missing and
    :class:`ValueError` for a key that cannot sign with ``algorithm`` (the key is never quoted).
    """
    issued = int(now if now is not None else time.time())
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + ASSERTION_LIFETIME,
        "jti": secrets.token_urlsafe(16),
    }
    headers = {"kid": key_id} if key_id else None
    try:
        return sign_jwt(claims, private_key_pem, algorithm, headers)
    except ValueError as exc:
        raise ValueError(f"cannot sign the client assertion with {algorithm}: {exc}") from None


def sign_jwt(claims: dict[str, Any], key: Any, algorithm: str, headers: dict[str, Any] | None = None) -> str:
    """``claims`` signed with ``key`` (a PEM string or a cryptography private key) as a compact
    JWS. Raises :class:`RuntimeError` without the JOSE library, :class:`ValueError` for a key
    that cannot sign with ``algorithm`` (the key is never quoted)."""
    try:
        import jwt
    except ImportError as exc:
        raise RuntimeError("signing JWTs needs pyjwt[crypto]: pip install 'mcpio[auth]'") from exc
    try:
        return jwt.encode(claims, key, algorithm=algorithm, headers=headers)
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise ValueError(
            f"the private key does not fit ({type(exc).__name__}); give a PEM (PKCS#8) key of the algorithm's type"
        ) from None
