"""Token verifiers: a bearer token in, an :class:`AuthInfo` out, or :class:`InvalidToken`.

* :class:`TokenVerifier` — the protocol (one async method); bring your own for anything else.
* :class:`JWTVerifier` — JWT access tokens (RFC 9068) signed by the issuer's keys (``_jwks``):
  an algorithm allow-list of asymmetric algorithms only (never ``none``, never HMAC: a public
  key is not a secret), ``iss`` equal to the issuer, ``aud`` naming this server's canonical URI
  (RFC 8707 §2; spec basic/authorization "Token Handling": tokens for another audience MUST be
  refused), ``exp`` required and ``nbf``/``iat`` honoured with a small leeway. A verified token
  is remembered (bounded, until it expires) so a repeated token costs a dict lookup, not a
  signature check.
* :class:`IntrospectionVerifier` — RFC 7662 introspection for opaque tokens, with a bounded
  cache (entries live ``cache_ttl`` seconds at most and never past the token's ``exp``).

Messages say what is wrong with a token and never contain it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from ._info import AuthInfo, split_scopes
from ._jwks import JWKS, TIMEOUT, check_url, fetch_json

MAX_TOKEN = 16 * 1024  # bytes: a longer bearer token is refused unread
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
_FAMILY = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}


class InvalidToken(Exception):
    """The token cannot be accepted (HTTP 401 ``invalid_token``); ``str()`` says why, safely."""


@runtime_checkable
class TokenVerifier(Protocol):
    """Anything that turns a bearer token into an :class:`AuthInfo`.

    ``verify`` raises :class:`InvalidToken` for a token to refuse (401) and
    :class:`AuthUnavailable` when it cannot decide now (503). It must not put the token in
    exception messages or logs."""

    async def verify(self, token: str) -> AuthInfo: ...


def audiences(resource: str) -> list[str]:
    """The ``aud`` values that name ``resource``: as given, without and with a trailing slash."""
    bare = resource.rstrip("/")
    return list(dict.fromkeys([resource, bare, bare + "/"]))


class _Memo:
    """A bounded map of verified tokens (oldest out first), each valid until its own deadline.
    Keyed by the token itself: the AuthInfo it maps to holds the token anyway, in this process
    only."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, tuple[float, AuthInfo]] = OrderedDict()

    @staticmethod
    def key(token: str) -> str:
        return token

    def get(self, key: str, now: float) -> AuthInfo | None:
        item = self._items.get(key)
        if item is None:
            return None
        if now >= item[0]:
            del self._items[key]
            return None
        return item[1]

    def put(self, key: str, until: float, info: AuthInfo) -> None:
        if self.size <= 0:
            return
        self._items[key] = (until, info)
        if len(self._items) > self.size:
            self._items.popitem(last=False)


