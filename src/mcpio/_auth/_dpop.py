"""DPoP (RFC 9449; MCP extension SEP-1932): sender-constrained tokens.

:class:`DPoPKey` is the client's key pair (EC P-256, ES256) and makes the proofs: a JWT with
``typ: dpop+jwt`` and the public ``jwk`` in its header, claims ``jti``, ``htm``, ``htu`` (the
URL without query or fragment), ``iat``, ``ath`` (the hash of the access token, on resource
requests) and the server's ``nonce`` when one was given (``DPoP-Nonce``, §8 and §9). The key is
kept with the token it is bound to (the token store's entry), so a stored token stays usable.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ._client_assertion import sign_jwt


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def htu_of(url: str) -> str:
    p = urlsplit(url)
    return urlunsplit((p.scheme, p.netloc, p.path, "", ""))


def origin_of(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


class DPoPKey:
    """An ES256 key pair for DPoP proofs (new, or from its PEM)."""

    algorithm = "ES256"

    def __init__(self, pem: str | None = None) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        if pem is not None:
            key = serialization.load_pem_private_key(pem.encode(), password=None)
            if not isinstance(key, ec.EllipticCurvePrivateKey):
                raise ValueError("a DPoP key must be an EC P-256 key")
        else:
            key = ec.generate_private_key(ec.SECP256R1())
        self._key = key
        nums = key.public_key().public_numbers()
        self.jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64(nums.x.to_bytes(32, "big")),
            "y": _b64(nums.y.to_bytes(32, "big")),
        }
        self.nonces: dict[str, str] = {}  # origin -> the last DPoP-Nonce it sent

    def __repr__(self) -> str:
        return "DPoPKey(ES256)"

    def pem(self) -> str:
        from cryptography.hazmat.primitives import serialization

        return self._key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ).decode("ascii")

    def proof(self, method: str, url: str, *, access_token: str | None = None) -> str:
        """A fresh proof for one request (with the nonce the server at ``url`` last gave)."""
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu_of(url),
            "iat": int(time.time()),
        }
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
        nonce = self.nonces.get(origin_of(url))
        if nonce is not None:
            claims["nonce"] = nonce
        return sign_jwt(claims, self._key, self.algorithm, {"typ": "dpop+jwt", "jwk": self.jwk})

    def remember_nonce(self, url: str, headers: Any) -> bool:
        """Keep the ``DPoP-Nonce`` a response from ``url`` carries; True if it is a new one."""
        nonce = headers.get("dpop-nonce")
        if not nonce or self.nonces.get(origin_of(url)) == nonce:
            return False
        self.nonces[origin_of(url)] = nonce
        return True
