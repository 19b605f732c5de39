"""The OAuth proxy's keys from one configured secret (``OAuthProxy(secret=...)``, or
``$MCPIO_AUTH_PROXY_SECRET`` for ``mcpio run``): the ES256 key that signs its tokens and the
AES-256-GCM key that encrypts the IdP's tokens at rest (in memory or on Redis), each derived
with HKDF-SHA256 under its own label. Every process given the same secret (the workers of
``--workers N``, replicas behind a load balancer, the same server after a restart) signs and
reads the same; without a secret a process makes random keys (its forked workers inherit them,
a restart does not).
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any

MIN_SECRET = 32  # characters: a secret shorter than this is refused


def derive(secret: str, label: str, size: int = 32) -> bytes:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=hashes.SHA256(), length=size, salt=None, info=b"mcpio-oauth-proxy/" + label.encode()).derive(
        secret.encode()
    )


def check_secret(secret: str) -> str:
    if len(secret) < MIN_SECRET:
        raise ValueError(
            f"the proxy's secret (OAuthProxy(secret=...), $MCPIO_AUTH_PROXY_SECRET for mcpio run) must be at least {MIN_SECRET} characters of randomness "
            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))')"
        )
    return secret


def signing_key(secret: str) -> Any:
    """The EC P-256 private key derived from ``secret``."""
    from cryptography.hazmat.primitives.asymmetric import ec

    order = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # P-256's n
    value = int.from_bytes(derive(secret, "es256", 48), "big") % (order - 1) + 1
    return ec.derive_private_key(value, ec.SECP256R1())


class Sealer:
    """Encrypts JSON values with AES-256-GCM (a random 96-bit nonce each); ``open`` returns
    None for anything it did not seal with this key (another secret, tampering)."""

    def __init__(self, key: bytes) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aead = AESGCM(key)

    def seal(self, value: Any, context: str) -> str:
        nonce = os.urandom(12)
        box = self._aead.encrypt(nonce, json.dumps(value).encode(), context.encode())
        return base64.urlsafe_b64encode(nonce + box).decode()

    def open(self, sealed: str, context: str) -> Any:
        from cryptography.exceptions import InvalidTag

        try:
            raw = base64.urlsafe_b64decode(sealed.encode())
            return json.loads(self._aead.decrypt(raw[:12], raw[12:], context.encode()))
        except (InvalidTag, ValueError):
            return None
