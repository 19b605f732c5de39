"""The stdio client transport, on real processes: process groups, shutdown, crashes, env, stderr."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import pytest

from mcpio import Client, ConnectionClosed, RequestTimeout, ServerExited, ServerNotFound
from mcpio._transports._spawn import build_env
from mcpio._transports._subprocess import SubprocessTransport
from tests.client.support import RAW, arun, group_exists, group_members, within
from tests.support.modes import stdio_mode  # noqa: F401 - autouse: every test here runs in both modes


def _wait_gone(pgid: int, seconds: float = 3.0) -> None:
    """Bounded poll: the kernel has no event for "the orphaned grandchild was reaped"."""
    deadline = time.monotonic() + seconds
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)


@pytest.mark.linux_peers  # reads /proc
def test_a_server_ignoring_sigterm_is_killed_with_its_whole_group(tmp_path):
    pid_file = tmp_path / "pids"

    async def go():
        client = Client([*RAW, "--ignore-sigterm", "--pid-file", str(pid_file)], grace=0.3)
        async with client:
            assert (await client.call_tool("ok"))["content"][0]["text"] == "ok"
            server_pid, child_pid = map(int, pid_file.read_text().split())
            pgid = client._transport.pid
            assert os.getpgid(server_pid) == pgid == server_pid  # its own group
            assert os.getpgid(child_pid) == pgid
            assert sorted(group_members(pgid)) == sorted([server_pid, child_pid])
            started = time.monotonic()
        # close stdin (ignored) -> 0.3 s -> SIGTERM (ignored) -> 0.3 s -> SIGKILL to the group
        assert time.monotonic() - started < 3.0
        assert client._transport.returncode == -9
        return pgid

    pgid = arun(go())
    _wait_gone(pgid)
    assert group_members(pgid) == []
    deadline = time.monotonic() + 3
    while group_exists(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not group_exists(pgid)  # os.killpg(pgid, 0) -> ProcessLookupError


def test_a_server_dying_mid_call_fails_the_call_promptly_with_exit_code_and_stderr():
    async def go():
        async with Client([*RAW, "--crash-on-call"]) as client:
            started = asyncio.get_running_loop().time()
            with pytest.raises(ServerExited) as info:
                await client.call_tool("ok", timeout=30)
            assert asyncio.get_running_loop().time() - started < 2.0
            err = info.value
            assert err.exit_code == 3
            assert "fatal: out of cheese" in err.stderr_tail
            assert "exited with code 3" in str(err) and "out of cheese" in str(err)
            assert err.data == {"exitCode": 3, "stderrTail": "fatal: out of cheese"}
            assert isinstance(err, ConnectionClosed)
            # Later requests fail the same way, at once.
            with pytest.raises(ServerExited):
                await within(client.list_tools(), 2)

    arun(go())


def test_an_answer_written_just_before_the_server_exits_arrives_before_its_exit():
    # The server's stdout reaches the transport as it is read, its end and the exit after it:
    # the last answer is delivered, then the connection ends with the exit code.
    async def go():
        async with Client([*RAW, "--answer-then-exit"]) as client:
            assert (await within(client.call_tool("ok", timeout=30), 10)).text == "ok"
            with pytest.raises(ServerExited) as info:
                await within(client.list_tools(cache_mode="refresh"), 10)
            assert info.value.exit_code == 0
            # It served (an answer came): not the hint for a script that never started serving
            # (a proxy's client says this to its user: "upstream went away (... without serving ...)")
            assert "without serving" not in str(info.value) and "server.run()" not in str(info.value), info.value

    arun(go())


@pytest.mark.linux_peers  # reads /proc
def test_a_grandchild_holding_stdout_does_not_hide_the_servers_death():
    async def go():
        client = Client([*RAW, "--crash-on-call", "--holder"], grace=0.2)
        async with client:
            pgid = client._transport.pid
            started = asyncio.get_running_loop().time()
            with pytest.raises(ServerExited, match="code 3"):
                await client.call_tool("ok", timeout=30)
            assert asyncio.get_running_loop().time() - started < 2.0
            assert group_members(pgid)  # the `sleep 60` still holds the pipe
        return pgid

    pgid = arun(go())
    _wait_gone(pgid)
    assert group_members(pgid) == []  # aclose() swept the group


def test_a_server_that_exits_at_start_names_its_exit_code_and_stderr():
    async def go():
        with pytest.raises(ServerExited) as info:
            async with Client([sys.executable, "-c", "import sys; sys.stderr.write('no config file\\n'); sys.exit(7)"]):
                pass
        assert info.value.exit_code == 7
        assert (
            "connecting (" in str(info.value) and ") failed" in str(info.value) and "no config file" in str(info.value)
        )

    arun(go())


def test_a_missing_executable_names_it_and_the_path_searched(tmp_path):
    async def go():
        with pytest.raises(ServerNotFound) as info:
            async with Client.stdio("no-such-mcp-server", env={"PATH": str(tmp_path)}):
                pass
        text = str(info.value)
        assert "'no-such-mcp-server'" in text and str(tmp_path) in text
        with pytest.raises(ServerNotFound, match="does not exist"):
            async with Client.stdio("./nowhere/server", cwd=str(tmp_path)):
                pass

    arun(go())


@pytest.mark.parametrize("mode", ["inherit", "safe", "exact"])
def test_env_modes_keep_path_and_drop_secrets_unless_inherited(mode, monkeypatch):
    monkeypatch.setenv("MCPIO_TEST_SECRET", "hunter2")

    async def go():
        t = SubprocessTransport(
            sys.executable,
            ["-c", "import os, json; print(json.dumps(dict(os.environ)))"],
            env={"EXTRA": "1"},
            env_mode=mode,
        )
        await t.open()
        try:
            return json.loads(await within(t.receive()))
        finally:
            await t.aclose()

    env = arun(go())
    assert env["EXTRA"] == "1"
    assert env["PATH"] == os.environ["PATH"]
    assert ("MCPIO_TEST_SECRET" in env) == (mode == "inherit")
    assert ("HOME" in env) == (mode != "exact")


def test_build_env_rejects_unknown_modes_and_lets_env_set_path():
    assert build_env({"PATH": "/opt/bin"}, "safe")["PATH"] == "/opt/bin"
    with pytest.raises(ValueError, match="env_mode"):
        build_env(None, "everything")


def test_stderr_goes_to_the_callback_and_a_flood_never_blocks_the_server():
    lines: list[str] = []

    async def go():
        # 4 MiB of stderr before the server even reads initialize: far more than a pipe holds.
        async with Client([*RAW, "--stderr-flood", str(4 * 1024 * 1024)], on_stderr=lines.append) as client:
            assert client.server_info["name"] == "raw"

    arun(go())
    assert len(lines) == 4 * 1024 * 1024 // 100
    assert lines[0] == "x" * 99


def test_closing_is_prompt_for_a_well_behaved_server():
    async def go():
        client = Client(RAW)
        async with client:
            await client.ping()
            loop = asyncio.get_running_loop()
            started = loop.time()
        assert loop.time() - started < 1.0  # it exited on stdin EOF: no SIGTERM needed
        assert client._transport.returncode == 0

    arun(go())


def test_a_server_that_never_answers_initialize_times_out_with_its_stderr():
    script = "import sys, time; sys.stderr.write('waiting for the database\\n'); sys.stderr.flush(); time.sleep(60)"

    async def go():
        started = asyncio.get_running_loop().time()
        with pytest.raises(RequestTimeout) as info:
            async with Client([sys.executable, "-c", script], timeout=0.5, grace=0.2):
                pass
        assert "neither server/discover nor initialize within 0.5 s" in str(info.value)  # the handshake: 0.5 s in all
        assert "waiting for the database" in str(info.value)
        assert asyncio.get_running_loop().time() - started < 3.0

    arun(go())
