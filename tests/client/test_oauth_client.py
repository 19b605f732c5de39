"""mcpio's OAuth client on the wire: ``Client(url, auth=OAuth(...))`` against a real (small)
authorization server and a protected mcpio server, both served by uvicorn on 127.0.0.1
(tests/support/oauth_as.py). The conformance suite's auth scenarios
(tests/conformance/test_client_conformance.py) are the main proof; these cover what the suite
does not: tokens that survive a restart, refresh (before expiry and on 401) carrying the same
``resource``, step-up with the union of scopes, the loopback browser listener, the token file's
safety, and the bad inputs (each must fail with a message that says what was wrong and holds
no secret)."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from mcpio import Client, MCPError, Server
from mcpio._auth._browser import LoopbackBrowser, fetch_redirect
from mcpio._auth._discovery import AuthorizationError, discover, parse_www_authenticate
from mcpio._auth._oauth_client import OAuth
from mcpio._auth._tokens import FileTokenStore, MemoryTokenStore, TokenStoreError
from tests.client.support import arun
from tests.support.http import ServerThread
from tests.support.oauth_as import TestAS, protect

SECRET = "s3cret-client-secret-value"


def _server() -> Server:
    server = Server("protected")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    return server


@contextlib.contextmanager
def protected(**cfg: Any) -> Iterator[tuple[TestAS, str]]:
    """A TestAS (knobs ``cfg``) and a protected mcpio server; yields (AS, MCP URL)."""
    auth_server = TestAS(**cfg)
    with ServerThread(auth_server, path="") as as_srv:
        auth_server.issuer = as_srv.base
        with ServerThread(protect(_server().http_app(), auth_server)) as mcp:
            yield auth_server, mcp.url


async def _use(url: str, auth: OAuth, era: str = "legacy") -> Any:
    async with Client(url, auth=auth, era=era, timeout=20) as c:
        await c.list_tools()
        return await c.call_tool("add", {"a": 2, "b": 3})


def _no_secrets(text: str, auth_server: TestAS) -> None:
    for secret in [SECRET, *auth_server.tokens, *auth_server.refresh_tokens, *auth_server.codes]:
        assert secret not in text


# ---------------------------------------------------------------------- the good paths
@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_login_step_up_and_tokens_survive_a_restart(tmp_path, era):
    store = tmp_path / "tokens.json"
    with protected() as (auth_server, url):
        auth = OAuth(user_agent=fetch_redirect, store=str(store), client_name="test-client")
        result = arun(_use(url, auth, era))
        assert "5" in str(result)
        # 401 -> authorize for the challenged "read"; 403 on tools/call -> step-up with the union
        authorizes = [e for e in auth_server.log if e["path"] == "/authorize"]
        assert [e.get("scope") for e in authorizes] == ["read", "read write"]
        assert {e["resource"] for e in authorizes} == {url}
        assert all(e["resource"] == url for e in auth_server.log if e["path"] == "/token")
        assert auth_server.count("/register") == 1
        assert list(auth_server.clients.values())[0]["application_type"] == "native"
        # the file is private, holds one token entry for (resource, issuer) and the registration
        assert stat.S_IMODE(store.stat().st_mode) == 0o600
        keys = FileTokenStore(store).keys()
        assert sorted(k.split()[0] for k in keys) == ["client", "token"]
        assert f"token {url} {auth_server.issuer}" in keys
        # a new process (a new OAuth object on the same file): no new login, no new registration
        again = OAuth(user_agent=fetch_redirect, store=str(store))
        arun(_use(url, again, era))
        assert again.authorizations == 0
        assert auth_server.count("/authorize") == 2 and auth_server.count("/register") == 1


def test_a_proxy_forwards_calls_with_its_token_and_refreshes_it_on_a_401():
    """A proxy logged in upstream (``Server.proxy(url, auth=OAuth(...))``) relays calls on kept-alive
    connections, each POST carrying the bearer token (none refused); revoked upstream, the next
    call's 401 refreshes it (no new login) and that call is answered."""
    auth_server = TestAS()
    unauthorized: list[bool] = []  # per MCP POST: refused for its token?

    def counting(app: Any) -> Any:
        async def asgi(scope: Any, receive: Any, send: Any) -> None:
            async def sent(message: Any) -> None:
                if message["type"] == "http.response.start" and scope.get("method") == "POST":
                    unauthorized.append(message["status"] == 401)
                await send(message)

            await app(scope, receive, sent)

        return asgi

    with ServerThread(auth_server, path="") as as_srv:
        auth_server.issuer = as_srv.base
        with ServerThread(counting(protect(_server().http_app(), auth_server))) as mcp:

            async def go() -> list[str]:
                auth = OAuth(user_agent=fetch_redirect, store="memory", scopes="read write")
                proxy = Server.proxy(mcp.url, auth=auth, era="legacy", timeout=20)
                texts = []
                async with Client(proxy) as c:
                    for a in range(4):
                        texts.append((await c.call_tool("add", {"a": a, "b": 1})).content[0].text)
                    del unauthorized[:]
                    for a in range(4):  # logged in: relayed with the token, none refused
                        texts.append((await c.call_tool("add", {"a": a, "b": 2})).content[0].text)
                    assert unauthorized == [False] * 4, unauthorized
                    auth_server.tokens.clear()  # revoked: the next call is refused with a 401, once
                    texts.append((await c.call_tool("add", {"a": 9, "b": 1})).content[0].text)
                    assert unauthorized[4:] == [True, False], unauthorized
                return texts

            assert arun(go()) == ["1", "2", "3", "4", "2", "3", "4", "5", "10"]
    assert auth_server.count("/authorize") == 1
    assert any(e.get("grant_type") == "refresh_token" for e in auth_server.log)


