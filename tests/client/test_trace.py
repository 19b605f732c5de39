"""Client wire traces: ``Client(trace=path)`` and ``mcpio … --trace FILE`` append every message
sent ("out") and received ("in") to a file, one line each, in order."""

from __future__ import annotations

import json
import subprocess
import sys

from mcpio import Client
from tests.client.support import EXAMPLES, arun

QUICKSTART = EXAMPLES / "quickstart.py"


def lines(path) -> list[tuple[str, dict]]:
    out = []
    for line in path.read_text().splitlines():
        stamp, direction, message = line.split(" ", 2)
        assert stamp.endswith("Z") and "T" in stamp
        out.append((direction, json.loads(message)))
    return out


def test_client_trace_records_both_directions_in_order(tmp_path):
    trace = tmp_path / "wire.log"

    async def go():
        async with Client([sys.executable, str(QUICKSTART)], era="legacy", trace=trace) as c:
            assert (await c.call_tool("add", {"a": 2, "b": 3}))["structuredContent"] == {"result": 5}

    arun(go())
    got = lines(trace)
    assert [(d, m.get("method")) for d, m in got[:3]] == [
        ("out", "initialize"),
        ("in", None),
        ("out", "notifications/initialized"),
    ]
    call = next(m for d, m in got if d == "out" and m.get("method") == "tools/call")
    answer = next(m for d, m in got if d == "in" and m.get("id") == call["id"])
    assert answer["result"]["structuredContent"] == {"result": 5}


def test_cli_trace_flag(tmp_path):
    trace = tmp_path / "cli.log"
    done = subprocess.run(
        [sys.executable, "-m", "mcpio", "call", str(QUICKSTART), "add", "a=1", "b=1", "--trace", str(trace)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.strip() == "2"
    methods = [m.get("method") for d, m in lines(trace) if d == "out"]
    assert "tools/call" in methods
