"""``mcpio run TARGET`` (the command ``mcpio install`` writes into every host config) reaches its
first answer without two costs a plain import would pay: no ``compile()`` (its first call in a
process builds the ast module's node classes, ~9.4 M instructions: ``mcpio.cli.Command``,
``mcpio._coldstart._ProbeCompile``) and no garbage collection (``mcpio._collector``: paused
through the start-up imports, resumed once the server has frozen what they made). Collection
is on again whenever serving starts or the command ends another way, and only ``mcpio run``
ever pauses it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import uncovered_env

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
SESSION = [
    INIT,
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "gc_state", "arguments": {}}},
]

SERVER = """
import gc
from mcpio import Server

server = Server("cold")


@server.tool
def gc_state() -> str:
    return f"enabled={gc.isenabled()} frozen={gc.get_freeze_count() > 0}"
"""

# `python -m mcpio ARGS`, watched from the start of mcpio's __main__ to its first answer line on
# fd 1: every compile() call made outside the import system (which compiles a source without a
# cached .pyc) and every collection that starts; the list goes to stderr as one JSON line, then
# the process goes on serving, unwatched.
WATCH = """
import builtins, gc, json, os, runpy, sys
import mcpio  # the package, as `python -m mcpio` imports it before running its __main__
import mcpio._collector  # what pauses (compiled without a cached .pyc, it alone may reach a collection)
seen = []

def profile(frame, event, arg):
    if event == "c_call" and arg is builtins.compile and not frame.f_code.co_filename.startswith("<frozen importlib"):
        caller = frame.f_back
        seen.append(f"compile() in {frame.f_code.co_filename}:{frame.f_lineno}, called from "
                    f"{caller.f_code.co_filename}:{caller.f_lineno}" if caller else "")

def collecting(phase, info):
    if phase == "start":
        seen.append(f"a collection of generation {info['generation']}")

def write(fd, data, _write=os.write):
    if fd == 1 and b"\\n" in bytes(data) and os.write is write:
        sys.setprofile(None)
        gc.callbacks.remove(collecting)
        os.write = _write
        _write(2, ("WATCHED " + json.dumps(seen) + "\\n").encode())
    return _write(fd, data)

gc.collect()  # what came before mcpio's __main__ is not its doing
gc.callbacks.append(collecting)
os.write = write
sys.argv = ["mcpio", *sys.argv[1:]]
sys.setprofile(profile)
runpy._run_module_as_main("mcpio")
"""


def _env() -> dict[str, str]:
    # not under coverage (scripts/test measures subprocesses): its tracer is not the command's
    return uncovered_env()


def _serve(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        input="".join(json.dumps(m) + "\n" for m in SESSION),
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env=_env(),
        check=False,
    )


def _gc_state(done: subprocess.CompletedProcess[str]) -> str:
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert "result" in answers[1], done.stdout + done.stderr
    return str(answers[2]["result"]["content"][0]["text"])


def test_mcpio_run_compiles_nothing_and_collects_nothing_before_its_first_answer(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    done = _serve([sys.executable, "-c", WATCH, "run", "server.py"], tmp_path)
    watched = [line for line in done.stderr.splitlines() if line.startswith("WATCHED ")]
    assert watched, done.stderr
    seen = json.loads(watched[0].removeprefix("WATCHED "))
    if sys.platform == "win32":  # no synchronous start-up there: asyncio loads, collecting, before the answer
        seen = [s for s in seen if not s.startswith("a collection")]
    assert seen == []
    assert _gc_state(done) == "enabled=True frozen=True"  # collecting again while serving


def test_a_server_run_by_its_own_script_never_has_collection_turned_on_or_off(tmp_path: Path) -> None:
    """``Server.run`` resumes only what ``mcpio run`` paused: an application that turned
    collection off itself keeps it off, and one that did not is never paused."""
    (tmp_path / "on.py").write_text(SERVER + "\nserver.run()\n")
    (tmp_path / "off.py").write_text(SERVER + "\ngc.disable()\nserver.run()\n")
    assert _gc_state(_serve([sys.executable, "on.py"], tmp_path)) == "enabled=True frozen=True"
    assert _gc_state(_serve([sys.executable, "off.py"], tmp_path)) == "enabled=False frozen=True"
    assert _gc_state(_serve([sys.executable, "-m", "mcpio", "run", "off.py"], tmp_path)) == "enabled=False frozen=True"


def test_a_script_run_by_mcpio_run_collects_as_usual(tmp_path: Path) -> None:
    """A file that never imports mcpio is run as ``__main__``: collection is on when it starts."""
    (tmp_path / "script.py").write_text("import gc\nprint(gc.isenabled())\n")
    done = subprocess.run(
        [sys.executable, "-m", "mcpio", "run", "script.py"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=_env(),
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, "True\n"), done.stderr


@pytest.mark.parametrize("argv", [["run", "missing.py"], ["run", "-v", "missing.py"], ["--version"]])
def test_collection_is_on_after_a_command_that_did_not_serve(argv: list[str], tmp_path: Path) -> None:
    import gc

    from mcpio.cli import main

    assert gc.isenabled()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        status = main(argv)
        assert gc.isenabled(), f"mcpio {' '.join(argv)} returned {status} with collection off"
    finally:
        os.chdir(cwd)
        gc.enable()
