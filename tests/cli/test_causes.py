"""Issue 34, "errors that hide the cause": what a user sees when their server or their own code
goes wrong, met as they meet it (a real ``mcpio run`` process and its stderr, a real Client)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from mcpio import Client, InvalidParams, MCPError

BOOM = '''\
from mcpio import Server

server = Server("boom")


@server.tool()
def boom(x: int) -> str:
    """Always fails."""
    raise ValueError(f"cannot handle {x}")
'''


def test_a_tool_that_raises_under_mcpio_run_logs_its_traceback(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(BOOM)
    stderr: list[str] = []

    async def go() -> None:
        async with Client([sys.executable, "-m", "mcpio", "run", str(path)], on_stderr=stderr.append) as client:
            result = await client.call_tool("boom", {"x": 7})
            assert result.is_error and "ValueError: cannot handle 7" in result.text

    asyncio.run(go())
    log = "\n".join(stderr)
    assert "tool boom raised ValueError: cannot handle 7" in log
    assert "Traceback (most recent call last)" in log
    assert 'server.py", line 9, in boom' in log
    assert "ValueError: cannot handle 7" in log


def test_a_client_used_without_async_with_says_how_to_connect(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(BOOM)

    async def go() -> None:
        client = Client(str(path))
        for attempt in (client.list_tools(), client.call_tool("boom", {"x": 1}), client.ping()):
            with pytest.raises(RuntimeError) as info:
                await attempt
            assert "not connected" in str(info.value)
            assert "async with Client(...) as client:" in str(info.value)
            assert "capability" not in str(info.value)

    asyncio.run(go())


def test_a_client_serves_a_py_file_without_a_main_block_as_mcpio_run_does(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(BOOM)  # no `if __name__ == "__main__":` block
    (tmp_path / "two.py").write_text(
        BOOM.replace('server = Server("boom")', 'other = Server("other")').replace("@server", "@other")
    )

    async def go() -> None:
        async with Client(str(path)) as client:
            assert [t.name for t in await client.list_tools()] == ["boom"]
        async with Client(f"{tmp_path / 'two.py'}:other") as client:  # FILE.py:OBJECT, as on the CLI
            assert client.server_info.name == "other"

    asyncio.run(go())


def test_a_script_that_exits_without_serving_gets_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "quiet.py"
    path.write_text("x = 1\n")  # no mcpio, no serving: it just ends

    async def go() -> None:
        with pytest.raises(MCPError) as info:
            async with Client(str(path), timeout=30):
                pass
        message = str(info.value)
        assert "exited with code 0 without serving" in message
        assert "server.run()" in message

    asyncio.run(go())


TYPO = '''\
from mcpio import Server

server = Server("typo")


class Note:
    title = "t"


@server.tool()
def shout(text: str) -> str:
    """Shout."""
    return Note().titel
'''


def test_unknown_tools_and_attribute_errors_carry_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text(TYPO)
    stderr: list[str] = []

    async def go() -> None:
        async with Client(str(path), on_stderr=stderr.append) as client:
            with pytest.raises(InvalidParams) as info:
                await client.call_tool("shuot", {"text": "a"})
            assert info.value.code == -32602
            assert "Unknown tool: 'shuot' (did you mean 'shout'?)" in info.value.message
            result = await client.call_tool("shout", {"text": "a"})
            assert result.is_error
            assert "AttributeError: 'Note' object has no attribute 'titel'. Did you mean: 'title'?" in result.text

    asyncio.run(go())
    assert "Did you mean: 'title'?" in "\n".join(stderr)  # the log's traceback says it too


def test_an_import_time_name_error_keeps_its_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "server.py"
    path.write_text("from mcpio import Server\n\nserver = Server('x')\nservr.name\n")
    done = subprocess.run(
        [sys.executable, "-m", "mcpio", "list", str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0
    assert "NameError: name 'servr' is not defined. Did you mean: 'server'?" in done.stderr


@pytest.mark.parametrize("issuer", ["down", "silent"])
def test_an_unreachable_issuer_is_told_at_start_up_and_refused_tokens_are_logged(tmp_path: Path, issuer: str) -> None:
    import contextlib
    import signal
    import socket

    import httpx

    from tests.support.http import free_port, wait_port

    path = tmp_path / "server.py"
    path.write_text(BOOM)
    stack = contextlib.ExitStack()
    if issuer == "down":  # nothing listens on `nobody`
        port, nobody = free_port(), free_port()
    else:  # `nobody` takes connections (the kernel's backlog) and never answers
        listener = stack.enter_context(socket.create_server(("127.0.0.1", 0)))
        port, nobody = free_port(), listener.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "run", str(path), "-t", "http", "--port", str(port)]
        + ["--auth-issuer", f"http://127.0.0.1:{nobody}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    secret = "not-a-jwt-but-a-secret"
    try:
        wait_port(port, proc=proc)  # a warning, not a failure: it serves
        headers = {"authorization": f"Bearer {secret}", "accept": "application/json, text/event-stream"}
        body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        answer = httpx.post(f"http://127.0.0.1:{port}/mcp", json=body, headers=headers, timeout=30)
        assert answer.status_code == 401
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        stack.close()
    assert f"mcpio: warning: cannot fetch the signing keys of http://127.0.0.1:{nobody} now (" in err
    reason = err.split(" now (", 1)[1].split("): every token", 1)[0]
    assert reason == "no answer within 5 s" if issuer == "silent" else reason, err  # a reason, always
    assert "check --auth-issuer" in err
    assert "refused a request: 401 invalid_token (the token is not a well-formed JWT)" in err
    assert secret not in err  # never the token


LOGS_ONCE = """\
import logging  # imported before the server starts: logging is loaded when serving begins

from mcpio import Server

server = Server("logs-once")


@server.tool()
def warn() -> str:
    logging.getLogger("mcpio.example").warning("look at me")
    return "ok"
"""


def test_each_log_record_reaches_stderr_once_under_mcpio_run(tmp_path: Path) -> None:
    # The command line's handler and a server's default one are both asked for; the first
    # configured (the command line's) wins and the record is written once.
    path = tmp_path / "server.py"
    path.write_text(LOGS_ONCE)
    stderr: list[str] = []

    async def go() -> None:
        async with Client([sys.executable, "-m", "mcpio", "run", str(path)], on_stderr=stderr.append) as client:
            assert (await client.call_tool("warn", {})).text == "ok"

    asyncio.run(go())
    assert [line for line in stderr if "look at me" in line] == ["mcpio: warning: look at me"]
