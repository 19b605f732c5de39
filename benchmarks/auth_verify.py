"""What authorization costs a server: ``python benchmarks/auth_verify.py [--quick]``.

1. **JOSE libraries** (the choice of mcpio's ``auth`` extra): µs to verify one RS256 and one
   ES256 access token (signature + iss/aud/exp checks) with the key already parsed, and the
   import time of each library (subprocess, best of 3). Libraries not installed are skipped.
2. **Server CPU per request**, in one process, driving the ASGI apps directly (no sockets, so
   only the server's work is counted; process CPU time / requests):

   - mcpio's Streamable HTTP app, a modern ``tools/call``: without auth; with
     ``auth=ResourceServer`` (JWKS cached, the token seen before: the verified-token memo);
     with the memo off (``cache_size=0``: a full signature check per request);
   - the guard alone in front of an empty ASGI app (the added cost, isolated);
   - the official SDK's bearer middleware (``mcp.server.auth``: Starlette
     ``AuthenticationMiddleware`` + ``BearerAuthBackend`` + ``RequireAuthMiddleware``) in front
     of the same empty app, with a PyJWT verifier (the SDK ships none; this is what its users
     write), if the ``mcp`` package is installed.

Target (issue 13): a cached-JWKS JWT adds at most 50 µs of server CPU per request.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "src"))

RESOURCE = "https://mcp.bench/mcp"


def lib_figures(n: int) -> list[tuple[str, str, float]]:
    import jwt as pyjwt
    from jwt.algorithms import ECAlgorithm, RSAAlgorithm

    from tests.support.issuer import new_keys

    keys = new_keys()
    claims = {
        "iss": "https://as.bench",
        "aud": RESOURCE,
        "sub": "u",
        "exp": int(time.time()) + 3600,
        "iat": int(time.time()),
        "scope": "a b",
    }
    rsa_jwk = json.loads(RSAAlgorithm.to_jwk(keys["rsa"].public_key())) | {"kid": "r", "alg": "RS256"}
    ec_jwk = json.loads(ECAlgorithm.to_jwk(keys["ec"].public_key())) | {"kid": "e", "alg": "ES256"}
    toks = {
        "RS256": pyjwt.encode(claims, keys["rsa"], "RS256", headers={"kid": "r"}),
        "ES256": pyjwt.encode(claims, keys["ec"], "ES256", headers={"kid": "e"}),
    }

    def bench(fn: Any) -> float:
        fn()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t) / n * 1e6

    out = []
    pk = {"RS256": pyjwt.PyJWK(rsa_jwk), "ES256": pyjwt.PyJWK(ec_jwk)}
    for alg, tok in toks.items():
        out.append(
            (
                "pyjwt",
                alg,
                bench(
                    lambda tok=tok, alg=alg: pyjwt.decode(
                        tok, pk[alg].key, algorithms=[alg], audience=RESOURCE, issuer=claims["iss"], leeway=30
                    )
                ),
            )
        )
    try:
        from joserfc import jwt as jjwt
        from joserfc.jwk import KeySet

        ks = KeySet.import_key_set({"keys": [rsa_jwk, ec_jwk]})
        reg = jjwt.JWTClaimsRegistry(
            iss={"essential": True, "value": claims["iss"]}, aud={"essential": True, "value": RESOURCE}, leeway=30
        )
        for alg, tok in toks.items():

            def j(tok: str = tok, alg: str = alg) -> None:
                reg.validate(jjwt.decode(tok, ks, algorithms=[alg]).claims)

            out.append(("joserfc", alg, bench(j)))
    except ImportError:
        pass
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from authlib.jose import JsonWebKey, JsonWebToken
        ajwt = JsonWebToken(["RS256", "ES256"])
        aks = JsonWebKey.import_key_set({"keys": [rsa_jwk, ec_jwk]})
        opts = {"iss": {"essential": True, "value": claims["iss"]}, "aud": {"essential": True, "value": RESOURCE}}
        for alg, tok in toks.items():

            def a(tok: str = tok) -> None:
                ajwt.decode(tok, aks, claims_options=opts).validate(leeway=30)

            out.append(("authlib", alg, bench(a)))
    except ImportError:
        pass
    return out


def import_ms(module: str) -> float | None:
    best = None
    for _ in range(3):
        r = subprocess.run(
            [
                sys.executable,
                "-W",
                "ignore",
                "-c",
                f"import time;t=time.perf_counter();import {module};print(time.perf_counter()-t)",
            ],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            return None
        v = float(r.stdout) * 1000
        best = v if best is None else min(best, v)
    return best


# ------------------------------------------------------------------------ ASGI driving
def request_scope(token: str | None) -> dict[str, Any]:
    headers = [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"tools/call"),
        (b"mcp-name", b"add"),
    ]
    if token:
        headers.append((b"authorization", b"Bearer " + token.encode()))
    return {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "root_path": "",
        "headers": headers,
        "query_string": b"",
        "http_version": "1.1",
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
        "client": ("127.0.0.1", 5000),
    }


BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "add",
            "arguments": {"a": 1, "b": 2},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
).encode()


async def drive(app: Any, scope: dict[str, Any], n: int, body: bytes = BODY) -> tuple[float, int]:
    """(server CPU µs per request, the last status) for ``n`` sequential requests."""
    status = 0

    async def one() -> None:
        sent = False
        done = asyncio.Event()

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await done.wait()
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await app(dict(scope), receive, send)
        done.set()

    for _ in range(50):
        await one()
    t = time.process_time()
    for _ in range(n):
        await one()
    return (time.process_time() - t) / n * 1e6, status


async def empty_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})


def mcpio_server() -> Any:
    from mcpio import Server

    server = Server("bench")

    @server.tool
    async def add(a: int, b: int) -> int:
        return a + b

    return server


async def http_figures(n: int, rounds: int = 9) -> list[tuple[str, float, int]]:
    """Every variant measured in each of ``rounds`` interleaved rounds (fair under a shared
    machine's drifting load); the median round per variant."""
    import statistics

    from mcpio.auth import JWTVerifier, ResourceServer
    from tests.support.issuer import Issuer

    with Issuer() as iss:
        token = iss.mint(aud=RESOURCE, scope="mcp")
        memo = ResourceServer(resource=RESOURCE, issuer=iss.url)
        cold = ResourceServer(resource=RESOURCE, issuer=iss.url, verifier=JWTVerifier(iss.url, RESOURCE, cache_size=0))
        guard = ResourceServer(resource=RESOURCE, issuer=iss.url).guard()

        async def guarded(scope: Any, receive: Any, send: Any) -> None:
            passed = await guard(scope, receive, send)
            if passed is not None:
                await empty_app(scope, *passed)

        variants: list[tuple[str, Any, str | None]] = [
            ("mcpio app, no auth", mcpio_server().http_app(), None),
            ("mcpio app, auth (JWKS cached, token memo)", mcpio_server().http_app(auth=memo), token),
            (
                "mcpio app, auth (JWKS cached, no memo: RS256 check each time)",
                mcpio_server().http_app(auth=cold),
                token,
            ),
            ("empty app", empty_app, token),
            ("mcpio guard + empty app (token memo)", guarded, token),
        ]
        try:
            variants.append(("official SDK bearer middleware (PyJWT verifier) + empty app", await sdk_app(iss), token))
        except ImportError as exc:
            print(f"(official SDK middleware skipped: {exc})", file=sys.stderr)
        results: dict[str, list[float]] = {label: [] for label, _, _ in variants}
        statuses: dict[str, int] = {}
        for _ in range(rounds):
            for label, app, tok in variants:
                us, status = await drive(app, request_scope(tok), max(1, n // rounds))
                results[label].append(us)
                statuses[label] = status
        for _, app, _ in variants:
            if hasattr(app, "aclose"):
                await app.aclose()
        for rs in (memo, cold):
            await rs.verifier.aclose()  # type: ignore[union-attr]
        await guard.verifier.aclose()  # type: ignore[attr-defined]
    return [(label, statistics.median(results[label]), statuses[label]) for label, _, _ in variants]


async def sdk_app(iss: Any) -> Any:
    import jwt as pyjwt
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
    from mcp.server.auth.provider import AccessToken
    from starlette.middleware.authentication import AuthenticationMiddleware

    from mcpio._auth._jwks import JWKS

    jwks = JWKS(issuer=iss.url)
    await jwks.get("rsa-1")  # cached JWKS, as for mcpio

    class PyJWTVerifier:
        async def verify_token(self, tok: str) -> AccessToken | None:
            kid = pyjwt.get_unverified_header(tok).get("kid")
            key = (await jwks.get(kid))[0]
            try:
                c = pyjwt.decode(tok, key.key, algorithms=["RS256", "ES256"], audience=RESOURCE, issuer=iss.url)
            except pyjwt.PyJWTError:
                return None
            return AccessToken(
                token=tok,
                client_id=c.get("client_id", ""),
                scopes=c.get("scope", "").split(),
                expires_at=c["exp"],
                resource=RESOURCE,
                subject=c.get("sub"),
                claims=c,
            )

    return AuthenticationMiddleware(
        RequireAuthMiddleware(empty_app, ["mcp"]), backend=BearerAuthBackend(PyJWTVerifier())
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = parser.parse_args()
    n = 300 if args.quick else 3000
    print("## JOSE libraries: verify one token (key parsed, claims checked)\n")
    print("| library | alg | µs |\n|---|---|---:|")
    for lib, alg, us in lib_figures(n):
        print(f"| {lib} | {alg} | {us:.1f} |")
    print("\n| module | import ms (best of 3) |\n|---|---:|")
    for mod in ("jwt", "joserfc.jwt", "authlib.jose"):
        ms = import_ms(mod)
        print(f"| {mod} | {'not installed' if ms is None else f'{ms:.0f}'} |")
    print("\n## Server CPU per request (in-process ASGI, modern tools/call; median of 9 interleaved rounds)\n")
    print("| app | µs CPU / request | status |\n|---|---:|---:|")
    for label, us, status in asyncio.run(http_figures(n)):
        print(f"| {label} | {us:.1f} | {status} |")


if __name__ == "__main__":
    main()
