"""``private_key_jwt`` client authentication (RFC 7523 §2.2, SEP-1046): the one place that signs.

The JOSE library (pyjwt with cryptography, the ``auth`` extra) is imported here only, when a
client assertion is first needed, so swapping the library touches this function alone.
"""

from __future__ import annotations

import secrets
import time

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_LIFETIME = 300  # seconds


def sign_client_assertion(client_id: str, audience: str, private_key_pem: str, algorithm: str = "ES256",
                          *, key_id: str | None = None, now: float | None = None) -> str:
    """A signed JWT asserting ``client_id`` to the authorization server ``audience`` (its issuer).

    Claims: ``iss`` = ``sub`` = the client id, ``aud`` = the issuer, ``iat``, ``exp`` (5 min),
    a random ``jti``. Raises :class:`RuntimeError` when the JOSE library is missing and
    :class:`ValueError` for a key that cannot sign with ``algorithm`` (the key is never quoted).
    """
    try:
        import jwt
    except ImportError as exc:
        raise RuntimeError("private_key_jwt needs pyjwt[crypto]: pip install 'mcpio[auth]'") from exc
    issued = int(now if now is not None else time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": audience, "iat": issued,
              "exp": issued + ASSERTION_LIFETIME, "jti": secrets.token_urlsafe(16)}
    headers = {"kid": key_id} if key_id else None
    try:
        return jwt.encode(claims, private_key_pem, algorithm=algorithm, headers=headers)
    except (ValueError, TypeError, jwt.PyJWTError) as exc:
        raise ValueError(f"cannot sign the client assertion with {algorithm}: the private key does not fit "
                         f"({type(exc).__name__}); give a PEM (PKCS#8) key of the algorithm's type") from None