def test_step_up_beyond_a_registered_scope_registers_again_and_offline_access_asks_consent():
    """Found against oidc-provider (tests/auth/test_client_oidc_e2e.py): an authorization server
    that bounds a dynamically registered client by its registered ``scope`` refuses a step-up
    with invalid_scope, so the client registers again for the union first; and OpenID providers
    drop ``offline_access`` (no refresh token) unless the request carries prompt=consent."""
    with protected(dcr_scope=True, scopes_supported=["read", "write", "offline_access"]) as (auth_server, url):
        auth = OAuth(user_agent=fetch_redirect, store="memory")
        assert "5" in str(arun(_use(url, auth)))
        authorizes = [e for e in auth_server.log if e["path"] == "/authorize"]
        assert [e.get("scope") for e in authorizes] == ["read offline_access", "read offline_access write"]
        assert [e.get("prompt") for e in authorizes] == ["consent", "consent"]
        assert auth_server.count("/register") == 2 and authorizes[0]["client_id"] != authorizes[1]["client_id"]
        assert [c["scope"] for c in auth_server.clients.values()] == [
            "read offline_access",
            "read offline_access write",
        ]
        assert auth.token["refresh_token"] and auth.authorizations == 2
        arun(_use(url, auth))  # the new registration serves from now on: nothing more
        assert auth_server.count("/register") == 2 and auth_server.count("/authorize") == 2
    with protected() as (auth_server, url):  # no offline_access listed: no prompt imposed on the user
        arun(_use(url, OAuth(user_agent=fetch_redirect, store="memory")))
        assert all("prompt" not in e for e in auth_server.log if e["path"] == "/authorize")


def test_refresh_before_expiry_and_on_401_keeps_the_resource(tmp_path):
    with protected() as (auth_server, url):
        auth = OAuth(user_agent=fetch_redirect, store="memory", scopes="read write")
        arun(_use(url, auth))
        assert auth_server.count("/authorize") == 1
        # refresh_margin longer than the token's life: the next request refreshes first
        auth.refresh_margin = 7200
        arun(_use(url, auth))
        auth.refresh_margin = 60
        refreshes = [e for e in auth_server.log if e.get("grant_type") == "refresh_token"]
        assert refreshes and all(e["resource"] == url for e in refreshes)
        # the server stops taking the token (revoked): 401 -> refresh, not a new login
        auth_server.tokens.clear()
        before = len(refreshes)
        arun(_use(url, auth))
        assert sum(1 for e in auth_server.log if e.get("grant_type") == "refresh_token") == before + 1
        assert auth_server.count("/authorize") == 1


