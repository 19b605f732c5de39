"""Every ``mcpio`` command, run as a real subprocess (``python -m mcpio`` or the ``mcpio`` script)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpio import Client
from tests.client.support import EXAMPLES, RAW, SERVERS, arun

QUICKSTART = str(EXAMPLES / "quickstart.py")
MCPIO = [sys.executable, "-m", "mcpio"]


def mcpio(
    *args: str, cwd: str | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*MCPIO, *args], capture_output=True, text=True, cwd=cwd, env=full_env, timeout=timeout)


def test_help_is_light_and_lists_every_command():
    script = Path(sys.executable).parent / "mcpio"
    assert script.exists(), "the mcpio console script is installed with the package"
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    for command in ("run", "list", "call", "read", "prompt", "tap", "replay", "doctor", "config"):
        assert f"  {command}" in out.stdout
    # Fast because it loads only argparse and the flag tables: what --help imports, not a timing
    # (a loaded machine makes any wall-clock bound fail or meaningless).
    timed = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mcpio", "--help"], capture_output=True, text=True, timeout=30
    )
    loaded = {line.split("|")[-1].strip() for line in timed.stderr.splitlines() if line.startswith("import time:")}
    heavy = {"asyncio", "ssl", "httpx", "msgspec", "pydantic", "logging", "mcpio._client", "mcpio._server"}
    assert not heavy & loaded, f"mcpio --help imports {sorted(heavy & loaded)}"
    version = mcpio("--version")
    assert version.returncode == 0 and version.stdout.startswith("mcpio ")
    bad = mcpio("frobnicate")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_list_table_and_json():
    out = mcpio("list", QUICKSTART)
    assert out.returncode == 0, out.stderr
    assert "tools (2)" in out.stdout and "add       a: int, b: int       Add two numbers." in out.stdout
    assert "greeting://{name}" in out.stdout and "review_code" in out.stdout and "(no resources)" in out.stdout
    out = mcpio("list", QUICKSTART, "tools", "--json")
    assert out.returncode == 0
    assert [t["name"] for t in json.loads(out.stdout)] == ["add", "slow_sum"]
    out = mcpio("list", QUICKSTART, "--json")
    assert set(json.loads(out.stdout)) == {"tools", "resources", "templates", "prompts"}


def test_call_coerces_arguments_by_the_input_schema():
    out = mcpio("call", QUICKSTART, "add", "a=20", "b=22")
    assert (out.returncode, out.stdout) == (0, "42\n"), out.stderr
    out = mcpio("call", QUICKSTART, "slow_sum", "values=1,2,3.5", "--json")
    assert json.loads(out.stdout)["structuredContent"] == {"result": 6.5}
    out = mcpio("call", QUICKSTART, "slow_sum", "values:=[1, 2]")
    assert out.stdout == "3.0\n"
    out = mcpio("call", QUICKSTART, "add", "--args", '{"a": 1, "b": 2}')
    assert out.stdout == "3\n"
    out = mcpio("call", QUICKSTART, "add", "--args", '{"a": 1}', "b=5")
    assert out.stdout == "6\n"


def test_call_failures_exit_non_zero():
    out = mcpio("call", QUICKSTART, "add", "a=x", "b=1")  # not an integer: refused before sending
    assert out.returncode == 2 and "argument 'a': 'x' is not an integer" in out.stderr
    out = mcpio("call", QUICKSTART, "add", 'a:="x"', "b=1")  # refused by the schema check
    assert out.returncode == 2 and "argument 'a' must be int, not \"x\"" in out.stderr
    out = mcpio("call", QUICKSTART, "add", 'a:="x"', "b=1", "--no-validate")  # sent: the tool reports an error
    assert out.returncode == 1 and "reported an error" in out.stderr
    out = mcpio("call", QUICKSTART, "nope", "--no-validate")  # the server's own answer
    assert out.returncode == 1 and "Unknown tool" in out.stderr and out.stderr.count("-32602") == 1
    out = mcpio("call", QUICKSTART, "nope", "--json", "--no-validate")
    assert out.returncode == 1 and json.loads(out.stdout)["error"]["code"] == -32602
    out = mcpio("call", QUICKSTART, "add", "oops")
    assert out.returncode == 2 and "KEY=VALUE" in out.stderr


def test_call_takes_positionals_after_double_dash_and_refuses_option_like_tool_names(tmp_path):
    """What the inspector's "copy as mcpio call" writes (`mcpio call -- TARGET TOOL k=v`): a tool
    named like an option is a tool name there, never an option (no file is written); without
    `--`, a tool name starting with '-' is refused."""
    trace = tmp_path / "bashrc"
    out = mcpio("call", "--", QUICKSTART, f"--trace={trace}", "a=1")
    assert out.returncode == 2 and "has no tool '--trace=" in out.stderr, out.stderr
    assert not trace.exists()
    out = mcpio("call", QUICKSTART, "-5")
    assert out.returncode == 2 and "put -- before the positional arguments" in out.stderr, out.stderr
    out = mcpio("call", "--", QUICKSTART, "add", "a=1", "b=2")
    assert (out.returncode, out.stdout) == (0, "3\n"), out.stderr
    # A program alone, "called" with an option-like tool: the command line was meant quoted.
    out = mcpio("call", "--", "true", "-m", "some_server", "tool")
    assert out.returncode == 3 and "the server is the program 'true' alone" in out.stderr, out.stderr
    assert "mcpio call -- 'true -m …' TOOL" in out.stderr


def test_read_and_prompt():
    out = mcpio("read", QUICKSTART, "greeting://Ada")
    assert (out.returncode, out.stdout) == (0, "Hello, Ada!\n")
    out = mcpio("read", QUICKSTART, "greeting://Ada", "--json")
    assert json.loads(out.stdout)["contents"][0]["text"] == "Hello, Ada!"
    out = mcpio("read", QUICKSTART, "nothing://here")
    assert out.returncode == 1 and "Resource not found" in out.stderr
    out = mcpio("prompt", QUICKSTART, "review_code", "code=x = 1")
    assert out.returncode == 0 and out.stdout == "[user]\nPlease review this code:\n\nx = 1\n"
    out = mcpio("prompt", QUICKSTART, "review_code", "code=1", "--json")
    assert json.loads(out.stdout)["messages"][0]["content"]["text"].endswith("1")


def test_targets_command_lines_config_names_urls_and_missing_programs(tmp_path):
    out = mcpio("call", f"{sys.executable} {QUICKSTART}", "add", "a=1", "b=1")  # a quoted command line
    assert out.stdout == "2\n"
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": [QUICKSTART]}}}))
    out = mcpio("call", f"{config}:demo", "add", "a=2", "b=2")  # CONFIG:NAME with a file
    assert out.stdout == "4\n", out.stderr
    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    (home / ".cursor" / "mcp.json").write_text(config.read_text())
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    out = mcpio("call", "cursor:demo", "add", "a=3", "b=3", env=env, cwd=str(tmp_path))  # CONFIG:NAME with a host
    assert out.stdout == "6\n", out.stderr
    out = mcpio("call", "demo", "add", "a=4", "b=4", env=env, cwd=str(tmp_path))  # a bare NAME from the known files
    assert out.stdout == "8\n", out.stderr
    out = mcpio("config", "--json", env=env, cwd=str(tmp_path))
    assert [r["target"] for r in json.loads(out.stdout)] == ["cursor:demo"]
    out = mcpio("config", env=env, cwd=str(tmp_path))
    assert "cursor:demo" in out.stdout and QUICKSTART in out.stdout
    broken = tmp_path / "broken.json"
    broken.write_text("{oops")
    out = mcpio("config", str(broken))
    assert out.returncode == 1 and "not valid JSON" in out.stderr
    out = mcpio("config", str(tmp_path / "absent.json"))
    assert out.returncode == 2 and "neither a host" in out.stderr
    out = mcpio("config", str(config), "--json")
    assert [r["name"] for r in json.loads(out.stdout)] == ["demo"]
    out = mcpio("list", "cursor:other", env=env, cwd=str(tmp_path))
    assert out.returncode == 2 and "no server 'other' in cursor" in out.stderr
    out = mcpio("list", "http://127.0.0.1:9/mcp")  # a URL: Streamable HTTP (nothing listens there)
    assert out.returncode == 3 and "cannot reach the MCP server at http://127.0.0.1:9/mcp" in out.stderr
    out = mcpio("list", "definitely-not-an-mcp-server", env={"PATH": str(tmp_path)})
    assert out.returncode == 3 and "'definitely-not-an-mcp-server' was not found on PATH" in out.stderr
    assert str(tmp_path) in out.stderr
    dying = f"{sys.executable} -c 'import sys; sys.stderr.write(\"bad token\\n\"); sys.exit(4)'"
    out = mcpio("list", dying)
    assert out.returncode == 3 and "exited with code 4" in out.stderr and "bad token" in out.stderr
    out = mcpio("list", dying, "--era", "modern")  # its exit, not "does not speak 2026-07-28"
    assert out.returncode == 3 and "exited with code 4" in out.stderr and "bad token" in out.stderr
    assert "does not speak" not in out.stderr


def test_env_and_verbose_reach_the_server(tmp_path):
    server = tmp_path / "envy.py"
    server.write_text(
        "import os, sys\nfrom mcpio import Server\nserver = Server('envy')\n"
        "@server.tool\ndef get(name: str) -> str:\n    print('looking up', name, file=sys.stderr, flush=True)\n    return os.environ.get(name, '-')\n"
        "server.run()\n"
    )
    out = mcpio("call", str(server), "get", "name=MCPIO_X", "-e", "MCPIO_X=42", "--env-mode", "safe", "-v")
    assert out.stdout == "42\n" and "[server] looking up MCPIO_X" in out.stderr
    out = mcpio("call", str(server), "get", "name=MCPIO_SECRET", "--env-mode", "safe", env={"MCPIO_SECRET": "s"})
    assert out.stdout == "-\n"


def test_run_serves_a_file_and_a_named_object(tmp_path):
    app = tmp_path / "app.py"
    app.write_text(
        "from mcpio import Server\nprint('printed at import')\n"
        "first = Server('first')\nsecond = Server('second')\n"
        "@second.tool\ndef ping_me() -> str:\n    return 'pong'\n"
        "def make():\n    return first\n"
    )

    async def go():
        async with Client([*MCPIO, "run", QUICKSTART]) as c:  # no `if __name__ == "__main__"` needed
            assert (await c.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}
        async with Client([*MCPIO, "run", f"{app}:second"]) as c:  # a print at import cannot break the stream
            assert c.server_info["name"] == "second"
            assert (await c.call_tool("ping_me"))["content"][0]["text"] == "pong"
        async with Client([*MCPIO, "run", f"{app}:make"]) as c:  # a factory function
            assert c.server_info["name"] == "first"

    arun(go())
    out = mcpio("run", str(app))
    assert out.returncode == 2 and "several Servers (first, second)" in out.stderr
    out = mcpio("run", str(tmp_path / "nope.py"))
    assert out.returncode == 2 and "no such file" in out.stderr
    out = mcpio("list", f"{app}:second", "tools", "--json")  # FILE.py:OBJECT as a TARGET
    assert [t["name"] for t in json.loads(out.stdout)] == ["ping_me"]


def test_tap_records_both_directions_and_redacts(tmp_path):
    trace = tmp_path / "trace.jsonl"

    async def go():
        # grace=10: on a loaded machine the tap still gets to write its last record before any SIGTERM
        async with Client(
            [*MCPIO, "tap", "-o", str(trace), "--redact", "secret", "--", sys.executable, QUICKSTART],
            grace=10,
            era="legacy",
        ) as c:
            r = await c.call_tool("add", {"a": 1, "b": 2})
            assert r["structuredContent"] == {"result": 3}
            await c.request(
                "tools/call", {"name": "add", "arguments": {"a": 5, "b": 5}, "_meta": {"secret": "hunter2"}}
            )
            with pytest.raises(Exception, match="Unknown tool"):
                await c.call_tool("nope", {})

    arun(go())
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert records[0]["dir"] == "meta" and records[0]["command"] == [sys.executable, QUICKSTART]
    assert records[-1] == {**records[-1], "dir": "meta", "exit": 0}
    messages = [(r["dir"], r["message"]) for r in records if "message" in r]
    assert messages[0][0] == "c2s" and messages[0][1]["method"] == "initialize"
    assert messages[1][0] == "s2c" and messages[1][1]["result"]["serverInfo"]["name"] == "demo"
    assert ("c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"}) in messages
    secret = next(m for d, m in messages if d == "c2s" and "secret" in m.get("params", {}).get("_meta", {}))
    assert secret["params"]["_meta"] == {"secret": "[REDACTED]"}
    assert "hunter2" not in trace.read_text()
    assert all(r["time"].endswith("Z") and isinstance(r["ts"], float) for r in records)
    assert sum(1 for d, m in messages if d == "s2c" and "id" in m) == sum(
        1 for d, m in messages if d == "c2s" and "id" in m
    )


def test_replay_reports_same_and_different_responses(tmp_path):
    trace = tmp_path / "trace.jsonl"

    async def record():
        async with Client(
            [*MCPIO, "tap", "-o", str(trace), "--", sys.executable, QUICKSTART],
            sampling=lambda p: "unused",
            grace=10,
            era="legacy",
        ) as c:
            await c.list_tools()
            await c.call_tool("add", {"a": 2, "b": 3})
            await c.read_resource("greeting://Ada")

    arun(record())
    out = mcpio("replay", str(trace), "--", sys.executable, QUICKSTART)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "4 requests replayed, 0 differ" in out.stdout
    # A different server: initialize and tools/list differ, the resource is missing.
    other = tmp_path / "other.py"
    other.write_text(
        "from mcpio import Server\nserver = Server('other')\n"
        "@server.tool\ndef add(a: int, b: int) -> int:\n    return a + b\nserver.run()\n"
    )
    out = mcpio("replay", str(trace), "--json", "--", sys.executable, str(other))
    assert out.returncode == 1
    report = json.loads(out.stdout)
    status = {e["method"]: e["status"] for e in report["requests"]}
    assert status == {
        "initialize": "different",
        "tools/list": "different",
        "tools/call": "same",
        "resources/read": "different",
    }
    init = next(e for e in report["requests"] if e["method"] == "initialize")
    assert any("serverInfo.name" in d for d in init["differences"])
    out = mcpio(
        "replay",
        str(trace),
        "--ignore",
        "serverInfo",
        "--ignore",
        "instructions",
        "--ignore",
        "capabilities",
        "--json",
        "--",
        sys.executable,
        str(other),
    )
    status = {e["method"]: e["status"] for e in json.loads(out.stdout)["requests"]}
    assert status["initialize"] == "same"
    out = mcpio("replay", str(trace))
    assert out.returncode == 2 and "goes after the options" in out.stderr


def test_replay_of_a_modern_era_trace(tmp_path):
    trace = tmp_path / "modern.jsonl"

    async def record():
        async with Client([*MCPIO, "tap", "-o", str(trace), "--", sys.executable, QUICKSTART], grace=10) as c:
            assert c.negotiated_era == "modern"  # era="auto" found server/discover
            await c.list_tools()
            await c.call_tool("add", {"a": 2, "b": 3})

    arun(record())
    methods = [json.loads(line).get("message", {}).get("method") for line in trace.read_text().splitlines()]
    assert "initialize" not in methods and methods[1] == "server/discover"
    out = mcpio("replay", str(trace), "--", sys.executable, QUICKSTART)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "3 requests replayed, 0 differ" in out.stdout


def test_doctor_on_a_good_and_a_bad_server():
    out = mcpio("doctor", QUICKSTART, "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["server_info"]["name"] == "demo"
    assert 0 < report["first_response_ms"] < 10_000
    assert report["eras"]["legacy"] == ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    assert report["eras"]["modern"]["modern"] is True and "2026-07-28" in report["eras"]["modern"]["versions"]
    assert (report["era"], report["protocol_version"]) == ("modern", "2026-07-28")  # --era auto found it
    assert report["tools_list_bytes"] > 100 and {t["name"] for t in report["tools"]} == {"add", "slow_sum"}
    assert report["tools"][0]["tokens"] == round(report["tools"][0]["bytes"] / 4)
    assert report["problems"] == []
    assert 'tool "add" has no title' in report["warnings"]

    text = mcpio("doctor", QUICKSTART, "--era", "legacy").stdout
    assert "(spawn to initialize result, legacy era, 2025-11-25)" in text
    assert "modern era: yes (server/discover lists 2026-07-28" in text

    out = mcpio("doctor", f"{RAW[0]} {RAW[1]} --bad-catalog")
    assert out.returncode == 1
    text = out.stdout
    assert "modern era: no (the server does not speak the 2026-07-28 era (server/discover: Method not found" in text
    assert "legacy era: 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05" in text
    assert "(spawn to initialize result, legacy era, 2025-11-25)" in text  # auto fell back
    assert 'PROBLEM: tool "has space": the name must be 1-64 characters' in text
    assert f'PROBLEM: tool "{"x" * 70}": the name must be' in text
    assert (
        "PROBLEM: tool \"typo\": inputSchema is not a valid JSON Schema at /properties/a: unknown type 'integr'" in text
    )
    assert "'required' must be an array of strings" in text
    assert 'warning: tool "has space" has no title' in text
    assert "fine" not in [line.split('"')[1] for line in text.splitlines() if line.startswith("PROBLEM")]
    out = mcpio("doctor", f"{sys.executable} -c 'raise SystemExit(9)'")
    assert out.returncode == 3 and "cannot connect" in out.stdout and "code 9" in out.stdout


@pytest.mark.parametrize("era", ["legacy", "modern", "auto"])
def test_era_option(era):
    out = mcpio("call", QUICKSTART, "add", "a=1", "b=2", "--era", era, "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["structuredContent"] == {"result": 3} and "resultType" not in result
    assert ("_meta" in result) == (era != "legacy")  # 2026-07-28 results carry _meta serverInfo
    out = mcpio("list", f"{RAW[0]} {RAW[1]}", "tools", "--era", era)
    if era == "modern":  # a legacy-only server cannot be spoken to in the modern era
        assert out.returncode == 1 and "server/discover" in out.stderr
    else:
        assert out.returncode == 0 and "ok" in out.stdout


def test_sdk_server_through_the_cli():
    out = mcpio("call", str(SERVERS / "sdk_server.py"), "shout", "text=hey", "times=3")
    assert (out.returncode, out.stdout) == (0, "HEY HEY HEY\n"), out.stderr
