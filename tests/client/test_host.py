"""Host configuration files (every known shape) and the Host object (several servers, one namespace)."""

from __future__ import annotations

import json
import sys

import pytest

from mcpio import ConfigError, Host, InvalidParams, Server, ServerSpec, load_config
from mcpio._host import _config
from tests.client.support import EXAMPLES, RAW, arun


def write(path, data) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def test_mcp_servers_shape(tmp_path):
    # Claude Desktop / Cursor / Claude Code / Windsurf
    f = write(
        tmp_path / "claude_desktop_config.json",
        {
            "mcpServers": {
                "files": {
                    "command": "npx",
                    "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                    "env": {"DEBUG": "1"},
                },
                "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
                "old": {"command": "old-server", "disabled": True},
                "sse": {"type": "sse", "url": "https://example.com/sse"},
            }
        },
    )
    servers = load_config(f)
    assert servers["files"] == ServerSpec(
        name="files",
        command="npx",
        args=("-y", "@modelcontextprotocol/server-filesystem", "/tmp"),
        env={"DEBUG": "1"},
        source=f,
        workspace=servers["files"].workspace,
    )
    assert servers["remote"].type == "http" and servers["remote"].headers == {"Authorization": "Bearer x"}
    assert servers["remote"].is_remote
    assert servers["old"].disabled
    assert servers["sse"].type == "sse"


def test_a_loaded_entrys_repr_shows_no_secret(tmp_path):
    """``repr`` of a ServerSpec (printed while debugging, a traceback's locals) names its env,
    headers and OAuth settings without their values, and its URLs without their credentials."""
    f = write(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "remote": {
                    "url": "https://ada:pw-1@example.com/mcp?api_key=k-1",
                    "headers": {"Authorization": "Bearer t-1"},
                    "oauth": {"clientId": "c", "clientSecret": "s-1"},
                },
                "local": {"command": "npx", "args": ["mcp-remote", "https://ada:pw-2@x/mcp"], "env": {"GH_PAT": "p-1"}},
            }
        },
    )
    shown = repr(load_config(f))
    for secret in ("pw-1", "k-1", "t-1", "s-1", "pw-2", "p-1"):
        assert secret not in shown, shown
    assert "'Authorization': '[redacted]'" in shown and "'GH_PAT': '[redacted]'" in shown, shown
    assert "url='https://example.com/mcp?api_key=[redacted]'" in shown, shown


def test_vscode_shape_with_comments_inputs_and_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("MCPIO_TEST_TOKEN", "t0k3n")
    f = write(
        tmp_path / "proj" / ".vscode" / "mcp.json",
        """{
      // VS Code allows comments
      "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
      "servers": {
        "local": {
          "type": "stdio",
          "command": "python",
          "args": ["${workspaceFolder}/server.py", "--home=${userHome}"],
          "env": {"TOKEN": "${env:MCPIO_TEST_TOKEN}", "MISSING": "${env:MCPIO_NOT_SET}"},  /* trailing comma next */
          "cwd": "${workspaceFolder}",
        },
        "asks": {"command": "x", "env": {"KEY": "${input:key}"}},
        "web": {"type": "http", "url": "http://localhost:3000/mcp", "headers": {"X-Token": "${env:MCPIO_TEST_TOKEN}"}},
      },
    }""",
    )
    servers = load_config(f)
    local = servers["local"].resolved()
    proj = str((tmp_path / "proj").resolve())
    assert local.args[0] == f"{proj}/server.py" and local.cwd == proj
    assert local.env == {"TOKEN": "t0k3n", "MISSING": ""}
    assert servers["web"].resolved().headers == {"X-Token": "t0k3n"}
    with pytest.raises(ConfigError, match=r"\$\{input:key\}.*asks the host to prompt"):
        servers["asks"].resolved()


def test_claude_code_variables_and_project_servers(tmp_path, monkeypatch):
    monkeypatch.setenv("MCPIO_TEST_HOST", "db.local")
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path / ".mcp.json",
        {
            "mcpServers": {
                "db": {"command": "db-mcp", "args": ["--host=${MCPIO_TEST_HOST}", "--port=${MCPIO_PORT:-5432}"]},
                "broken": {"command": "x", "args": ["${MCPIO_UNSET_VAR}"]},
            }
        },
    )
    db = load_config(tmp_path / ".mcp.json")["db"].resolved()
    assert db.args == ("--host=db.local", "--port=5432")
    with pytest.raises(ConfigError, match="MCPIO_UNSET_VAR.*not set"):
        load_config(tmp_path / ".mcp.json")["broken"].resolved()
    # ~/.claude.json: user servers, overridden by the entry of the current project
    f = write(
        tmp_path / "home" / ".claude.json",
        {
            "mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}},
            "projects": {
                str(tmp_path): {"mcpServers": {"b": {"command": "project-b"}}},
                "/elsewhere": {"mcpServers": {"c": {"command": "c"}}},
            },
        },
    )
    servers = load_config(f)
    assert {n: s.command for n, s in servers.items()} == {"a": "user-a", "b": "project-b"}


