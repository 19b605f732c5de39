"""Bearer tokens you hand out yourself, with no authorization server: the simplest way to let a
teammate in (``auth=StaticTokens(…)``, ``mcpio run -t http --auth-token-env VAR``).

:class:`BearerAuth` takes any :class:`TokenVerifier` (a JWT you signed, say);
:class:`StaticTokens` is both such a configuration (what an app takes as ``auth=``) and the
verifier its guard calls: the same :class:`~mcpio._auth._resource.Guard` as OAuth
(one place parses the ``Authorization`` header, binds legacy sessions to their principal, sets
``ctx.auth``), but with no OAuth metadata: nothing is served at
``/.well-known/oauth-protected-resource`` and the 401 challenge names no ``resource_metadata``
(RFC 6750 §3: ``WWW-Authenticate: Bearer`` alone), so clients are told to send a token, not
to look for an authorization server.

A presented token is compared with every configured one in constant time (SHA-256 digests
compared with :func:`hmac.compare_digest`, all of them, whatever matches): the time taken says
nothing about which token, or how much of one, was right. Tokens never appear in messages,
logs or ``repr``. Static tokens do not expire: rotate them by restarting with a new list (the
protecting-a-server guide shows how to mint a JWT with an expiry instead).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._info import AuthInfo
from ._resource import _B64TOKEN, Guard
from ._verify import InvalidToken, TokenVerifier

MIN_LENGTH = 16  # characters: shorter shared secrets are refused (guessable)
MINT = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'


def split_tokens(text: str) -> list[str]:
    """Tokens from one string (an environment variable): separated by commas, newlines or
    other whitespace; empty entries skipped."""
    return [t for t in re.split(r"[\s,]+", text) if t]


class BearerAuth:
    """Protect an HTTP server with bearer tokens that ``verifier`` (any :class:`TokenVerifier`)
    checks, with no OAuth metadata: for tokens you hand out yourself (a JWT you signed, a
    database of API keys). :class:`StaticTokens` is the ready-made one."""

    def __init__(self, verifier: TokenVerifier) -> None:
        self.verifier = verifier

    resource: str | None = None  # no canonical URI: tokens carry no audience
    metadata_url: str | None = None  # no OAuth metadata: the guard serves none and names none
    metadata_path: str | None = None
    required_scopes: frozenset[str] = frozenset()
    scopes_supported: list[str] = []  # noqa: RUF012 - read only
    implied_scopes: Mapping[str, Iterable[str]] = {}

    def metadata(self) -> dict[str, Any]:
        return {}

    def guard(
        self,
        *,
        scopes_for: Callable[[str, str], Iterable[str]] | None = None,
        scoped: Callable[[], bool] | None = None,
        max_body_size: int = 16 * 1024 * 1024,
        state: Any = None,
    ) -> Any:
        """The per-request check for an app (``http_app`` calls it): the OAuth guard, with no
        metadata. ``state`` (the server's state backend) is not used."""
        return Guard(self, scopes_for=scopes_for, scoped=scoped, max_body_size=max_body_size)  # type: ignore[arg-type]


class StaticTokens(BearerAuth):
    """Protect an HTTP server with one or more fixed bearer tokens (shared secrets).

    ``tokens``: the accepted tokens, or a mapping ``{token: name}`` naming who holds each (the
    name is ``ctx.auth.subject``; by default ``token-1``, ``token-2``… in the order given: a
    legacy session opened with one token cannot be used with another). ``scopes``: the scopes
    every token grants (for items registered with ``scopes=``; default none).

    ``ValueError`` when a token is shorter than 16 characters or has characters a
    ``Bearer`` header cannot carry (RFC 6750 §2.1); the message never shows the token.
    """

    def __init__(self, tokens: Iterable[str] | Mapping[str, str], *, scopes: Iterable[str] = ()) -> None:
        if isinstance(tokens, str):
            raise TypeError("StaticTokens takes a list of tokens (or a {token: name} mapping), not one string")
        named = (
            list(tokens.items())
            if isinstance(tokens, Mapping)
            else [(t, f"token-{i}") for i, t in enumerate(tokens, 1)]
        )
        if not named:
            raise ValueError("StaticTokens needs at least one token")
        for i, (token, _) in enumerate(named, 1):
            if not isinstance(token, str) or not _B64TOKEN.fullmatch(token):
                raise ValueError(
                    f"token {i} cannot be sent in an 'Authorization: Bearer' header: use letters, digits and "
                    f"-._~+/ only (RFC 6750); make one with {MINT}"
                )
            if len(token) < MIN_LENGTH:
                raise ValueError(
                    f"token {i} has {len(token)} characters; a shared secret needs {MIN_LENGTH} or more "
                    f"(make one with {MINT})"
                )
        self._digests = [(hashlib.sha256(t.encode()).digest(), name) for t, name in named]
        self.scopes = frozenset(scopes)
        super().__init__(self)

    def __repr__(self) -> str:
        return f"StaticTokens({len(self._digests)} tokens)"

    # ------------------------------------------------------------------ TokenVerifier
    async def verify(self, token: str) -> AuthInfo:
        given = hashlib.sha256(token.encode("utf-8", "replace")).digest()
        found: str | None = None
        for digest, name in self._digests:  # every one, whatever matches: constant time
            if hmac.compare_digest(given, digest) and found is None:
                found = name
        if found is None:
            raise InvalidToken("the token is not one this server accepts; ask its operator for the right one")
        return AuthInfo(subject=found, client_id=None, scopes=self.scopes, issuer="static", _token=token)