class JWTVerifier:
    """Verifies JWT access tokens; see the module docstring.

    ``issuer``: the expected ``iss`` (and where the JWKS is discovered unless ``jwks_url`` is
    given). ``audience``: this server's canonical URI (or several). ``algorithms``: the
    allow-list (asymmetric only; ValueError for ``none`` or HS*). ``leeway``: seconds of clock
    skew tolerated on ``exp``/``nbf``/``iat``. ``http_client``: an ``httpx.AsyncClient`` to use
    for the JWKS (tests, proxies); by default one with no redirects. ``timeout``: seconds for
    each metadata/JWKS fetch.
    """

    def __init__(
        self,
        issuer: str,
        audience: str | Iterable[str],
        *,
        jwks_url: str | None = None,
        algorithms: Iterable[str] = ALGORITHMS,
        leeway: float = 30.0,
        cache_size: int = 10_000,
        jwks_ttl: float = 3600.0,
        jwks_min_refresh: float = 10.0,
        http_client: Any = None,
        timeout: float = TIMEOUT,
    ) -> None:
        self.issuer = issuer
        auds = [audience] if isinstance(audience, str) else list(audience)
        if not auds:
            raise ValueError("JWTVerifier needs the audience: this server's canonical URI")
        self.audience = [a for aud in auds for a in audiences(aud)]
        algs = tuple(algorithms)
        bad = [a for a in algs if a not in ALGORITHMS]
        if bad or not algs:
            raise ValueError(
                f"algorithms {bad} are not allowed for access tokens; choose among {ALGORITHMS} "
                "(never 'none', never HMAC with a public key)"
            )
        self.algorithms = algs
        self.leeway = leeway
        self.jwks = JWKS(
            issuer=None if jwks_url else issuer,
            jwks_url=jwks_url,
            ttl=jwks_ttl,
            min_refresh=jwks_min_refresh,
            client=http_client,
            timeout=timeout,
        )
        check_url(issuer, "the issuer")
        self._memo = _Memo(cache_size)

    async def verify(self, token: str) -> AuthInfo:
        now = time.time()
        if len(token) > MAX_TOKEN:
            raise InvalidToken(f"the token is {len(token)} bytes, over this server's limit of {MAX_TOKEN}")
        key = _Memo.key(token)
        info = self._memo.get(key, now)
        if info is not None:
            return info
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("the token is not a well-formed JWT") from None
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise InvalidToken(
                f"the token's algorithm {str(alg)[:20]!r} is not accepted; this server accepts "
                f"{', '.join(self.algorithms)}"
            )
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's 'kid' header is not a string")
        keys = [k for k in await self.jwks.get(kid) if _fits(k, alg)]
        if not keys:
            raise InvalidToken(f"no signing key of the issuer matches the token (kid {str(kid)[:64]!r}, alg {alg})")
        claims = None
        failure: Exception | None = None
        for k in keys:
            try:
                claims = jwt.decode(
                    token,
                    k.key,
                    algorithms=[alg],
                    audience=self.audience,
                    issuer=self.issuer,
                    leeway=self.leeway,
                    options={"require": ["exp", "iss", "aud"]},
                )
                break
            except jwt.InvalidSignatureError as exc:
                failure = exc
                continue
            except jwt.PyJWTError as exc:
                raise InvalidToken(_reason(exc)) from None
            except (TypeError, ValueError):
                failure = jwt.InvalidSignatureError()
        if claims is None:
            raise InvalidToken(_reason(failure or jwt.InvalidSignatureError()))
        info = _info_from(claims, token)
        exp = float(claims["exp"])
        if now + self.leeway < exp:  # remember it until it expires (nbf was checked: it is valid now)
            self._memo.put(key, exp + self.leeway, info)
        return info

    async def aclose(self) -> None:
        await self.jwks.aclose()


def _fits(jwk: Any, alg: str) -> bool:
    """Whether a JWKS key may check a token of ``alg``: same key family, same ``alg`` if the key
    names one, and for EC the curve the algorithm uses."""
    data = getattr(jwk, "_jwk_data", {}) or {}
    if data.get("alg") not in (None, alg):
        return False
    if data.get("kty") != _FAMILY.get(alg[:2]):
        return False
    if alg.startswith("ES"):
        return data.get("crv") == {"ES256": "P-256", "ES384": "P-384", "ES512": "P-521"}.get(alg)
    return True


def _reason(exc: Exception) -> str:
    import jwt

    if isinstance(exc, jwt.ExpiredSignatureError):
        return "the token has expired (exp is in the past); get a new one"
    if isinstance(exc, jwt.ImmatureSignatureError):
        return "the token is not valid yet (nbf/iat is in the future)"
    if isinstance(exc, jwt.InvalidAudienceError):
        return "the token was issued for another audience (aud does not name this server); request it with this server's resource URI"
    if isinstance(exc, jwt.InvalidIssuerError):
        return "the token was issued by another issuer (iss)"
    if isinstance(exc, jwt.MissingRequiredClaimError):
        return f"the token lacks the required claim {exc.claim!r}"
    if isinstance(exc, jwt.InvalidSignatureError):
        return "the token's signature does not verify with the issuer's keys"
    if isinstance(exc, jwt.DecodeError):
        return "the token is not a well-formed JWT"
    return f"the token is invalid ({type(exc).__name__})"


