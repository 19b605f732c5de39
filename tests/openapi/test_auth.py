"""A generated server behind mcpio's OAuth resource server (a real issuer, tokens verified over
HTTP on 127.0.0.1): the ``credentials=`` hook maps each verified principal to its own API
credentials, and the MCP client's token never reaches the API (spec 2025-11-25, Authorization
§Token Passthrough)."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpio import Client, Server
from mcpio.auth import ResourceServer
from tests.openapi.app import WHOAMI, app
from tests.support.http import ServerThread
from tests.support.issuer import Issuer

RESOURCE = "https://mcp.test/mcp"
API_TOKENS = {"alice": "api-token-of-alice", "bob": "api-token-of-bob"}


def api_credentials(ctx: Any) -> dict[str, str]:
    who = ctx.auth.subject if ctx.auth else None
    return {"Authorization": f"Bearer {API_TOKENS[who]}"} if who in API_TOKENS else {}


def test_each_principal_gets_its_own_api_credentials_and_the_mcp_token_stays_here():
    server = Server.from_fastapi(app, credentials=api_credentials)
    with Issuer() as issuer:
        mcp_app = server.http_app(auth=ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"]))
        with ServerThread(mcp_app) as srv:

            async def whoami(sub: str) -> tuple[dict[str, Any], str]:
                token = issuer.mint(aud=RESOURCE, scope="mcp", sub=sub)
                async with Client(srv.url, headers={"Authorization": f"Bearer {token}"}) as c:
                    return (await c.call_tool("whoami", {}))["structuredContent"], token

            async def go() -> None:
                for sub in ("alice", "bob", "carol"):
                    seen, token = await whoami(sub)
                    assert WHOAMI[-1]["authorization"] == (f"Bearer {API_TOKENS[sub]}" if sub in API_TOKENS else None)
                    assert seen["authorization"] == ("[redacted]" if sub in API_TOKENS else None)  # never to the model
                    assert token not in str(WHOAMI[-1])

            asyncio.run(go())