def test_pre_registered_client_credentials_grant():
    clients = {"machine": {"redirect_uris": [], "secret": SECRET}}
    with protected(clients=clients) as (auth_server, url):
        auth = OAuth(
            grant="client_credentials",
            client_id="machine",
            client_secret=SECRET,
            issuer=auth_server.issuer,
            store="memory",
            scopes=["read", "write"],
        )
        assert "5" in str(arun(_use(url, auth)))
        assert auth_server.count("/authorize") == 0 and auth_server.count("/register") == 0
        assert SECRET not in repr(auth)


def test_the_loopback_browser_gets_the_redirect():
    """The default user agent: a one-shot listener on 127.0.0.1; the 'browser' here is httpx
    following the AS's redirect to it. A request with another state gets a 400 and is ignored."""
    stray: list[int] = []

    def browser(url: str) -> bool:
        redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        stray.append(httpx.get(redirect + "?code=x&state=not-the-one").status_code)
        httpx.get(url, follow_redirects=True)
        return True

    with protected() as (auth_server, url):
        agent = LoopbackBrowser(open_browser=browser, announce=lambda text: None)
        auth = OAuth(user_agent=agent, store="memory")
        assert "5" in str(arun(_use(url, auth)))
        assert stray == [400, 400]  # one per authorization (login, then the step-up)
        redirect = auth_server.log[-1].get("redirect_uri") or next(
            e["redirect_uri"] for e in auth_server.log if e["path"] == "/authorize"
        )
        assert redirect.startswith("http://127.0.0.1:") and redirect.endswith("/callback")
        # the step-up's listener took the port of the registered redirect URI: one registration
        redirects = [e["redirect_uri"] for e in auth_server.log if e["path"] == "/authorize"]
        assert len(redirects) == 2 and redirects[0] == redirects[1] and auth_server.count("/register") == 1


# ---------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("cfg", "expected"),
    [
        ({"iss": "wrong"}, "RFC 9207"),
        ({"iss": "omit"}, "advertises the iss parameter but its response has none"),
        ({"state": "wrong"}, "state is not the one sent"),
        ({"state": "omit"}, "state is missing"),
        ({"metadata": "html"}, "not JSON (text/html"),
        ({"metadata": "huge"}, "over 262144 bytes"),
        ({"dcr": "refuse"}, "registration is closed"),
        ({"dcr": False}, "offers no dynamic client registration"),
        ({"pkce": ["plain"]}, "does not list S256"),
        ({"pkce": None}, "does not list S256"),
    ],
)
def test_bad_authorization_servers_fail_with_a_clear_message(cfg, expected):
    with protected(**cfg) as (auth_server, url):
        auth = OAuth(user_agent=fetch_redirect, store="memory")
        with pytest.raises(MCPError) as info:
            arun(_use(url, auth))
        message = str(info.value)
        assert expected in message, message
        _no_secrets(message, auth_server)
        assert not any(e.get("grant_type") == "authorization_code" for e in auth_server.log)  # no code redeemed


def test_metadata_that_is_down_or_never_answers():
    with protected() as (auth_server, url):
        auth_server.issuer = "http://127.0.0.1:9"  # the PRM now names an authorization server that is down
        with pytest.raises(
            MCPError, match=r"no usable authorization server metadata for http://127.0.0.1:9.*ConnectError"
        ):
            arun(_use(url, OAuth(user_agent=fetch_redirect, store="memory")))
    with protected(metadata="slow") as (auth_server, url):
        with pytest.raises(MCPError, match="authorization server metadata.*ReadTimeout"):
            arun(_use(url, OAuth(user_agent=fetch_redirect, store="memory", timeout=0.5)))


