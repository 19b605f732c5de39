"""One TARGET rule for every command: ``mcpio run TARGET`` imports exactly what ``mcpio list
TARGET`` would serve with ``mcpio run``, proxies everything else, and ``mcpio install TARGET``
writes the same choice into a host's file. Real subprocesses, a real console script of a
package from PyPI (``mcp-server-time``), real files in a temporary HOME."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcpio import Client
from tests.client.support import arun
from tests.conftest import EXAMPLES

MCPIO = [sys.executable, "-m", "mcpio"]
QUICKSTART = EXAMPLES / "quickstart.py"
TIMEOUT = 60.0

#: An mcpio server saved without ``.py``, not executable, without a ``__main__`` block.
MCPIO_CODE = """\
from mcpio import Server

server = Server("noext")


@server.tool
def shout(text: str) -> str:
    return text.upper()
"""


def isolated(home: Path) -> dict[str, str]:
    """The environment of a user whose host files are under ``home``."""
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "APPDATA": str(home)}


def mcpio(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MCPIO, *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


def served_by_run(target: str, env: dict[str, str], cwd: Path) -> Client:
    """A client of ``mcpio run TARGET`` over stdio, as a host starts it."""
    return Client([*MCPIO, "run", target], env=env, env_mode="exact", cwd=str(cwd), timeout=TIMEOUT)


@pytest.mark.skipif(sys.platform == "win32", reason="a console script is an .exe on Windows: a program either way")
def test_a_console_script_by_its_path_is_run_as_the_program_it_is(tmp_path):
    """``mcpio run /venv/bin/mcp-server-time`` (a package's console script: a Python ``#!`` file
    without ``.py`` that imports no mcpio) proxies the program, as ``mcpio list`` starts it; it
    was imported and exited 2 ("cannot be imported as a Python module"). ``mcpio install`` writes
    the script itself, which runs with its own interpreter and packages."""
    script = shutil.which("mcp-server-time", path=os.path.dirname(sys.executable))
    assert script, "mcp-server-time is in the test extra"
    env = isolated(tmp_path)

    async def go() -> None:
        async with served_by_run(script, env, tmp_path) as c:
            assert {t["name"] for t in await c.list_tools()} >= {"get_current_time", "convert_time"}
            result = await c.call_tool("get_current_time", {"timezone": "UTC"})
            assert json.loads(result.text)["timezone"] == "UTC"

    arun(go(), timeout=90)
    out = mcpio("install", script, "--host", "claude", "--no-check", env=env, cwd=tmp_path)  # it ran above
    assert out.returncode == 0, out.stderr
    entries = json.loads((tmp_path / ".config/Claude/claude_desktop_config.json").read_text())["mcpServers"]
    assert list(entries.values()) == [{"command": script, "args": []}]


def test_mcpio_code_in_a_file_without_py_is_imported_by_every_command(tmp_path):
    """A path to mcpio code without ``.py`` (``bin/server``; not executable, no ``__main__``
    block) is served by ``mcpio run`` importing it; ``mcpio list`` and ``call`` serve it the same
    way. They started it as a program (refused: not executable), and ``run`` could not import
    a file without ``.py``."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "server").write_text(MCPIO_CODE)
    env = isolated(tmp_path)
    out = mcpio("call", "bin/server", "shout", "text=hi", env=env, cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "HI\n"), out.stderr
    out = mcpio("list", f"{tmp_path / 'bin' / 'server'}:server", env=env, cwd=tmp_path)
    assert out.returncode == 0 and "shout" in out.stdout, out.stderr

    async def go() -> None:
        async with served_by_run("bin/server", env, tmp_path) as c:
            assert c.server_info["name"] == "noext"
            assert (await c.call_tool("shout", {"text": "a"})).text == "A"

    arun(go(), timeout=90)