def test_settings_json_zed_and_env_files(tmp_path):
    settings = write(tmp_path / "settings.json", {"mcp": {"servers": {"s": {"command": "s-cmd"}}}})
    assert load_config(settings)["s"].command == "s-cmd"
    write(tmp_path / ".env", "# comment\nexport A=1\nB='two'\n")
    zed = write(
        tmp_path / "zed.json",
        {
            "context_servers": {
                "new": {"command": "new-cmd", "args": ["-v"], "env": {"C": "3"}, "envFile": str(tmp_path / ".env")},
                "old": {"command": {"path": "old-cmd", "args": ["x"], "env": {"D": "4"}}},
            }
        },
    )
    servers = load_config(zed)
    assert servers["new"].resolved().env == {"A": "1", "B": "two", "C": "3"}
    assert (servers["old"].command, servers["old"].args, servers["old"].env) == ("old-cmd", ("x",), {"D": "4"})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"mcpServers": {"x": {"command": 3}}}', "'command' must be a string"),
        ('{"mcpServers": {"x": {"command": "c", "args": "a b"}}}', "'args' must be a list"),
        ("[1, 2]", "must hold a JSON object"),
    ],
)
def test_bad_files_are_clear_errors(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message):
        load_config(write(tmp_path / "bad.json", text))
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")


def test_a_jsonc_file_with_a_nan_and_a_bad_file_with_its_line_and_column(tmp_path):
    servers = load_config(write(tmp_path / "a.json", '{"mcpServers": {"x": {"command": "c", "n": NaN}, \n}} // note'))
    assert servers["x"].command == "c"  # what JSON readers take (NaN, comments, a trailing comma) is read
    with pytest.raises(ConfigError, match=r"bad\.json: not valid JSON \(Expecting .* at line 2, column 3\)"):
        load_config(write(tmp_path / "bad.json", '{"mcpServers":\n  x}'))
    assert load_config(write(tmp_path / "empty.json", " \n")) == {}


def test_the_host_aliases_are_the_hosts_whose_files_are_known():
    assert tuple(_config.known_files()) == _config.KNOWN