def test_a_prm_for_another_resource_is_refused():
    """RFC 9728 §3.3: the PRM names http://host/mcp; a client talking to http://host/other refuses it."""
    with protected() as (auth_server, url):
        prm = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")

        async def go() -> None:
            async with httpx.AsyncClient() as http:
                await discover(http, url.replace("/mcp", "/other"), {"resource_metadata": prm})

        with pytest.raises(AuthorizationError, match="published protected resource metadata for another resource"):
            arun(go())
        assert auth_server.count("/authorize") == 0


def test_a_user_agent_returning_an_error_or_no_code():
    with protected() as (auth_server, url):

        async def denied(url: str) -> str:
            redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
            state = parse_qs(urlsplit(url).query)["state"][0]
            return (
                f"{redirect}?error=access_denied&error_description=user+said+no&state={state}&iss={auth_server.issuer}"
            )

        with pytest.raises(MCPError, match="refused the authorization: access_denied: user said no"):
            arun(_use(url, OAuth(user_agent=denied, store="memory")))


def test_a_redirect_to_another_uri_is_refused():
    with protected() as (auth_server, url):

        async def elsewhere(url: str) -> str:
            location = await fetch_redirect(url)
            return location.replace("/callback", "/other")

        with pytest.raises(MCPError, match="not the redirect URI"):
            arun(_use(url, OAuth(user_agent=elsewhere, store="memory")))
        assert not any(e.get("grant_type") == "authorization_code" for e in auth_server.log)


def test_plain_http_only_on_loopback_and_cimd_urls_are_https():
    from mcpio._auth._discovery import require_secure

    require_secure("https://login.example.com/token", "x")
    require_secure("http://127.0.0.1:8080/token", "x")
    require_secure("http://localhost/token", "x")
    with pytest.raises(AuthorizationError, match="is not https"):
        require_secure("http://login.example.com/token", "the token endpoint")
    with pytest.raises(ValueError, match="https URL with a path"):
        OAuth(client_metadata_url="http://app.example.com/client.json", store="memory")


def test_www_authenticate_parsing_is_lenient():
    assert parse_www_authenticate('Basic realm="x", Bearer error="insufficient_scope", scope="a b"') == {
        "error": "insufficient_scope",
        "scope": "a b",
    }
    assert parse_www_authenticate("Bearer resource_metadata=http://h/x,scope=s") == {
        "resource_metadata": "http://h/x",
        "scope": "s",
    }
    assert parse_www_authenticate("Basic realm=x") == {} and parse_www_authenticate(None) == {}


# ---------------------------------------------------------------------- the token store
def test_the_token_file_refuses_symlinks_and_loose_permissions(tmp_path):
    real = tmp_path / "real.json"
    store = FileTokenStore(real)
    store.save("k", {"v": 1})
    assert stat.S_IMODE(real.stat().st_mode) == 0o600 and store.load("k") == {"v": 1}
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with pytest.raises(TokenStoreError, match="symlink"):
        FileTokenStore(link).load("k")
    with pytest.raises(TokenStoreError, match="symlink"):
        FileTokenStore(link).save("k", {})
    os.chmod(real, 0o644)
    with pytest.raises(TokenStoreError, match="chmod 600"):
        store.load("k")
    memory = MemoryTokenStore()
    memory.save("a", {"x": [1]})
    assert memory.load("a") == {"x": [1]} and memory.keys() == ["a"]


def test_an_unusable_token_file_fails_the_request_instead_of_hanging(tmp_path):
    link = tmp_path / "tokens.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    with protected() as (auth_server, url):
        with pytest.raises(MCPError, match="is a symlink; refusing"):
            arun(_use(url, OAuth(user_agent=fetch_redirect, store=str(link))))

        def broken(url: str) -> str:
            raise RuntimeError("the app's login window crashed")

        with pytest.raises(MCPError, match="RuntimeError: the app's login window crashed"):
            arun(_use(url, OAuth(user_agent=broken, store="memory")))


