"""A 2026-07-28 client's call through a proxy whose legacy upstream asks during it: the upstream
call lives across the client's ``input_required`` rounds (``_gateway._rounds``). Here the client
sends one retry twice at once (as a client that timed out and tried again would): both retries
join the same upstream call, which runs once, and each ends, through its own rounds if it gets
any, with that call's one answer; and a retry sent again after the call was answered gets that
answer, not a second run of the upstream call; and a retry the client cancels while it waits
leaves the flight to the retry that got the next round; and a call whose client does not come
back within the proxy's ``round_timeout`` is cancelled upstream, and its late retry starts it
over. Real HTTP (uvicorn on 127.0.0.1), raw POSTs, or a proxy process on stdio; a real upstream
process (``upstream.py``)."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcpio import ConfigError, Server, load_config
from tests.client.support import arun
from tests.http.conftest import modern, modern_headers
from tests.support.http import ServerThread
from tests.support.stdio_peer import StdioPeer

HERE = Path(__file__).parent
UPSTREAM = [sys.executable, str(HERE / "upstream.py")]
CAPS = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}}}
ANSWERS = {
    "Your name?": {"action": "accept", "content": {"name": "Ada"}},
    "Your mood?": {"action": "accept", "content": {"mood": "curious"}},
}
SAID = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "hi"}}
TEXT = "Ada is curious; the model said hi"  # interview's answer


class Caller:
    """Raw ``tools/call`` POSTs of ``interview`` to ``url``, and the client's answers to rounds."""

    def __init__(self, http: httpx.AsyncClient, url: str) -> None:
        self.http, self.url = http, url
        self.ids = iter(range(1, 1000))
        self.asked: list[str] = []  # what the rounds asked, in the order the client answered them

    async def call(self, extra: dict[str, Any]) -> dict[str, Any]:
        params = {"name": "interview", "arguments": {}, **extra}
        r = await self.http.post(
            self.url,
            json=modern(next(self.ids), "tools/call", params, meta=CAPS),
            headers=modern_headers("tools/call", "interview", accept="application/json"),
        )
        assert r.status_code == 200, r.text
        return r.json()["result"]  # type: ignore[no-any-return]

    def answers(self, round_: dict[str, Any]) -> dict[str, Any]:
        """The retry's params for an input_required result: every request of it answered."""
        assert round_["resultType"] == "input_required", round_
        responses = {}
        for key, request in round_["inputRequests"].items():
            if request["method"] == "elicitation/create":
                self.asked.append(request["params"]["message"])
                responses[key] = ANSWERS[request["params"]["message"]]
            else:
                self.asked.append(request["method"])
                responses[key] = SAID
        return {"requestState": round_["requestState"], "inputResponses": responses}


def served_proxy() -> ServerThread:
    return ServerThread(Server.proxy(UPSTREAM, name="up", era="legacy").http_app())


def test_a_retry_sent_twice_joins_the_one_upstream_call_and_both_end_with_its_answer():
    with served_proxy() as served:

        async def go() -> None:
            async with httpx.AsyncClient(timeout=60) as http:
                caller = Caller(http, served.url)
                retry = caller.answers(await caller.call({}))
                running = {asyncio.ensure_future(caller.call(retry)) for _ in range(2)}  # the same retry, twice
                finals = []
                while running:
                    done, running = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                    for answered in done:
                        result = answered.result()
                        if result.get("resultType") == "input_required":
                            running.add(asyncio.ensure_future(caller.call(caller.answers(result))))
                        else:
                            finals.append(result)
                assert [f["content"][0]["text"] for f in finals] == [TEXT] * 2
                # The upstream call ran once: its first question was asked once. A later one is
                # asked of each retry that comes for it before the other has answered it.
                asked = caller.asked
                assert asked.count("Your name?") == 1
                assert 1 <= asked.count("Your mood?") <= 2 and 1 <= asked.count("sampling/createMessage") <= 2

        arun(go(), timeout=90)


def test_a_retry_sent_again_after_the_answer_gets_that_answer():
    with served_proxy() as served:

        async def go() -> None:
            async with httpx.AsyncClient(timeout=60) as http:
                caller = Caller(http, served.url)
                result = await caller.call({})
                while result.get("resultType") == "input_required":
                    last = caller.answers(result)
                    result = await caller.call(last)
                assert result["content"][0]["text"] == TEXT
                assert caller.asked == ["Your name?", "Your mood?", "sampling/createMessage"]
                again = await caller.call(last)  # the last retry, again: no new round, the same answer
                assert again == result

        arun(go(), timeout=90)


def test_a_retry_cancelled_while_it_waits_leaves_the_flight_to_the_other():
    """Two retries of one round wait on the upstream call; the upstream's next question goes to
    one, as its round, and the client cancels the other (``notifications/cancelled``, 2026-07-28
    on stdio). The flight waits for that round's retry: the upstream call goes on and answers
    it. Before, the cancelled run ended the flight, and the retry started the upstream call over."""
    program = f"from mcpio import Server; Server.proxy({UPSTREAM!r}, name='up', era='legacy').run()"
    with StdioPeer.spawn([sys.executable, "-c", program]) as peer:
        peer.modern(capabilities=CAPS["io.modelcontextprotocol/clientCapabilities"])
        caller = Caller(None, "")  # type: ignore[arg-type]  # only its answers(): the calls go on stdio

        def call(extra: dict[str, Any]) -> dict[str, Any]:
            msg = peer.request_msg("tools/call", {"name": "interview", "arguments": {}, **extra})
            peer.send(msg)
            return msg

        first = call({})
        retry = caller.answers(peer.response(first["id"])["result"])  # "Your name?" answered
        twice = [peer.request_msg("tools/call", {"name": "interview", "arguments": {}, **retry}) for _ in range(2)]
        peer.send_raw(b"".join(json.dumps(msg).encode() + b"\n" for msg in twice))  # one write: both wait
        twice = [msg["id"] for msg in twice]
        answered = peer.wait_for(lambda m: m.get("id") in twice)  # the one the upstream's next question went to
        waiting = next(i for i in twice if i != answered["id"])
        peer.notify("notifications/cancelled", {"requestId": waiting})
        peer.call("tools/list")  # the proxy has read the cancellation before the next retry
        result = answered["result"]
        while result.get("resultType") == "input_required":
            result = peer.response(call(caller.answers(result))["id"])["result"]
        assert result["content"][0]["text"] == TEXT
        assert not [m for m in peer.received if m.get("id") == waiting]  # it waited: cancelled, never answered
        # One upstream call: its first question was asked once, each later one once.
        assert caller.asked == ["Your name?", "Your mood?", "sampling/createMessage"]


