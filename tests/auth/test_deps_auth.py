"""The ready-made providers of the caller's token (``mcpio.deps.access_token``,
``token_claims``) and ``ctx.http``'s redaction, behind a real resource server (uvicorn on
127.0.0.1, a real issuer), with the mcpio Client in both eras."""

from __future__ import annotations

from typing import Any

import pytest

from mcpio import Client, Context, Depends, Server, deps
from mcpio.auth import ResourceServer
from tests.server.peer import arun
from tests.support.http import ServerThread
from tests.support.issuer import Issuer

RESOURCE = "https://mcp.test/mcp"


def make_server() -> Server:
    server = Server("deps-auth")

    @server.tool
    def whoami(
        ctx: Context, token: Any = Depends(deps.access_token), claims: dict[str, Any] = Depends(deps.token_claims)
    ) -> dict[str, Any]:
        http = ctx.http
        assert http is not None
        return {
            "subject": token.subject,
            "sub_claim": claims.get("sub"),
            "header": http.headers.get("authorization"),
            "bearer": http.secret_header("authorization").startswith("Bearer "),
        }

    return server


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_the_token_providers_give_the_verified_caller(era: str) -> None:
    with Issuer() as issuer:
        app = make_server().http_app(auth=ResourceServer(resource=RESOURCE, issuer=issuer.url, required_scopes=["mcp"]))
        with ServerThread(app) as srv:
            tok = issuer.mint(aud=RESOURCE, scope="mcp", sub="alice")

            async def go() -> None:
                async with Client(srv.url, era=era, headers={"Authorization": f"Bearer {tok}"}) as c:
                    data = (await c.call_tool("whoami", {})).data
                    assert data == {"subject": "alice", "sub_claim": "alice", "header": "[redacted]", "bearer": True}

            arun(go())