def test_host_config_entries_carry_oauth_settings(tmp_path, monkeypatch):
    from mcpio._host._config import ConfigError, load_config

    monkeypatch.setenv("TEST_OAUTH_SECRET", SECRET)
    config = tmp_path / "mcp.json"
    config.write_text(
        '{"mcpServers": {'
        '"remote": {"url": "https://example.com/mcp", "oauth": {"clientId": "pre", "issuer": "https://as.example.com", '
        '"clientSecret": "${env:TEST_OAUTH_SECRET}", "scopes": ["read", "write"], "callbackPort": 8765}},'
        '"unbound": {"url": "https://example.com/u", "oauth": {"clientId": "pre", "clientSecret": "s"}},'
        '"plain": {"url": "https://example.com/other"},'
        '"own": {"url": "https://example.com/x", "headers": {"Authorization": "Bearer abc"}}}}'
    )
    specs = load_config(config)
    auth = specs["remote"].client()._spawn["auth"]
    assert isinstance(auth, OAuth)
    assert (auth.client_id, auth.client_secret, auth.issuer, auth.scopes, auth.user_agent.port) == (
        "pre",
        SECRET,
        "https://as.example.com",
        ["read", "write"],
        8765,
    )
    with pytest.raises(ConfigError, match="oauth.clientSecret needs oauth.issuer"):  # a secret is bound to its issuer
        specs["unbound"].client()
    assert SECRET not in repr(auth)
    assert isinstance(specs["plain"].client()._spawn["auth"], OAuth)  # logs in when the server asks
    assert specs["own"].client()._spawn["auth"] is None  # the entry sends its own Authorization


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_against_the_official_sdk_resource_server(era):
    """The official Python SDK (``mcp``) as the resource server: its PRM, its 401 challenge and
    its bearer check (a TokenVerifier that asks the test AS), mcpio's client logging in."""
    import time

    from mcp.server.auth.provider import AccessToken
    from mcp.server.auth.settings import AuthSettings
    from mcp.server.mcpserver import MCPServer

    auth_server = TestAS()
    with ServerThread(auth_server, path="") as as_srv:
        auth_server.issuer = as_srv.base
        holder: dict[str, Any] = {}

        async def app(scope: Any, receive: Any, send: Any) -> None:  # built once the port is known
            await holder["app"](scope, receive, send)

        srv = ServerThread(app)

        class Verifier:
            async def verify_token(self, token: str) -> AccessToken | None:
                t = auth_server.tokens.get(token)
                if t is None or t["exp"] < time.time():
                    return None
                return AccessToken(
                    token=token,
                    client_id="c",
                    scopes=t["scope"].split(),
                    expires_at=int(t["exp"]),
                    resource=t["resource"],
                )

        sdk = MCPServer(
            "sdk-protected",
            token_verifier=Verifier(),
            auth=AuthSettings(
                issuer_url=auth_server.issuer,
                resource_server_url=srv.url,
                required_scopes=["read"],
                validate_token_resource=True,
            ),
        )

        @sdk.tool()
        def add(a: int, b: int) -> int:
            return a + b

        holder["app"] = sdk.streamable_http_app()
        with srv:
            assert "5" in str(arun(_use(srv.url, OAuth(user_agent=fetch_redirect, store="memory"), era)))
        authorize = next(e for e in auth_server.log if e["path"] == "/authorize")
        assert authorize["scope"] == "read" and authorize["resource"] == srv.url


