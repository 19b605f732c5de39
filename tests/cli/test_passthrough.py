"""``mcpio tap`` and ``mcpio replay`` take the server's command after their options, with or
without ``--`` (Gemini CLI's ``mcp add`` drops the first ``--`` of a server's arguments), and
CLI errors name the CLI's flags, not the Python API's keywords."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mcpio import Client
from tests.client.support import EXAMPLES, arun

MCPIO = [sys.executable, "-m", "mcpio"]
QUICKSTART = str(EXAMPLES / "quickstart.py")
LEGACY_ONLY = """\
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}}
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}), flush=True)
"""


def mcpio(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCPIO, *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_tap_and_replay_without_dashes(tmp_path: Path):
    trace = tmp_path / "trace.jsonl"

    async def record():
        # what a host runs when its `mcp add` dropped the `--`: the server's own options follow
        command = [*MCPIO, "tap", "-o", str(trace), "--redact", "secret", sys.executable, QUICKSTART]
        async with Client(command, grace=10, era="legacy") as c:
            assert (await c.call_tool("add", {"a": 1, "b": 2}))["structuredContent"] == {"result": 3}

    arun(record())
    first = json.loads(trace.read_text().splitlines()[0])
    assert first["command"] == [sys.executable, QUICKSTART]
    out = mcpio("replay", str(trace), "--ignore", "serverInfo", sys.executable, QUICKSTART)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "requests replayed, 0 differ" in out.stdout
    dashed = mcpio("replay", str(trace), "--", sys.executable, QUICKSTART)  # -- still works
    assert dashed.returncode == 0 and "0 differ" in dashed.stdout


def test_the_servers_own_options_are_its_own(tmp_path: Path):
    trace = tmp_path / "t.jsonl"
    out = mcpio("tap", "-o", str(trace), sys.executable, "-c", "import sys; sys.exit(7)", "-o", "x")
    assert out.returncode == 7  # `-o x` after the command is the server's, not tap's
    assert json.loads(trace.read_text().splitlines()[0])["command"][-2:] == ["-o", "x"]


def test_usage_errors_show_the_commands_usage():
    for argv, said in [
        (["tap", "-o", "t.jsonl"], "usage: mcpio tap -o FILE"),
        (["replay", "t.jsonl"], "usage: mcpio replay FILE"),
        (["tap", "-o", "t.jsonl", "--bogus", "python", "s.py"], "unrecognized option --bogus"),
    ]:
        out = mcpio(*argv)
        assert out.returncode == 2 and said in out.stderr, out.stderr
        assert "COMMAND ..." in out.stderr and "usage: mcpio [-h]" not in out.stderr


def test_cli_errors_name_flags_not_keywords(tmp_path: Path):
    server = tmp_path / "legacy_only.py"
    server.write_text(LEGACY_ONLY)
    out = mcpio("list", f"{sys.executable} {server}", "tools", "--era", "modern")
    assert out.returncode == 1
    assert "--era legacy" in out.stderr and "era='" not in out.stderr, out.stderr
