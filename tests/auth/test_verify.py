"""Token verifiers against a real issuer on 127.0.0.1 (tests/support/issuer.py): every bad
token and every misbehaving authorization server gets its answer, and no message holds the token."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from mcpio.auth import AuthUnavailable, IntrospectionVerifier, InvalidToken, JWTVerifier
from tests.support.issuer import Issuer

AUD = "https://mcp.example.com/mcp"


@pytest.fixture
def issuer():
    with Issuer() as iss:
        yield iss


def run(coro):
    return asyncio.run(coro)


async def verify(verifier, token):
    try:
        return await verifier.verify(token)
    finally:
        await verifier.aclose()


def refused(issuer, token, **options) -> str:
    with pytest.raises(InvalidToken) as err:
        run(verify(JWTVerifier(issuer.url, AUD, **options), token))
    message = str(err.value)
    assert token not in message and token[-20:] not in message
    return message


def b64(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


@pytest.mark.parametrize("alg", ["RS256", "ES256"])
def test_a_valid_token_gives_who_and_what(issuer, alg):
    token = issuer.mint(aud=AUD, scope="notes:read notes:write", alg=alg)
    info = run(verify(JWTVerifier(issuer.url, AUD), token))
    assert (info.subject, info.client_id, info.issuer) == ("alice", "app-1", issuer.url)
    assert info.scopes == {"notes:read", "notes:write"}
    assert info.raw_token() == token and token not in repr(info)
    assert info.principal == f"{issuer.url} alice"


def test_audience_in_a_list_and_trailing_slash(issuer):
    assert run(verify(JWTVerifier(issuer.url, AUD), issuer.mint(aud=["other", AUD + "/"]))).subject == "alice"


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        ({"aud": "https://other.example.com/mcp"}, "another audience"),
        ({"aud": None}, "'aud'"),
        ({"lifetime": -120}, "expired"),
        ({"nbf": 4102444800}, "not valid yet"),
        ({"iss": "https://evil.example"}, "another issuer"),
        ({"exp": None}, "'exp'"),
    ],
)
def test_claims_are_checked(issuer, claims, why):
    claims = dict(claims)
    aud = claims.pop("aud", AUD)
    assert why in refused(issuer, issuer.mint(aud=aud, **claims))


def test_small_clock_skew_is_tolerated(issuer):
    token = issuer.mint(aud=AUD, lifetime=-10)  # expired 10 s ago, within the 30 s leeway
    assert run(verify(JWTVerifier(issuer.url, AUD), token)).subject == "alice"


def test_forged_signature(issuer):
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert "signature" in refused(issuer, issuer.mint(aud=AUD, key=other))


def test_unknown_kid(issuer):
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    assert "no signing key" in refused(issuer, issuer.mint(aud=AUD, key=other, kid="nope"))


def test_alg_none(issuer):
    token = (
        b64({"alg": "none", "typ": "JWT", "kid": "rsa-1"})
        + "."
        + b64({"iss": issuer.url, "aud": AUD, "sub": "mallory", "exp": 4102444800})
        + "."
    )
    assert "'none' is not accepted" in refused(issuer, token)


def test_hmac_with_the_public_key_is_refused(issuer):
    pem = (
        issuer.keys["rsa"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    import hashlib
    import hmac

    head = b64({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"})
    body = b64({"iss": issuer.url, "aud": AUD, "sub": "mallory", "exp": 4102444800})
    sig = base64.urlsafe_b64encode(hmac.new(pem, f"{head}.{body}".encode(), hashlib.sha256).digest()).rstrip(b"=")
    assert "'HS256' is not accepted" in refused(issuer, f"{head}.{body}.{sig.decode()}")


def test_hmac_cannot_be_allowed():
    with pytest.raises(ValueError, match="never HMAC"):
        JWTVerifier("https://idp.example.com", AUD, algorithms=["HS256"])


def test_ec_key_cannot_check_an_rsa_token(issuer):
    token = issuer.mint(aud=AUD, alg="RS256", kid="ec-1")
    assert "no signing key" in refused(issuer, token)


@pytest.mark.parametrize("token", ["garbage", "a.b.c", "eyJ.eyJ.x", "x" * 20_000])
def test_garbage_and_oversized(issuer, token):
    message = refused(issuer, token)
    assert "well-formed" in message or "limit" in message


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("down", "HTTP 503"),
        ("html", "text/html"),
        ("huge", "over the limit"),
        ("hang", "did not answer"),
        ("wrong-issuer", "names issuer"),
    ],
)
def test_issuer_misbehaving_is_unavailable_not_invalid(issuer, mode, why):
    token = issuer.mint(aud=AUD)
    issuer.mode = mode
    with pytest.raises(AuthUnavailable) as err:
        run(verify(JWTVerifier(issuer.url, AUD, timeout=0.5), token))
    assert why in str(err.value) and token not in str(err.value)


def test_issuer_with_a_path_uses_path_insertion():
    with Issuer(path="/tenant1") as iss:
        assert run(verify(JWTVerifier(iss.url, AUD), iss.mint(aud=AUD))).subject == "alice"
        assert "/.well-known/oauth-authorization-server/tenant1" in iss.hits


def test_keys_are_cached_and_refetched_on_rotation(issuer):
    async def go():
        v = JWTVerifier(issuer.url, AUD, jwks_min_refresh=0)
        try:
            await v.verify(issuer.mint(aud=AUD, jti="1"))
            await v.verify(issuer.mint(aud=AUD, jti="2", alg="ES256"))
            assert issuer.hits.count("/jwks") == 1
            issuer.rotate()
            await v.verify(issuer.mint(aud=AUD, jti="3"))  # unknown kid: one refetch
            assert issuer.hits.count("/jwks") == 2
        finally:
            await v.aclose()

    run(go())


def test_unknown_kids_do_not_hammer_the_issuer(issuer):
    async def go():
        v = JWTVerifier(issuer.url, AUD)  # default: at most one refetch per 10 s
        try:
            await v.verify(issuer.mint(aud=AUD))
            for n in range(20):
                with pytest.raises(InvalidToken):
                    await v.verify(issuer.mint(aud=AUD, kid=f"made-up-{n}"))
            assert issuer.hits.count("/jwks") == 1
        finally:
            await v.aclose()

    run(go())


def test_a_failing_jwks_is_fetched_once_for_a_flood_of_unknown_kids(issuer):
    """The IdP answers 500 to every JWKS request: 40 concurrent tokens with made-up kids make one
    fetch (the others join it, none starts another), and the ones after it fail at once (503)
    during the backoff, with no fetch at all."""
    issuer.mode = "jwks-500"

    async def go():
        v = JWTVerifier(issuer.url, AUD)
        try:
            tokens = [issuer.mint(aud=AUD, kid=f"made-up-{n}") for n in range(40)]
            results = await asyncio.gather(*(v.verify(t) for t in tokens), return_exceptions=True)
            assert all(isinstance(r, AuthUnavailable) for r in results), results
            assert issuer.hits.count("/jwks") == 1
            for n in range(10):
                with pytest.raises(AuthUnavailable) as err:
                    await v.verify(issuer.mint(aud=AUD, kid=f"later-{n}"))
                assert "HTTP 500" in str(err.value) and "next attempt" in str(err.value)
            assert issuer.hits.count("/jwks") == 1
        finally:
            await v.aclose()

    run(go())


def test_cached_keys_are_served_while_the_jwks_fails(issuer):
    """Keys past their ttl go on verifying tokens while the IdP answers 500: one refresh is
    tried, then none during the backoff."""

    async def go():
        v = JWTVerifier(issuer.url, AUD, jwks_ttl=0.05)
        try:
            await v.verify(issuer.mint(aud=AUD, jti="0"))
            await asyncio.sleep(0.1)  # the keys are past their ttl
            issuer.mode = "jwks-500"
            for n in range(1, 11):
                assert (await v.verify(issuer.mint(aud=AUD, jti=str(n)))).subject == "alice"
            assert issuer.hits.count("/jwks") <= 2
        finally:
            await v.aclose()

    run(go())


def test_a_hanging_refresh_does_not_hold_up_tokens_with_cached_keys(issuer):
    """The JWKS refresh hangs (until its 30 s timeout): a token whose key is cached is verified
    at once with the cached key, not queued behind the refresh."""

    async def go():
        v = JWTVerifier(issuer.url, AUD, jwks_ttl=0.05, timeout=30)
        try:
            await v.verify(issuer.mint(aud=AUD, jti="0"))
            await asyncio.sleep(0.1)  # the keys are past their ttl
            issuer.mode = "jwks-hang"
            assert (await asyncio.wait_for(v.verify(issuer.mint(aud=AUD, jti="1")), 10)).subject == "alice"
            async with asyncio.timeout(10):  # the refresh that token started reaches the IdP, and hangs
                while issuer.hits.count("/jwks") < 2:
                    await asyncio.sleep(0.01)
            for n in range(2, 5):
                info = await asyncio.wait_for(v.verify(issuer.mint(aud=AUD, jti=str(n))), 10)
                assert info.subject == "alice"
            assert issuer.hits.count("/jwks") == 2  # the first fetch, and the one refresh in flight
        finally:
            await v.aclose()

    run(go())


def test_a_verified_token_is_remembered(issuer):
    async def go():
        v = JWTVerifier(issuer.url, AUD)
        token = issuer.mint(aud=AUD)
        try:
            first = await v.verify(token)
            issuer.mode = "down"
            assert await v.verify(token) is first
        finally:
            await v.aclose()

    run(go())


def test_http_issuer_only_on_loopback():
    with pytest.raises(ValueError, match="loopback"):
        JWTVerifier("http://idp.example.com", AUD)
    JWTVerifier("http://localhost:9000", AUD)


def test_introspection(issuer):
    issuer.active_tokens["good"] = {
        "active": True,
        "sub": "bob",
        "client_id": "c",
        "scope": "a b",
        "aud": AUD,
        "iss": issuer.url,
        "exp": 4102444800,
    }
    issuer.active_tokens["elsewhere"] = {"active": True, "sub": "bob", "aud": "https://other.example"}

    async def go():
        v = IntrospectionVerifier(
            issuer.base + "/introspect", client_id="rs", client_secret="s", audience=AUD, issuer=issuer.url
        )
        try:
            info = await v.verify("good")
            assert (info.subject, info.scopes) == ("bob", {"a", "b"})
            await v.verify("good")
            assert issuer.hits.count("/introspect") == 1  # cached
            with pytest.raises(InvalidToken, match="not active"):
                await v.verify("unknown")
            with pytest.raises(InvalidToken, match="another audience"):
                await v.verify("elsewhere")
            issuer.mode = "down"
        finally:
            await v.aclose()

    run(go())