def test_no_token_secret_or_code_in_logs_or_traces(tmp_path, caplog):
    import logging

    caplog.set_level(logging.DEBUG)
    trace = tmp_path / "wire.log"
    with protected(clients={"pre": {"redirect_uris": ["http://127.0.0.1:33418/callback"], "secret": SECRET}}) as (
        auth_server,
        url,
    ):
        auth = OAuth(
            user_agent=fetch_redirect,
            store=str(tmp_path / "t.json"),
            client_id="pre",
            client_secret=SECRET,
            issuer=auth_server.issuer,
        )

        async def go() -> None:
            async with Client(url, auth=auth, era="legacy", timeout=20, trace=trace) as c:
                await c.call_tool("add", {"a": 1, "b": 2})

        arun(go())
        assert auth_server.tokens and auth_server.count("/authorize") == 2  # login, then step-up
        # mcpio's own loggers, httpx's request lines, the trace (httpcore's DEBUG traces dump raw
        # response headers, the authorization redirect included: a third party's debug output)
        logged = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith(("mcpio", "httpx")))
        seen = logged + trace.read_text() + repr(auth)
        secrets = [SECRET, *auth_server.tokens, *auth_server.refresh_tokens]
        secrets += [e["code"] for e in auth_server.log if e.get("grant_type") == "authorization_code"]
        secrets += [e["code_verifier"] for e in auth_server.log if e.get("code_verifier")]
        assert len(secrets) > 5 and not [s for s in secrets if s in seen]


def test_per_issuer_credentials_are_used_and_nothing_registers():
    redirect = "http://127.0.0.1:33418/callback"
    with protected(clients={"known": {"redirect_uris": [redirect], "secret": SECRET}}, dcr=False) as (auth_server, url):
        auth = OAuth(
            user_agent=fetch_redirect,
            redirect_uri=redirect,
            store="memory",
            clients={
                "https://elsewhere.example": {"client_id": "other"},
                auth_server.issuer: {"client_id": "known", "client_secret": SECRET},
            },
        )
        assert "5" in str(arun(_use(url, auth)))
        assert {e["client_id"] for e in auth_server.log if e["path"] == "/authorize"} == {"known"}
        assert auth_server.count("/register") == 0


def test_a_session_sends_its_held_token_as_the_flow_does_and_answers_a_revocation_once():
    """Within one session (the ``mcpio run URL`` bridge's case) every request after the login
    carries the held token with the head the full flow gives it (the lean client's per-request
    path skips the flow: ``OAuth.ready_headers``), and a 401 mid-session (the token revoked) costs
    one refresh and one resend of that request: nothing is sent twice."""
    seen: list[tuple[list[str], str, int]] = []  # (header names, authorization, status) per POST
    auth_server = TestAS()
    with ServerThread(auth_server, path="") as as_srv:
        auth_server.issuer = as_srv.base
        inner = protect(_server().http_app(), auth_server)

        async def recording(sc: Any, receive: Any, send: Any) -> None:
            if sc["type"] != "http" or sc["method"] != "POST":
                return await inner(sc, receive, send)
            names = [k.decode().lower() for k, _ in sc["headers"]]
            authorization = dict(sc["headers"]).get(b"authorization", b"").decode()

            async def tap(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    seen.append((names, authorization, message["status"]))
                await send(message)

            await inner(sc, receive, tap)

        with ServerThread(recording) as mcp:

            async def session() -> list[str]:
                auth = OAuth(user_agent=fetch_redirect, store="memory", scopes="read write")
                async with Client(mcp.url, auth=auth, era="legacy", timeout=20) as c:
                    out = [str(await c.call_tool("add", {"a": i, "b": 1})) for i in range(3)]
                    auth_server.tokens.clear()  # revoked: the server refuses the held token
                    out += [str(await c.call_tool("add", {"a": 2, "b": 3})) for _ in range(2)]
                return out

            results = arun(session())
    assert ["1" in results[0], "2" in results[1], "3" in results[2]] == [True] * 3
    assert all("5" in r for r in results[3:])
    statuses = [status for _, _, status in seen]
    assert statuses.count(401) == 2 and statuses[0] == 401, statuses
    again = statuses.index(401, 1)
    assert statuses[again + 1 :] == [200, 200], statuses  # the refused call resent once, then the next
    assert all(a.startswith("Bearer ") for _, a, _ in seen[1:])
    assert seen[again][1] != seen[again + 1][1] == seen[-1][1]  # the refreshed token from then on
    assert seen[again + 1][0] == seen[-1][0] == seen[again][0]  # one head, flow or not
    assert auth_server.count("/authorize") == 1
    assert sum(1 for e in auth_server.log if e.get("grant_type") == "refresh_token") == 1