def _info_from(claims: dict[str, Any], token: str) -> AuthInfo:
    scopes = split_scopes(claims.get("scope")) or split_scopes(claims.get("scp"))
    client = claims.get("client_id", claims.get("azp"))
    sub = claims.get("sub")
    exp = claims.get("exp")
    return AuthInfo(
        subject=sub if isinstance(sub, str) else None,
        client_id=client if isinstance(client, str) else None,
        scopes=scopes,
        claims=claims,
        issuer=claims.get("iss") if isinstance(claims.get("iss"), str) else None,
        expires_at=float(exp) if isinstance(exp, int | float) else None,
        _token=token,
    )


class IntrospectionVerifier:
    """Verifies opaque tokens with the authorization server's RFC 7662 endpoint.

    ``url``: the introspection endpoint. ``client_id``/``client_secret``: this resource
    server's credentials there (HTTP Basic). ``audience``: when given, an ``aud`` in the answer
    must name it. ``issuer``: when given, an ``iss`` in the answer must equal it. Active
    answers are cached ``cache_ttl`` seconds at most (never past ``exp``), ``cache_size`` at most.
    """

    def __init__(
        self,
        url: str,
        *,
        client_id: str | None = None,
        client_secret: str | None = None,
        audience: str | Iterable[str] | None = None,
        issuer: str | None = None,
        cache_ttl: float = 60.0,
        cache_size: int = 10_000,
        http_client: Any = None,
        timeout: float = TIMEOUT,
    ) -> None:
        self.url = check_url(url, "the introspection endpoint")
        self._auth = (client_id, client_secret or "") if client_id else None
        auds = [audience] if isinstance(audience, str) else list(audience or [])
        self.audience = {a for aud in auds for a in audiences(aud)}
        self.issuer = issuer
        self.cache_ttl = cache_ttl
        self._memo = _Memo(cache_size)
        self._client = http_client
        self.timeout = timeout

    async def verify(self, token: str) -> AuthInfo:
        now = time.time()
        if len(token) > MAX_TOKEN:
            raise InvalidToken(f"the token is {len(token)} bytes, over this server's limit of {MAX_TOKEN}")
        key = _Memo.key(token)
        info = self._memo.get(key, now)
        if info is not None:
            return info
        if self._client is None:
            import httpx

            self._client = httpx.AsyncClient(follow_redirects=False, trust_env=False)
        doc = await fetch_json(
            self._client,
            self.url,
            "the introspection endpoint",
            method="POST",
            data={"token": token, "token_type_hint": "access_token"},
            auth=self._auth,
            timeout=self.timeout,
        )
        if doc.get("active") is not True:
            raise InvalidToken("the token is not active (revoked, expired or unknown to the authorization server)")
        exp = doc.get("exp")
        if isinstance(exp, int | float) and exp <= now:
            raise InvalidToken("the token has expired (exp is in the past); get a new one")
        nbf = doc.get("nbf")
        if isinstance(nbf, int | float) and nbf > now + 30:
            raise InvalidToken("the token is not valid yet (nbf is in the future)")
        if self.issuer is not None and "iss" in doc and doc["iss"] != self.issuer:
            raise InvalidToken("the token was issued by another issuer (iss)")
        if self.audience:
            aud = doc.get("aud")
            named = {aud} if isinstance(aud, str) else set(aud) if isinstance(aud, list) else set()
            if not named & self.audience:
                raise InvalidToken("the token was issued for another audience (aud does not name this server)")
        info = _info_from(doc, token)
        until = now + self.cache_ttl
        if isinstance(exp, int | float):
            until = min(until, float(exp))
        self._memo.put(key, until, info)
        return info

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