def test_known_files_lookup_by_host_and_by_name(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.chdir(tmp_path)
    write(
        tmp_path / "home" / ".cursor" / "mcp.json",
        {"mcpServers": {"shared": {"command": "user-cursor"}, "cur": {"command": "c"}}},
    )
    write(tmp_path / ".cursor" / "mcp.json", {"mcpServers": {"shared": {"command": "project-cursor"}}})
    write(
        tmp_path / "home" / ".config" / "Claude" / "claude_desktop_config.json",
        {"mcpServers": {"desk": {"command": "d"}}},
    )
    assert _config.lookup("cursor", "shared").command == "project-cursor"  # project file wins
    assert _config.lookup("cursor", "cur").command == "c"
    assert _config.lookup("claude", "desk").command == "d"
    assert _config.find_server("desk").command == "d"
    assert _config.find_server("nobody") is None
    with pytest.raises(ConfigError, match="no server 'x' in cursor.*servers there: cur, shared"):
        _config.lookup("cursor", "x")


def _server(name: str) -> Server:
    s = Server(name)

    @s.tool(name="hello")
    def hello(who: str) -> str:
        return f"{name} says hello to {who}"

    return s


def test_host_namespaces_tools_and_routes_calls(tmp_path):
    async def go():
        servers = {
            "alpha": _server("alpha"),
            "beta.two": _server("beta"),
            "quick": str(EXAMPLES / "quickstart.py"),
            "broken": [sys.executable, "-c", "raise SystemExit(5)"],
        }
        async with Host(servers) as host:
            assert set(host.clients) == {"alpha", "beta.two", "quick"}
            assert "exited with code 5" in str(host.errors["broken"])
            tools = await host.list_tools()
            names = sorted(t["name"] for t in tools)
            assert names == ["alpha__hello", "beta_two__hello", "quick__add", "quick__slow_sum"]
            origin = next(t for t in tools if t["name"] == "beta_two__hello")["_meta"]
            assert origin == {"io.mcpio/server": "beta.two", "io.mcpio/tool": "hello"}
            r = await host.call_tool("beta_two__hello", {"who": "you"})
            assert r["content"][0]["text"] == "beta says hello to you"
            assert (await host.call_tool("quick__add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
            with pytest.raises(InvalidParams, match="no connected server"):
                await host.call_tool("gamma__hello", {})
        assert host.clients == {}

    arun(go())


def test_host_from_a_config_file_and_strict_mode(tmp_path):
    f = write(
        tmp_path / "mcp.json",
        {
            "mcpServers": {
                "raw": {"command": RAW[0], "args": RAW[1:]},
                "off": {"command": "not-started", "disabled": True},
            }
        },
    )

    async def go():
        async with Host.from_config(f) as host:
            assert list(host.clients) == ["raw"]
            assert await host.call_tool("raw__ok") == {"content": [{"type": "text", "text": "ok"}]}
        bad = write(tmp_path / "bad.json", {"mcpServers": {"gone": {"command": "no-such-server-anywhere"}}})
        with pytest.raises(FileNotFoundError, match="no-such-server-anywhere"):
            async with Host.from_config(bad, strict=True):
                pass

    arun(go())


def test_an_entrys_tools_lists_choose_what_the_host_lists_and_calls():
    """An entry's ``"tools": {"allow": …}`` / ``{"deny": …}`` choose its tools for a Host as for a
    gateway of the same file (``ServerSpec.chooses``): the others are neither listed nor called.
    The Host listed and called every tool."""
    quickstart = str(EXAMPLES / "quickstart.py")
    servers = {
        "only": ServerSpec(name="only", command=sys.executable, args=(quickstart,), tools_allow=("add",)),
        "but": ServerSpec(name="but", command=sys.executable, args=(quickstart,), tools_deny=("add",)),
    }

    async def go():
        async with Host(servers, strict=True) as host:
            assert sorted(t["name"] for t in await host.list_tools()) == ["but__slow_sum", "only__add"]
            assert (await host.call_tool("only__add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
            for name in ("only__slow_sum", "but__add"):
                with pytest.raises(InvalidParams, match="does not allow it"):
                    await host.call_tool(name, {"a": 1, "b": 2})

    arun(go())


def test_host_serves_prompts_resources_templates_and_skills_under_the_naming_rule(tmp_path):
    """Host at parity with Server.mount: one naming rule (mcpio._naming) for every kind of item."""
    skill = tmp_path / "skills" / "pdf"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: pdf\ndescription: PDFs.\n---\n# PDF\n")
    docs = Server("docs", skills=tmp_path / "skills")

    @docs.resource("file:///readme.md")
    def readme() -> str:
        return "# readme"

    @docs.resource("page://{slug}")
    def page(slug: str) -> str:
        return f"page {slug}"

    @docs.prompt
    def summarize(topic: str) -> str:
        return f"Summarize {topic}"

    other = Server("other")

    @other.prompt
    def summarize_other() -> str:
        return "other"

    async def go():
        async with Host({"docs site": docs, "other": other}, era="modern") as host:
            prompts = sorted(p.name for p in await host.list_prompts())
            assert prompts == ["docs_site__summarize", "other__summarize_other"]
            got = await host.get_prompt("docs_site__summarize", {"topic": "mcp"})
            assert got.messages[0]["content"]["text"] == "Summarize mcp"
            uris = sorted(r.uri for r in await host.list_resources())
            assert "file://docs_site//readme.md" in uris
            assert [t.uri_template for t in await host.list_resource_templates()] == ["page://docs_site/{slug}"]
            contents = await host.read_resource("page://docs_site/intro")
            assert contents[0].text == "page intro" and contents[0].uri == "page://docs_site/intro"
            skills = await host.list_skills()
            assert [s.uri for s in skills] == ["skill://docs_site/pdf/SKILL.md"]
            assert await host.load_skill(skills[0]) == (skill / "SKILL.md").read_text()
            with pytest.raises(InvalidParams, match="no connected server"):
                await host.read_resource("page://nobody/x")
            with pytest.raises(InvalidParams, match="no connected server"):
                await host.get_prompt("nobody__x")

    arun(go())


def test_a_name_goes_to_the_server_with_the_longest_namespace_it_is_under():
    """Servers ``a`` and ``a__b``: ``a__b__x`` is ``x`` of ``a__b`` (called before any list, and
    whichever server was given first), and ``a__y`` still ``y`` of ``a``."""
    short, long = Server("a"), Server("a b")

    @short.tool
    def y() -> str:
        return "y of a"

    @long.tool
    def x() -> str:
        return "x of a__b"

    @long.prompt
    def p() -> str:
        return "p of a__b"

    async def go():
        async with Host({"a": short, "a__b": long}) as host:
            assert (await host.call_tool("a__b__x"))["content"][0]["text"] == "x of a__b"
            assert (await host.call_tool("a__y"))["content"][0]["text"] == "y of a"
            got = await host.get_prompt("a__b__p")
            assert got.messages[0]["content"]["text"] == "p of a__b"

    arun(go())


def test_two_servers_sharing_a_namespace_are_warned_of(caplog):
    """``"my server"`` and ``"my_server"`` reduce to one namespace: the Host says so when it is made
    (a name under it can reach only one of them), and names the two."""
    with caplog.at_level("WARNING", logger="mcpio.host"):
        Host({"my server": Server("a"), "my_server": Server("b"), "other": Server("c")})
    warned = [r.getMessage() for r in caplog.records if "share the namespace" in r.getMessage()]
    assert warned == [
        "servers 'my server', 'my_server' share the namespace 'my_server': a tool, prompt or resource "
        "under it reaches one of them only; rename one"
    ]
