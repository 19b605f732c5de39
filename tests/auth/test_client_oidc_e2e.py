"""mcpio's own OAuth client against a real, certified authorization server (oidc-provider,
scripts/setup-oidc) protecting a real ``mcpio run -t http … --auth-issuer`` subprocess.

The user agent is scripted: it is the user's browser (httpx on loopback), posting the provider's
login and consent forms and handing the redirect back to the client. Everything is asserted on
the wire: what the provider received (its ``/_test/events``: registrations, interactions,
authorizations and grants with their ``resource``), how often the user agent ran, what the MCP
server answered, and that no token reaches the server's log.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mcpio import Client
from mcpio._auth._discovery import AuthorizationError
from mcpio._auth._oauth_client import OAuth
from mcpio._auth._tokens import FileTokenStore, MemoryTokenStore

REDIRECT = "http://127.0.0.1:33418/callback"  # the callable user agent's; nothing listens there


class ScriptedUser:
    """A ``user_agent=`` callable: logs ``user`` in at the provider, consents, returns the redirect.
    Counts its runs and keeps the prompts each run went through."""

    def __init__(self, idp, user: str = "alice") -> None:
        self.idp = idp
        self.user = user
        self.urls: list[str] = []
        self.prompts: list[list[str]] = []

    async def __call__(self, url: str) -> str:
        self.urls.append(url)
        redirect, prompts = await self.idp.interact(url, REDIRECT, self.user)
        self.prompts.append(prompts)
        return redirect


def oauth(user: ScriptedUser, store) -> OAuth:
    return OAuth(user_agent=user, redirect_uri=REDIRECT, store=store, client_name="mcpio e2e")


async def session(url: str, auth: OAuth, era: str, *calls: tuple[str, dict]) -> tuple[set[str], list[dict]]:
    async with Client(url, era=era, auth=auth, timeout=30) as c:
        tools = {t["name"] for t in await c.list_tools()}
        return tools, [await c.call_tool(name, args) for name, args in calls]


def query(url: str) -> dict[str, str]:
    from urllib.parse import parse_qsl, urlsplit

    return dict(parse_qsl(urlsplit(url).query))


def stored_client_id(store) -> str:
    [key] = [k for k in store.keys() if k.startswith("client ")]
    return store.load(key)["client_id"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_login_with_dcr_pkce_and_resource_then_list_and_call(idp, mcp_url, era):
    user, store = ScriptedUser(idp, user=f"ada-{era}"), MemoryTokenStore()
    auth = oauth(user, store)
    tools, [who] = asyncio.run(session(mcp_url, auth, era, ("whoami", {})))
    client_id = stored_client_id(store)

    assert tools == {"whoami", "add_note"}
    assert who["structuredContent"] == {"subject": f"ada-{era}", "client": client_id, "scopes": ["mcp"]}
    assert len(user.urls) == 1 and user.prompts == [["login", "consent"]] and auth.authorizations == 1
    sent = query(user.urls[0])
    assert sent["resource"] == mcp_url and sent["code_challenge_method"] == "S256"
    assert sent["redirect_uri"] == REDIRECT and sent["scope"].split() == ["mcp", "offline_access"]
    assert sent["prompt"] == "consent"  # OIDC Core §11: without it the provider drops offline_access

    # what the provider received: one registration, one authorization, one code redeemed, all for this resource
    [reg] = idp.events(event="registration", client_id=client_id)
    assert reg["application_type"] == "native" and reg["redirect_uris"] == [REDIRECT]
    assert reg["token_endpoint_auth_method"] == "none"
    [authz] = idp.events(event="authorization", client_id=client_id)
    assert authz["resource"] == [mcp_url] and authz["code_challenge_method"] == "S256"
    assert authz["scope"].split() == ["mcp", "offline_access"]
    grants = idp.events(event="grant", client_id=client_id)
    assert [(g["grant_type"], g["resource"]) for g in grants] == [("authorization_code", [mcp_url])]
    assert not idp.events(event="grant.error", client_id=client_id)
    assert store.load(f"token {mcp_url} {idp.issuer}")["refresh_token"]  # offline_access was granted
