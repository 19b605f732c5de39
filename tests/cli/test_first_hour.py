"""The first hour of a new user, played with real ``mcpio`` subprocesses: the mistakes people
make (issue 15) and the messages they must get, plus servers mcpio did not write (a hostile
one, the TypeScript server-everything, ``mcp-server-time`` from PyPI)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.peers import everything_argv, peers_env

MCPIO = [sys.executable, "-m", "mcpio"]
HOSTILE = f"{sys.executable} {Path(__file__).parent / 'servers' / 'hostile.py'}"
RAW_ESCAPES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # what must never reach a terminal

# The quick-start server as people write it: no `if __name__ == "__main__"` block.
SHOUTER = '''\
import os
from dataclasses import dataclass
from typing import Literal, Optional

from mcpio import Server

server = Server("shouter")


@dataclass
class Point:
    x: float
    y: float


@server.tool(title="Shout it")
def shout(text: str, times: int = 1) -> str:
    """Shout the text."""
    if os.environ.get("CALLED_MARK"):
        open(os.environ["CALLED_MARK"], "w").close()
    return " ".join([text.upper()] * times)


@server.tool()
def typed(tags: list[str], mode: Literal["loud", "quiet"] = "loud", limit: Optional[int] = None,
          where: Point | None = None) -> str:
    """A tool whose parameters have every kind of type, and a long description that must be cut to fit."""
    return mode
'''


def mcpio(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MCPIO, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=90,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


@pytest.fixture
def server(tmp_path: Path) -> Path:
    path = tmp_path / "server.py"
    path.write_text(SHOUTER)
    return path


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_every_command_accepts_a_file_without_a_main_block(server, tmp_path):
    listed = mcpio("list", str(server), "tools")
    assert listed.returncode == 0, listed.stderr
    assert "shout" in listed.stdout
    called = mcpio("call", str(server), "shout", "text=hi", "times=2")
    assert (called.returncode, called.stdout) == (0, "HI HI\n"), called.stderr
    doctor = mcpio("doctor", str(server))
    assert doctor.returncode == 0 and "server: shouter" in doctor.stdout, doctor.stdout + doctor.stderr
    # FILE:OBJECT and MODULE:OBJECT resolve the same way
    assert mcpio("call", f"{server}:server", "shout", "text=a").stdout == "A\n"
    assert mcpio("call", "server:server", "shout", "text=b", cwd=tmp_path).stdout == "B\n"
    # tap and replay take the same one-word TARGET after --
    trace = tmp_path / "trace.jsonl"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    tapped = subprocess.run(
        [*MCPIO, "tap", "-o", str(trace), "--", str(server)],
        input=json.dumps(init) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(tapped.stdout)["result"]["serverInfo"]["name"] == "shouter", tapped.stderr
    replayed = mcpio("replay", str(trace), "--", str(server))
    assert replayed.returncode == 0 and "0 differ" in replayed.stdout, replayed.stdout + replayed.stderr


def test_a_misspelt_argument_is_refused_before_sending(server, tmp_path):
    mark = tmp_path / "called"
    out = mcpio("call", str(server), "shout", "text=hi", "tims=3", env={"CALLED_MARK": str(mark)})
    assert out.returncode == 2
    assert lines(out.stderr) == [
        "mcpio: error: shout: unknown argument 'tims' (did you mean 'times'?)",
        "  usage: shout(text: str, times?: int)   (nothing was sent; --no-validate sends it anyway)",
    ]
    assert not mark.exists(), "the tool must not have been called"
    out = mcpio("call", str(server), "shout", "times=3")
    assert out.returncode == 2 and "missing required argument 'text'" in out.stderr
    out = mcpio("call", str(server), "shout", "text=hi", "times=many")
    assert out.returncode == 2 and "argument 'times': 'many' is not an integer" in out.stderr
    assert "usage: shout(text: str, times?: int)" in out.stderr
    out = mcpio("call", str(server), "shout", "--args", '{"text": 5}')
    assert out.returncode == 2 and "argument 'text' must be str, not 5" in out.stderr
    out = mcpio("call", str(server), "typed", "tags=a,b", "mode=shout")
    assert out.returncode == 2 and """'shout' is not one of "loud", "quiet\"""" in out.stderr
    out = mcpio("call", str(server), "shout", "text=hi", "tims=3", "--no-validate", env={"CALLED_MARK": str(mark)})
    # sent anyway, the server refuses it too (-32602 with the same did-you-mean; issue 34), never drops it
    assert out.returncode == 1 and "unknown argument 'tims' (did you mean 'times'?)" in out.stderr
    assert "(error -32602)" in out.stderr and not mark.exists()
    out = mcpio("call", str(server), "shout", "text=hi", "times=3", "--no-validate", env={"CALLED_MARK": str(mark)})
    assert out.returncode == 0 and mark.exists()


