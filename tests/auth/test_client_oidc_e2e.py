"""mcpio's own OAuth client against a real, certified authorization server (oidc-provider,
scripts/setup-oidc) protecting a real ``mcpio run -t http … --auth-issuer`` subprocess.

The user agent is scripted: it is the user's browser (httpx on loopback), posting the provider's
login and consent forms and handing the redirect back to the client. Everything is asserted on
the wire: what the provider received (its ``/_test/events``: registrations, interactions,
authorizations and grants with their ``resource``), how often the user agent ran, what the MCP
server answered, and that no token reaches the server's log or wire trace.

Two interop bugs this found in the client are fixed in ``mcpio._auth`` (regression tests in
tests/client/test_oauth_client.py): ``offline_access`` is asked with ``prompt=consent`` (OIDC
Core §11; without it the provider drops the scope and issues no refresh token), and a
dynamically registered client whose registered ``scope`` does not cover a step-up registers
again for the union (the provider refuses other scopes with invalid_scope).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import httpx
import pytest

from mcpio import Client, MCPError
from mcpio.auth import FileTokenStore, MemoryTokenStore, OAuth

REDIRECT = "http://127.0.0.1:33418/callback"  # the callable user agent's; nothing listens there


class ScriptedUser:
    """A ``user_agent=`` callable: logs ``user`` in at the provider, consents, returns the redirect.
    Counts its runs and keeps the prompts each run went through."""

    def __init__(self, idp, user: str = "alice") -> None:
        self.idp = idp
        self.user = user
        self.urls: list[str] = []
        self.prompts: list[list[str]] = []
        self.cookies = httpx.Cookies()  # the browser's: the provider's login session outlives a run

    async def __call__(self, url: str) -> str:
        self.urls.append(url)
        redirect, prompts = await self.idp.interact(url, REDIRECT, self.user, self.cookies)
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
    keys = store.keys()
    [key] = [k for k in keys if k.startswith("client ")]
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


def test_step_up_for_a_scoped_tool_asks_the_union_with_a_new_consent(idp, mcp_url):
    user, store = ScriptedUser(idp, user="grace"), MemoryTokenStore()
    auth = oauth(user, store)
    _, [who, added, who_after] = asyncio.run(
        session(mcp_url, auth, "modern", ("whoami", {}), ("add_note", {"text": "stepped up"}), ("whoami", {}))
    )
    client_id = stored_client_id(store)

    assert who["structuredContent"]["scopes"] == ["mcp"]
    assert added["content"][0]["text"].endswith("notes") and not added.get("isError")
    assert who_after["structuredContent"] == {"subject": "grace", "client": client_id, "scopes": ["mcp", "notes:write"]}
    # two user-agent runs: the login, then the step-up (the user is known: consent only)
    assert len(user.urls) == 2 and user.prompts == [["login", "consent"], ["consent"]] and auth.authorizations == 2
    first, second = query(user.urls[0]), query(user.urls[1])
    assert second["scope"].split() == ["mcp", "offline_access", "notes:write"]  # the union, not just the challenge
    assert first["resource"] == second["resource"] == mcp_url
    # the first registration allowed "mcp offline_access" only (the provider refuses any other
    # scope with invalid_scope): the client registered again for the union before the step-up
    assert second["client_id"] == client_id != first["client_id"]
    regs = [idp.events(event="registration", client_id=query(u)["client_id"]) for u in user.urls]
    assert [r["registered_scope"] for [r] in regs] == ["mcp offline_access", "mcp offline_access notes:write"]
    authzs = [idp.events(event="authorization", client_id=query(u)["client_id"]) for u in user.urls]
    assert [a["scope"].split() for [a] in authzs] == [
        ["mcp", "offline_access"],
        ["mcp", "offline_access", "notes:write"],
    ]
    grants = [idp.events(event="grant", client_id=query(u)["client_id"]) for u in user.urls]
    assert [(g["grant_type"], g["resource"]) for [g] in grants] == [("authorization_code", [mcp_url])] * 2
    assert not any(idp.events(event="authorization.error", client_id=query(u)["client_id"]) for u in user.urls)


def test_tokens_survive_a_new_client_and_an_expired_one_is_refreshed_with_the_same_resource(idp, mcp_url, tmp_path):
    path = tmp_path / "tokens.json"
    user = ScriptedUser(idp, user="lin")
    key = f"token {mcp_url} {idp.issuer}"
    asyncio.run(session(mcp_url, oauth(user, FileTokenStore(path)), "legacy", ("whoami", {})))
    client_id = stored_client_id(FileTokenStore(path))
    first = FileTokenStore(path).load(key)
    assert len(user.urls) == 1 and first["refresh_token"]

    # a new process: a new OAuth on the same file, the other era: no login, no token request
    again = oauth(user, FileTokenStore(path))
    _, [who] = asyncio.run(session(mcp_url, again, "modern", ("whoami", {})))
    assert who["structuredContent"]["subject"] == "lin" and again.authorizations == 0 and len(user.urls) == 1
    assert len(idp.events(event="grant", client_id=client_id)) == 1

    # the stored token has expired: the next client refreshes it before its first request
    FileTokenStore(path).save(key, {**first, "expires_at": time.time() - 5})
    later = oauth(user, FileTokenStore(path))
    _, [who] = asyncio.run(session(mcp_url, later, "modern", ("whoami", {})))
    assert who["structuredContent"]["subject"] == "lin" and later.authorizations == 0 and len(user.urls) == 1
    grants = idp.events(event="grant", client_id=client_id)
    assert [(g["grant_type"], g["resource"]) for g in grants] == [
        ("authorization_code", [mcp_url]),
        ("refresh_token", [mcp_url]),
    ]
    refreshed = FileTokenStore(path).load(key)
    assert refreshed["access_token"] != first["access_token"] and refreshed["expires_at"] > time.time()


def test_a_wrong_audience_token_is_refused_and_the_client_recovers_by_refreshing(idp, protected, tmp_path):
    mcp_url, server_log, server_trace = protected
    path = tmp_path / "tokens.json"
    user = ScriptedUser(idp, user="kim")
    key = f"token {mcp_url} {idp.issuer}"
    asyncio.run(session(mcp_url, oauth(user, FileTokenStore(path)), "modern", ("whoami", {})))
    client_id = stored_client_id(FileTokenStore(path))
    good = FileTokenStore(path).load(key)

    # a real token from the same provider, for another resource: the server refuses it (its
    # audience is not this server), whoever sends it
    elsewhere = idp.client_credentials("http://127.0.0.1:1/other", "mcp")

    async def with_header():
        async with Client(mcp_url, headers={"Authorization": f"Bearer {elsewhere}"}, timeout=30) as c:
            await c.list_tools()

    with pytest.raises(MCPError) as refused:
        asyncio.run(with_header())
    assert "401" in str(refused.value) and "another audience" in str(refused.value)
    assert elsewhere not in str(refused.value)

    # the same token in the store (still "valid" by its expiry): the client meets the 401, keeps
    # the issuer and resource it knows, and refreshes; no new login
    FileTokenStore(path).save(key, {**good, "access_token": elsewhere})
    auth = oauth(user, FileTokenStore(path))
    _, [who] = asyncio.run(session(mcp_url, auth, "legacy", ("whoami", {})))
    assert who["structuredContent"]["subject"] == "kim" and auth.authorizations == 0 and len(user.urls) == 1
    grants = idp.events(event="grant", client_id=client_id)
    assert [(g["grant_type"], g["resource"]) for g in grants] == [
        ("authorization_code", [mcp_url]),
        ("refresh_token", [mcp_url]),
    ]
    now = FileTokenStore(path).load(key)
    assert now["access_token"] not in (elsewhere, good["access_token"])

    # no token or refresh token ever reaches the server's log (DEBUG level) or its wire trace
    logged, traced = server_log.read_text(), server_trace.read_text()
    assert '"whoami"' in traced  # the trace saw these calls
    for secret in (elsewhere, good["access_token"], good["refresh_token"], now["access_token"], now["refresh_token"]):
        assert secret not in logged + traced and secret.split(".")[-1] not in logged + traced


def test_cli_login_no_browser_then_a_client_and_logout_use_the_same_store(idp, mcp_url, tmp_path):
    """``mcpio login URL --no-browser`` prints the URL and waits on its loopback callback; the
    scripted user opens the URL, logs in, and their browser lands on the callback. The token it
    stores serves a library Client (no login) until ``mcpio logout``; a second login reuses the
    registration."""
    path = tmp_path / "tokens.json"

    def explain() -> str:  # mcpio auth URL: every discovery step, never a token
        out = subprocess.run(
            [sys.executable, "-m", "mcpio", "auth", mcp_url, "--store", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout + out.stderr

    before = explain()
    assert f"authorization servers {idp.issuer}" in before and "PKCE: S256 supported" in before
    assert "dynamic client registration" in before and "no token for this URL" in before

    async def login() -> tuple[int, str, str, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mcpio",
            "login",
            mcp_url,
            "--no-browser",
            "--store",
            str(path),
            "--timeout",
            "60",
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            said = b""
            while b"/auth?" not in said:  # "Open this URL in a browser to log in:\n  URL"
                line = await asyncio.wait_for(proc.stderr.readline(), 30)
                assert line, said.decode()
                said += line
            url = said.decode().split()[-1]
            redirect_uri = query(url)["redirect_uri"]
            redirect, _ = await idp.interact(url, redirect_uri, "cli-user")
            async with httpx.AsyncClient(timeout=10) as browser:  # the browser follows the redirect
                landed = await browser.get(redirect)
            out, err = await asyncio.wait_for(proc.communicate(), 60)
            return proc.returncode, url, landed.text, (said + err).decode() + out.decode()
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()

    code, url, landed, output = asyncio.run(login())
    assert code == 0, output
    assert "Authorization received by mcpio" in landed and f"logged in: {mcp_url}" in output
    sent = query(url)
    assert sent["resource"] == mcp_url and sent["redirect_uri"].startswith("http://127.0.0.1:")
    token = FileTokenStore(path).load(f"token {mcp_url} {idp.issuer}")
    assert token["access_token"] not in output and token["refresh_token"] not in output
    after = explain()
    assert f"stored: issuer {idp.issuer}, resource {mcp_url}, scopes: mcp" in after and "a refresh token" in after
    assert token["access_token"] not in after and token["refresh_token"] not in after
    [reg] = idp.events(event="registration", client_id=sent["client_id"])
    assert reg["application_type"] == "native" and reg["redirect_uris"] == [sent["redirect_uri"]]

    user = ScriptedUser(idp)  # must not be needed
    auth = oauth(user, FileTokenStore(path))
    _, [who] = asyncio.run(session(mcp_url, auth, "modern", ("whoami", {})))
    assert who["structuredContent"]["subject"] == "cli-user" and user.urls == [] and auth.authorizations == 0

    out = subprocess.run(
        [sys.executable, "-m", "mcpio", "logout", mcp_url, "--store", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "forgot 1 token(s)" in out.stdout
    left = FileTokenStore(path).keys()
    assert left and not [k for k in left if k.startswith("token ")]  # the registration stays

    # logging in again: the listener takes the registered redirect URI's port, so the
    # registration serves again (no new client at the provider)
    code, url, landed, output = asyncio.run(login())
    assert code == 0 and f"logged in: {mcp_url}" in output, output
    again = query(url)
    assert (again["client_id"], again["redirect_uri"]) == (sent["client_id"], sent["redirect_uri"])
    assert len(idp.events(event="registration", client_id=sent["client_id"])) == 1
    assert len(idp.events(event="grant", client_id=sent["client_id"], grant_type="authorization_code")) == 2


def test_a_pre_registered_public_client_registers_nothing(idp, mcp_url):
    redirect = idp.REDIRECT  # registered for the provider's client "app"
    user = ScriptedUser(idp, user="noor")

    async def agent(url: str) -> str:
        user.urls.append(url)
        return (await idp.interact(url, redirect, user.user, user.cookies))[0]

    auth = OAuth(client_id="app", user_agent=agent, redirect_uri=redirect, store=MemoryTokenStore())
    _, [who] = asyncio.run(session(mcp_url, auth, "legacy", ("whoami", {})))
    assert who["structuredContent"] == {"subject": "noor", "client": "app", "scopes": ["mcp"]}
    assert len(user.urls) == 1 and query(user.urls[0])["client_id"] == "app"
    kept = auth.store.keys()
    assert [k.split()[0] for k in kept] == ["token"]  # no registration kept: none was made
    assert not idp.events(event="registration", client_id="app")


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_client_credentials_grant_with_step_up(idp, mcp_url, era):
    """A machine: the client_credentials grant (client_secret_basic) for the challenged scope,
    then for the union when the scoped tool answers 403; no user agent is involved."""
    auth = OAuth(
        grant="client_credentials",
        client_id="svc",
        client_secret="svc-secret",
        issuer=idp.issuer,
        store=MemoryTokenStore(),
    )
    before = len(idp.events(event="grant", client_id="svc"))
    _, [who, added] = asyncio.run(session(mcp_url, auth, era, ("whoami", {}), ("add_note", {"text": "by svc"})))
    assert who["structuredContent"] == {"subject": "svc", "client": "svc", "scopes": ["mcp"]}
    assert added["content"][0]["text"].endswith("notes") and auth.authorizations == 2
    grants = idp.events(event="grant", client_id="svc")[before:]
    assert [(g["grant_type"], g["scope"], g["resource"]) for g in grants] == [
        ("client_credentials", "mcp", [mcp_url]),
        ("client_credentials", "mcp notes:write", [mcp_url]),
    ]