EXPIRED = "did not come back for its input_required round within 0.5 s"


@pytest.mark.parametrize("over", ["stdio", "mcpio run", "mcpServers entry", "mcpServers entry by name", "http"])
def test_a_call_whose_client_does_not_come_back_is_cancelled_upstream_after_the_round_timeout(over, tmp_path):
    """``Server.proxy(round_timeout=0.5)`` (``mcpio run CMD --round-timeout 0.5``, or a gateway
    file's entry with ``"roundTimeout": 0.5``, its gateway left at the default): the client gets
    its call's first round and does not come back within it. The proxy says so in its log and
    cancels the upstream call; the retry the client sends after that finds no call to join, so
    the call starts over upstream (its first question is asked again) and then ends normally. On
    stdio the call was relayed (its flight adopted at the first question), over HTTP awaited:
    both flights expire."""
    if over != "http":
        program = (
            f"from mcpio import Server; Server.proxy({UPSTREAM!r}, name='up', era='legacy', round_timeout=0.5).run()"
        )
        argv = [sys.executable, "-c", program]
        tool = "interview"
        if over == "mcpio run":
            argv = [sys.executable, "-m", "mcpio", "run", shlex.join(UPSTREAM), "--round-timeout", "0.5"]
        elif over.startswith("mcpServers entry"):  # the whole file (a gateway), or mcp.json:up (its proxy)
            entry = {"command": UPSTREAM[0], "args": UPSTREAM[1:], "roundTimeout": 0.5}
            (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"up": entry}}))
            argv, tool = [sys.executable, "-m", "mcpio", "run", str(tmp_path / "mcp.json")], "up__interview"
            if over.endswith("by name"):
                argv[-1] += ":up"
                tool = "interview"
        with StdioPeer.spawn(argv) as peer:
            peer.modern(capabilities=CAPS["io.modelcontextprotocol/clientCapabilities"])
            caller = Caller(None, "")  # type: ignore[arg-type]  # only its answers(): the calls go on stdio

            def call(extra: dict[str, Any]) -> dict[str, Any]:
                return peer.request("tools/call", {"name": tool, "arguments": {}, **extra})["result"]  # type: ignore[no-any-return]

            late = caller.answers(call({}))
            peer.wait_stderr(EXPIRED)  # the proxy's log (stderr): the round timed out
            result = call(late)
            while result.get("resultType") == "input_required":
                result = call(caller.answers(result))
            assert result["content"][0]["text"] == TEXT
            assert caller.asked == ["Your name?", "Your name?", "Your mood?", "sampling/createMessage"]
        return
    expired = threading.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if EXPIRED in record.getMessage():
                expired.set()

    watch, logger = Watch(), logging.getLogger("mcpio.gateway")
    logger.addHandler(watch)
    try:
        with ServerThread(Server.proxy(UPSTREAM, name="up", era="legacy", round_timeout=0.5).http_app()) as served:

            async def go() -> None:
                async with httpx.AsyncClient(timeout=60) as http:
                    caller = Caller(http, served.url)
                    late = caller.answers(await caller.call({}))
                    assert await asyncio.to_thread(expired.wait, 30)
                    result = await caller.call(late)
                    while result.get("resultType") == "input_required":
                        result = await caller.call(caller.answers(result))
                    assert result["content"][0]["text"] == TEXT
                    assert caller.asked == ["Your name?", "Your name?", "Your mood?", "sampling/createMessage"]

            arun(go(), timeout=90)
    finally:
        logger.removeHandler(watch)


def test_a_round_timeout_must_be_a_positive_number_of_seconds(tmp_path):
    for bad in (0, -1, "600"):
        with pytest.raises(ValueError, match="round_timeout must be a positive number of seconds"):
            Server.proxy(UPSTREAM, round_timeout=bad)  # type: ignore[arg-type]
    out = subprocess.run(
        [sys.executable, "-m", "mcpio", "run", shlex.join(UPSTREAM), "--round-timeout", "0"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert out.returncode == 2 and "--round-timeout must be a positive number of seconds" in out.stderr
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {"up": {"command": "x", "roundTimeout": "ten"}}}))
    with pytest.raises(ConfigError, match="server 'up': \"roundTimeout\" must be a positive number of seconds"):
        load_config(tmp_path / "mcp.json")
    out = subprocess.run(  # Python code is served, not proxied: nothing waits for rounds
        [sys.executable, "-m", "mcpio", "run", str(HERE / "upstream.py"), "--round-timeout", "5"],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert out.returncode == 2 and "--round-timeout is for a proxied target" in out.stderr
    usage = subprocess.run([sys.executable, "-m", "mcpio", "run", "--help"], capture_output=True, text=True, timeout=60)
    default = inspect.signature(Server.proxy).parameters["round_timeout"].default
    assert f"(default {default:g})" in " ".join(usage.stdout.split())  # the help says the API's default