def test_a_pyw_file_named_without_a_path_is_python_code_for_every_command(tmp_path):
    """``good.pyw`` in the current folder, named as ``good.py`` would be (no path): ``mcpio run``,
    ``list`` and ``call`` serve the Python file it is, and ``mcpio install`` writes ``mcpio run``
    of it. Every command looked it up on PATH ("executable 'good.pyw' was not found on PATH");
    ``./good.pyw`` was served."""
    (tmp_path / "good.pyw").write_text(MCPIO_CODE)
    env = isolated(tmp_path)
    out = mcpio("list", "good.pyw", env=env, cwd=tmp_path)
    assert out.returncode == 0 and "shout" in out.stdout, out.stderr
    out = mcpio("call", "good.pyw:server", "shout", "text=hi", env=env, cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "HI\n"), out.stderr
    out = mcpio("install", "good.pyw", "--host", "cursor", "--no-check", env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    entries = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert [e["args"] for e in entries.values()] == [["-m", "mcpio", "run", str((tmp_path / "good.pyw").resolve())]]

    async def go() -> None:
        async with served_by_run("good.pyw", env, tmp_path) as c:
            assert c.server_info["name"] == "noext"
            assert (await c.call_tool("shout", {"text": "a"})).text == "A"

    arun(go(), timeout=90)


def test_a_bare_name_is_a_hosts_entry_then_a_module_for_run_as_for_list(tmp_path):
    """``mcpio run time`` with an entry ``time`` in a host's file serves that entry, as ``mcpio
    list time`` does; it imported the standard library's ``time`` ("no mcpio Server found in
    time"). A bare module importable from the current folder is imported by both (``mcpio list
    mymod`` looked for a command ``mymod`` on PATH)."""
    (tmp_path / ".cursor").mkdir()
    entry = {"command": sys.executable, "args": [str(QUICKSTART)]}
    (tmp_path / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"time": entry}}))
    (tmp_path / "mymod.py").write_text(MCPIO_CODE)
    env = isolated(tmp_path)
    out = mcpio("call", "time", "add", "a=1", "b=2", env=env, cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "3\n"), out.stderr
    out = mcpio("call", "mymod", "shout", "text=x", env=env, cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "X\n"), out.stderr

    async def go() -> None:
        async with served_by_run("time", env, tmp_path) as c:
            assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}
        async with served_by_run("mymod", env, tmp_path) as c:
            assert c.server_info["name"] == "noext"

    arun(go(), timeout=90)


@pytest.mark.parametrize("checked", [True, False])
def test_install_of_an_mcpservers_file_writes_its_gateway(tmp_path, checked):
    """``mcpio install mcp.json`` writes ``mcpio run /abs/mcp.json`` (the gateway of every
    entry), checked by starting it or not; with ``--no-check`` it imported ``mcp.json`` as a
    module to name the entry, and blamed "your server's code" for a ModuleNotFoundError."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": [str(QUICKSTART)]}}}))
    env = isolated(tmp_path)
    out = mcpio("install", "mcp.json", "--host", "cursor", *(() if checked else ("--no-check",)), env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert ("checked: the server starts and lists 2 tools" in out.stderr) is checked
    entries = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert entries["mcp"]["args"] == ["-m", "mcpio", "run", str(config)]


@pytest.mark.parametrize(
    "target,said",
    [
        ("bin/nosuch", "bin/nosuch: no such file"),
        ("nosuch.pyw", "nosuch.pyw: no such file"),  # as nosuch.py: it was looked up on PATH
        ("conf/nosuch.json:demo", "conf/nosuch.json: no such file"),
        ("nosuchmod:server", "nosuchmod:server: no module 'nosuchmod' can be imported from"),
        ("package.json", "package.json: not a server configuration"),  # served as an empty gateway
        ("broken.json", "broken.json: not valid JSON"),  # list: "the server did not start: …", exit 3
        ("./bin", "./bin: a folder, not a server"),  # "does not exist or is not executable", exit 3
    ],
)
def test_a_target_that_names_nothing_is_the_same_usage_error_for_run_and_list(tmp_path, target, said):
    """A missing path, a missing config file, a module nothing imports, a JSON file that is no
    server configuration, an ``.json`` file that is not JSON: one line and exit status 2 from
    ``run`` and ``list`` alike (``run`` proxied the first three as commands and failed to start
    them, exit 1; ``list`` tried to start ``bin/nosuch``, exit 3; both served ``package.json`` as
    an empty gateway, exit 0; ``list`` started ``mcpio run broken.json``, which failed: exit 3)."""
    (tmp_path / "package.json").write_text('{"name": "pkg"}')  # JSON, but no server in it
    (tmp_path / "broken.json").write_text("{oops")
    (tmp_path / "bin").mkdir()
    env = isolated(tmp_path)
    for command in ("run", "list"):
        out = mcpio(command, target, env=env, cwd=tmp_path)
        assert (out.returncode, out.stderr.startswith(f"mcpio: error: {said}")) == (2, True), out.stderr


def test_mcpio_code_saved_with_a_bom_and_crlf_is_served(tmp_path):
    """A server saved by a Windows editor (a UTF-8 BOM, CRLF line ends) whose first line imports
    mcpio is mcpio code: ``server.py`` was run as a script (it defined its Server and exited 0:
    "exited without serving"), ``bin/server`` started as a program."""
    code = "\ufeff" + MCPIO_CODE.replace("\n", "\r\n")
    (tmp_path / "bin").mkdir()
    for path in (tmp_path / "server.py", tmp_path / "bin" / "server"):
        path.write_bytes(code.encode())
    env = isolated(tmp_path)
    out = mcpio("call", "bin/server", "shout", "text=hi", env=env, cwd=tmp_path)
    assert (out.returncode, out.stdout) == (0, "HI\n"), out.stderr

    async def go() -> None:
        async with served_by_run("server.py", env, tmp_path) as c:
            assert (await c.call_tool("shout", {"text": "a"})).text == "A"

    arun(go(), timeout=90)
