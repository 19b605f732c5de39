"""Interop: the official Python SDK's OAuth client (``ClientCredentialsOAuthProvider``) against
an mcpio resource server and a real authorization server (oidc-provider). The SDK discovers
everything itself from mcpio's 401 challenge and Protected Resource Metadata, gets an
audience-bound token with client_credentials, and lists and calls tools in both its modes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_sdk_oauth_client_credentials(idp, mcp_url, mode):
    import httpx2
    from mcp import Client
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
    from mcp.client.streamable_http import streamable_http_client

    storage = MemoryStorage()

    async def main() -> Any:
        provider = ClientCredentialsOAuthProvider(
            server_url=mcp_url,
            storage=storage,
            client_id="svc",
            client_secret="svc-secret",
            scope="mcp notes:write",
            issuer=idp.issuer,
        )
        async with asyncio.timeout(60), httpx2.AsyncClient(auth=provider, timeout=20) as http:
            async with Client(streamable_http_client(mcp_url, http_client=http), mode=mode) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                who = await client.call_tool("whoami", {})
                added = await client.call_tool("add_note", {"text": "from the SDK"})  # 403, step-up, retry
                again = await client.call_tool("whoami", {})
                return tools, who, added, again

    tools, who, added, again = asyncio.run(main())
    assert sorted(tools) == ["add_note", "whoami"]
    # the SDK asks for the challenge's scope first (spec: "Scope Selection Strategy")
    assert who.structured_content == {"subject": "svc", "client": "svc", "scopes": ["mcp"]}
    assert added.content[0].text.endswith("notes") and not added.is_error
    assert again.structured_content["scopes"] == ["mcp", "notes:write"]
    assert storage.tokens is not None