def test_an_unknown_tool_gets_suggestions_not_protocol_jargon(server):
    out = mcpio("call", str(server), "shuot", "text=hi")
    assert out.returncode == 2
    assert lines(out.stderr) == [
        "mcpio: error: the server has no tool 'shuot' (did you mean 'shout'?)",
        "  its tools: shout, typed",
    ]
    out = mcpio("call", str(server), "shuot", "--json")
    error = json.loads(out.stdout)["error"]
    assert out.returncode == 2 and error["status"] == 2 and "did you mean 'shout'" in error["message"]


def test_prompts_are_checked_like_tools():
    quickstart = str(Path(__file__).parents[2] / "examples" / "quickstart.py")
    out = mcpio("prompt", quickstart, "review_cod", "code=x")
    assert out.returncode == 2 and lines(out.stderr) == [
        "mcpio: error: the server has no prompt 'review_cod' (did you mean 'review_code'?)",
        "  its prompts: review_code",
    ]
    out = mcpio("prompt", quickstart, "review_code", "cod=x")
    assert out.returncode == 2 and lines(out.stderr) == [
        "mcpio: error: review_code: unknown argument 'cod' (did you mean 'code'?); missing required argument 'code'",
        "  usage: review_code code=…   (nothing was sent)",
    ]


@pytest.mark.parametrize(
    "broken,expected",
    [
        ("def shout(:\n", "server.py:9: SyntaxError: invalid syntax (in your server's code)"),
        (
            "import no_such_module_here\n",
            "server.py:9: ModuleNotFoundError: No module named 'no_such_module_here' (in your server's code)",
        ),
    ],
)
def test_an_error_in_the_users_code_is_one_line_naming_their_file(tmp_path, broken, expected):
    path = tmp_path / "server.py"
    path.write_text("from mcpio import Server\n\nserver = Server('x')\n\n\n\n\n\n" + broken)
    hint = "  fix it and run the command again; -v shows the full traceback"
    run = mcpio("run", "server.py", cwd=tmp_path)
    assert run.returncode == 3 and lines(run.stderr) == [f"mcpio: error: {expected}", hint]
    for command, *rest in (["list"], ["call", "x"], ["doctor"]):
        out = mcpio(command, "server.py", *rest, cwd=tmp_path)
        assert out.returncode == 3, out.stdout + out.stderr
        shown = out.stderr + out.stdout
        assert expected in shown and "Traceback" not in shown and len(lines(out.stderr)) <= 2, shown
    install = mcpio("install", "server.py", "--host", "claude", "--config", str(tmp_path / "c.json"), cwd=tmp_path)
    assert install.returncode == 3 and lines(install.stderr) == [  # checked from / as a host runs it: the full path
        f"mcpio: error: not installed: the server did not start: {tmp_path / expected}",
        hint,
    ]
    assert not (tmp_path / "c.json").exists()
    verbose = mcpio("run", "server.py", "-v", cwd=tmp_path)
    assert "Traceback (most recent call last)" in verbose.stderr and expected in verbose.stderr
    # --reload: the host gets an error naming the file and line; the terminal the same short lines
    reload = subprocess.Popen(
        [*MCPIO, "run", "server.py", "--reload"],
        cwd=tmp_path,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    assert reload.stdin and reload.stdout and reload.stderr
    reload.stdin.write(json.dumps(init) + "\n")
    reload.stdin.flush()
    answer = json.loads(reload.stdout.readline())
    reload.stdin.close()
    stderr = reload.stderr.read()
    reload.wait(30)
    assert expected in answer["error"]["message"]
    assert f"mcpio: error: {expected}" in stderr and "Traceback" not in stderr


def _read_until(fd: int, needle: bytes, limit: int = 1 << 16) -> bytes:
    seen = b""
    while needle not in seen and len(seen) < limit:
        ready, _, _ = select.select([fd], [], [], 30)
        assert ready, f"no {needle!r} on the terminal; got {seen!r}"
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    return seen


def test_run_on_a_terminal_says_what_it_serves_and_how_to_try_it(server):
    main, child = pty.openpty()
    proc = subprocess.Popen([*MCPIO, "run", str(server)], stdin=child, stderr=child, stdout=subprocess.PIPE)
    os.close(child)
    try:
        banner = _read_until(main, b"Ctrl-C").decode()
    finally:
        os.close(main)  # the terminal goes away: end of input, the server exits
        stdout = proc.stdout.read() if proc.stdout else b""
        proc.wait(30)
    assert "serving 'shouter' (2 tools, 0 resources, 0 prompts) over stdio" in banner
    assert f"mcpio list {server}" in banner and f"mcpio call {server} TOOL key=value" in banner
    assert stdout == b"", "stdout belongs to the protocol"
    quiet = subprocess.run([*MCPIO, "run", str(server)], input="", capture_output=True, text=True, timeout=60)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", "")  # a host's pipes: silent


def test_a_busy_port_is_one_clear_line(server):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = mcpio("run", str(server), "-t", "http", "--port", str(port))
    assert out.returncode == 3
    assert lines(out.stderr) == [
        f"mcpio: error: port {port} on 127.0.0.1 is already in use (another program, or another mcpio run)",
        "  pick another one with --port, or stop the program using it",
    ]


def test_install_names_the_entry_after_the_server(server, tmp_path):
    config = tmp_path / "claude.json"
    out = mcpio("install", str(server), "--host", "claude", "--config", str(config))
    assert out.returncode == 0, out.stderr
    assert list(json.loads(config.read_text())["mcpServers"]) == ["shouter"]
    out = mcpio(
        "install",
        str(server),
        "--host",
        "claude",
        "--config",
        str(tmp_path / "other.json"),
        "--no-check",
        "--dry-run",
        "--json",
    )
    assert json.loads(out.stdout)["name"] == "shouter"


def test_list_shows_descriptions_real_types_and_fits_the_terminal(server):
    out = mcpio("list", str(server), "tools")
    assert "shout  text: str, times?: int" in out.stdout and "Shout the text." in out.stdout
    assert "Shout it" not in out.stdout  # the title is not the description
    assert 'tags: list[str], mode?: "loud" | "quiet", limit?: int | None, where?: Point | None' in out.stdout
    narrow = mcpio("list", str(server), "tools", env={"COLUMNS": "60"})
    assert narrow.returncode == 0 and all(len(line) <= 60 for line in narrow.stdout.splitlines()), narrow.stdout
    assert "…" in narrow.stdout


def test_a_hostile_server_cannot_reach_the_terminal_raw():
    outputs = []
    for args in (["list"], ["call", "boom"], ["read", "evil://x"], ["prompt", "p"], ["doctor"]):
        for verbose in ([], ["-v"]):
            out = mcpio(args[0], HOSTILE, *args[1:], *verbose, "--era", "legacy")
            outputs.append((args, verbose, out))
            assert not RAW_ESCAPES.search(out.stdout + out.stderr), (args, verbose, out.stdout + out.stderr)
            assert "FORGED" in out.stdout + out.stderr  # the text arrives, without its escapes
    for args in (
        ["list"],
        ["call", "evil", "--no-validate"],
        ["call", "structured", "--no-validate"],
        ["read", "evil://x"],
        ["prompt", "p"],
        ["doctor"],
    ):
        out = mcpio(args[0], HOSTILE, *args[1:], "--json", "--era", "legacy")
        assert not RAW_ESCAPES.search(out.stdout + out.stderr), (args, out.stdout + out.stderr)
        assert "FORGED" in out.stdout  # JSON keeps the text, escapes as \u sequences
    for name in ("evil", "structured"):
        out = mcpio("call", HOSTILE, name, "--no-validate", "--era", "legacy")
        assert out.returncode == 0 and "FORGED" in out.stdout and not RAW_ESCAPES.search(out.stdout + out.stderr)
    listed = outputs[0][2]
    # it announced resources but answers -32601 to resources/templates/list: noted, the rest shown
    assert listed.returncode == 0 and "tools (2)" in listed.stdout and "resources (1)" in listed.stdout
    assert "(not listed: resources/templates/list: the server announced this capability" in listed.stdout
    assert "not JSON" not in listed.stderr  # a non-JSON stdout line: only with -v
    assert "skipping a line from the server that is not JSON" in outputs[1][2].stderr
    boom = outputs[2][2]
    assert boom.returncode == 1 and boom.stderr.count("-32000") == 1  # the code once, not twice
    assert "the server answered with an error: MCP error -32000: kaboomFORGED" in boom.stderr
    assert "[server warning] logFORGED" in outputs[3][2].stderr
    assert outputs[6][2].returncode == 0 and "promptFORGED" in outputs[6][2].stdout
    # the bare file (no mcpio in it, serving at import time) is run as the script it is
    bare = mcpio("call", HOSTILE.split()[-1], "structured", "--no-validate", "--era", "legacy")
    assert bare.returncode == 0 and '"k": "v' in bare.stdout and "FORGED" in bare.stdout, bare.stderr
    broken = mcpio("list", f"{HOSTILE} broken", "--era", "legacy")
    assert (
        broken.returncode == 4
        and "the server broke the protocol: tools/list: the result has no 'tools' list" in broken.stderr
    )


def test_third_party_servers():
    everything = " ".join(everything_argv())
    env = peers_env()
    out = mcpio("list", everything, "tools", env=env)
    assert out.returncode == 0, out.stderr
    assert 'messageType: "error" | "success" | "debug"' in out.stdout and "Echoes back the input string" in out.stdout
    out = mcpio("call", everything, "echo", "mesage=hi", env=env)
    assert out.returncode == 2 and "unknown argument 'mesage' (did you mean 'message'?)" in out.stderr
    assert "usage: echo(message: str)" in out.stderr
    out = mcpio("call", everything, "ech", env=env)
    assert out.returncode == 2 and "did you mean 'echo'?" in out.stderr and "get-sum" in out.stderr
    assert mcpio("call", everything, "get-sum", "a=1", "b=2", env=env).stdout == "The sum of 1 and 2 is 3.\n"
    time_server = shutil.which("mcp-server-time", path=os.path.dirname(sys.executable))
    assert time_server, "mcp-server-time is in the test extra"
    out = mcpio("call", time_server, "get_current_time", "timezone=UTC", "--json")
    assert out.returncode == 0 and json.loads(json.loads(out.stdout)["content"][0]["text"])["timezone"] == "UTC"
    out = mcpio("call", time_server, "get_current_time", "tz=UTC")
    assert out.returncode == 2 and "missing required argument 'timezone'" in out.stderr


def test_help_documents_targets_and_exit_statuses():
    out = mcpio("--help")
    assert "exit status:" in out.stdout and "3    the server could not be started or reached" in out.stdout
    assert "4    the server broke the protocol" in out.stdout and "claude:NAME" in out.stdout


def test_a_script_written_with_another_sdk_is_run_as_a_script():
    sdk_server = Path(__file__).parents[1] / "servers" / "sdk_server.py"  # the official Python SDK's MCPServer
    out = mcpio("call", str(sdk_server), "add", "a=2", "b=3")
    assert (out.returncode, out.stdout) == (0, "5\n"), out.stderr


def test_install_takes_every_target(tmp_path):
    quickstart = str(Path(__file__).parents[2] / "examples" / "quickstart.py")
    cursor = tmp_path / "cursor.json"
    out = mcpio("install", f"{sys.executable} {quickstart}", "--host", "cursor", "--config", str(cursor))
    assert out.returncode == 0, out.stderr
    assert json.loads(cursor.read_text())["mcpServers"] == {"demo": {"command": sys.executable, "args": [quickstart]}}
    vscode = tmp_path / "vscode.json"
    out = mcpio("install", f"{cursor}:demo", "--host", "vscode", "--config", str(vscode), "--name", "copied")
    assert out.returncode == 0, out.stderr  # another host's entry, copied (and checked)
    assert json.loads(vscode.read_text())["servers"]["copied"] == {
        "type": "stdio",
        "command": sys.executable,
        "args": [quickstart],
    }
    out = mcpio(
        "install", "http://127.0.0.1:9/mcp", "--host", "vscode", "--config", str(vscode), "--no-check", "--name", "web"
    )
    assert out.returncode == 0 and json.loads(vscode.read_text())["servers"]["web"] == {
        "type": "http",
        "url": "http://127.0.0.1:9/mcp",
    }
    out = mcpio(
        "install", "http://127.0.0.1:9/mcp", "--host", "claude", "--config", str(tmp_path / "claude.json"), "--no-check"
    )
    assert out.returncode == 0, out.stderr  # claude starts commands only: the stdio bridge, mcpio run URL
    entry = json.loads((tmp_path / "claude.json").read_text())["mcpServers"]
    assert list(entry.values())[0]["args"] == ["-m", "mcpio", "run", "http://127.0.0.1:9/mcp"]
    (tmp_path / "calc.py").write_text(SHOUTER)
    out = mcpio("install", "calc:server", "--host", "claude", "--config", str(tmp_path / "claude.json"), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    entry = json.loads((tmp_path / "claude.json").read_text())["mcpServers"]["shouter"]
    assert entry["args"] == ["-m", "mcpio", "run", "calc:server"] and entry["env"] == {"PYTHONPATH": str(tmp_path)}


def gateway_file(tmp_path: Path, server: Path, **more: dict[str, Any]) -> Path:
    """An mcpServers file of the entry "ok" (``server``), "broken" (a command that does not
    exist) and ``more``."""
    config = tmp_path / "mcp.json"
    entries = {
        "ok": {"command": sys.executable, "args": ["-m", "mcpio", "run", str(server)]},
        "broken": {"command": str(tmp_path / "no-such-program")},
        **more,
    }
    config.write_text(json.dumps({"mcpServers": entries}))
    return config


def test_a_gateway_file_with_an_entry_that_cannot_start_says_so_without_v(server, tmp_path):
    """``mcpio list mcp.json`` whose one entry cannot start lists the others and says, on stderr,
    which upstream did not start and why: not an empty or short listing without a word. The
    gateway's other lines (an upstream's own stderr) stay behind -v."""
    config = gateway_file(tmp_path, server)
    out = mcpio("list", str(config), "tools", "--json")
    assert out.returncode == 0, out.stderr
    assert {t["name"] for t in json.loads(out.stdout)} >= {"ok__shout"}
    said = [line for line in out.stderr.splitlines() if "broken" in line]
    assert len(said) == 1 and "did not start" in said[0] and "no-such-program" in said[0], out.stderr


def test_a_url_without_the_endpoint_path_gets_the_url_to_try(tmp_path):
    """``mcpio list http://host:port/`` (the endpoint's path left out) is a 404: the hint names
    the URL with ``/mcp``, where the server does answer, without the credentials it carries."""
    from mcpio import Server
    from tests.support.http import ServerThread

    with ServerThread(Server("here").http_app()) as srv:
        done = mcpio("list", f"{srv.base}/?api_key=s3cret", "tools")
        assert done.returncode != 0
        hint = f"try {srv.base}/mcp?api_key=[redacted]"
        assert hint in done.stderr and "s3cret" not in done.stderr, done.stderr
        assert mcpio("list", f"{srv.base}/mcp", "tools").returncode == 0
        elsewhere = mcpio("list", f"{srv.base}/mcp/nested", "tools")  # a path naming mcp: no guess
        assert "HTTP 404" in elsewhere.stderr and "try " not in elsewhere.stderr, elsewhere.stderr


def test_doctor_of_a_gateway_names_each_upstreams_failure_once_and_why(server, tmp_path):
    """``mcpio doctor mcp.json`` starts the gateway once per era it probes: each upstream that did
    not start is one line on stderr, not one per start; and an entry that cannot even be made
    into a client (no command: a misspelt key) says why, not ``None``."""
    config = gateway_file(tmp_path, server, typo={"comand": sys.executable})
    out = mcpio("doctor", str(config))
    told = [line for line in out.stderr.splitlines() if line.startswith("[server]")]
    assert len([line for line in told if "'broken'" in line]) == 1, out.stderr
    assert len([line for line in told if "'typo'" in line]) == 1, out.stderr
    report = out.stdout + out.stderr
    assert "did not start: None" not in report and "'comand'" in report, report


def test_a_bridge_or_gateway_to_a_url_without_the_endpoint_path_names_the_url_to_try(tmp_path):
    """``mcpio run http://host:port/`` (the stdio bridge, as a host starts it) answers its client's
    ``initialize`` with the error and the URL to try; a gateway entry of that URL says so too."""
    from mcpio import Server
    from tests.support.http import ServerThread

    with ServerThread(Server("here").http_app()) as srv:
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        bridged = subprocess.run(
            [*MCPIO, "run", f"{srv.base}/"], input=json.dumps(init) + "\n", capture_output=True, text=True, timeout=90
        )
        answer = json.loads(bridged.stdout.splitlines()[0])
        assert f"try {srv.base}/mcp" in answer["error"]["message"], answer
        config = tmp_path / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"remote": {"url": f"{srv.base}/"}}}))
        listed = mcpio("list", str(config), "tools")
        assert "upstream 'remote' did not start" in listed.stderr and f"try {srv.base}/mcp" in listed.stderr, (
            listed.stderr
        )


def test_serving_over_http_a_command_that_cannot_start_is_one_line_not_an_empty_server(tmp_path):
    """``mcpio run "COMMAND" -t http`` whose command does not exist exits 3 with the reason, before
    it serves; over stdio the host's ``initialize`` gets that reason instead (the host shows it)."""
    from tests.support.http import free_port

    done = subprocess.run(
        [*MCPIO, "run", f"{tmp_path / 'no-such-program'} --flag", "-t", "http", "--port", str(free_port())],
        capture_output=True,
        text=True,
        timeout=90,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 3, (done.returncode, done.stderr)
    said = done.stderr.splitlines()
    assert "no-such-program" in said[0] and not any(line.startswith(("serving", "mcpio: serving")) for line in said), (
        said
    )
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("target", ["claude:", "mcp.json:"])
def test_a_host_or_config_file_with_no_entry_name_says_to_give_one(target, tmp_path):
    """``mcpio list claude:`` (the name left out) is a usage error naming the form to use, not a
    command ``claude:`` looked for on PATH."""
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    out = mcpio("list", target, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert f"give its name, {target}NAME" in out.stderr, out.stderr
