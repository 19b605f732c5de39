"""``mcpio doctor``'s MCP Apps checks, as the real CLI: the example app passes; a server with a
missing view, a view of the wrong type and a UI tool without text content fails with each named."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.client.support import EXAMPLES

MCPIO = [sys.executable, "-m", "mcpio"]

BROKEN = """
from mcpio import Image, Server

server = Server("broken-app")
server.add_resource(lambda: "<p>plain</p>", "ui://broken/wrong-type", mime_type="text/html")
server.ui_resource("ui://broken/view", html="<!DOCTYPE html><p>ok</p>")

@server.app_tool(view="ui://broken/missing", annotations={"readOnlyHint": True})
def lost() -> str:
    return "text"

@server.app_tool(view="ui://broken/wrong-type", annotations={"readOnlyHint": True})
def typed() -> str:
    return "text"

@server.app_tool(view="ui://broken/view", visibility=["app"], annotations={"readOnlyHint": True})
def picture(size: int) -> Image:
    return Image(data=b"\\x89PNG\\r\\n", mime_type="image/png")

@server.app_tool(view="ui://broken/view")
def unchecked(city: str) -> str:
    return city

if __name__ == "__main__":
    server.run()
"""


def doctor(target: str) -> tuple[int, dict]:
    run = subprocess.run([*MCPIO, "doctor", target, "--json"], capture_output=True, text=True, timeout=120)
    return run.returncode, json.loads(run.stdout)


def test_example_app_is_healthy() -> None:
    code, report = doctor(str(EXAMPLES / "apps_calculator.py"))
    assert code == 0, report
    assert report["ui_tools"] == 2 and report["problems"] == [] and report["warnings"] == []


def test_broken_app_names_each_problem(tmp_path: Path) -> None:
    server = tmp_path / "broken_app.py"
    server.write_text(BROKEN)
    code, report = doctor(str(server))
    assert code == 1
    assert report["ui_tools"] == 4  # the app-only tool included: doctor declares the extension
    problems = "\n".join(report["problems"])
    assert "tool 'lost': its view 'ui://broken/missing' cannot be read" in problems
    assert "tool 'typed': its view 'ui://broken/wrong-type' is served as 'text/html'" in problems
    assert "tool 'picture': returns no text content" in problems
    assert len(report["problems"]) == 3
    assert any("tool 'unchecked': not called (it is not readOnlyHint)" in w for w in report["warnings"])
