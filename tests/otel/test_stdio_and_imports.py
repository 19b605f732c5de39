"""The stdio path: a real ``mcpio run --otel`` subprocess whose module configures the SDK to
write spans to a file; and what is imported with telemetry off, on, and unavailable."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcpio import Server

SERVER = textwrap.dedent(
    """
    import os
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
    from mcpio import Server

    out = open(os.environ["SPANS_FILE"], "w")
    provider = TracerProvider()
    provider.add_span_processor(
        SimpleSpanProcessor(ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\\n"))
    )
    trace.set_tracer_provider(provider)
    server = Server("otel-stdio")  # telemetry=None: MCPIO_OTEL, which mcpio run --otel sets

    @server.tool
    def add(a: int, b: int) -> int:
        return a + b
    """
)


def test_mcpio_run_otel_traces_a_stdio_server_under_the_meta_traceparent(tmp_path: Path) -> None:
    (tmp_path / "server.py").write_text(SERVER)
    spans_file = tmp_path / "spans.jsonl"
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "add",
                "arguments": {"a": 40, "b": 2},
                "_meta": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
            },
        },
    ]
    done = subprocess.run(
        [sys.executable, "-m", "mcpio", "run", "--otel", "server.py"],
        input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**_env(), "SPANS_FILE": str(spans_file)},
        timeout=60,
    )
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    assert answers[2]["result"]["structuredContent"] == {"result": 42}, done.stdout + done.stderr
    spans = {s["name"]: s for s in map(json.loads, spans_file.read_text().splitlines())}
    assert set(spans) == {"initialize", "tools/call add"}
    call = spans["tools/call add"]
    assert call["kind"] == "SpanKind.SERVER"
    assert call["context"]["trace_id"] == "0x4bf92f3577b34da6a3ce929d0e0e4736"
    assert call["parent_id"] == "0x00f067aa0ba902b7"
    assert call["attributes"] == {
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "2",
        "mcp.protocol.version": "2025-11-25",
        "network.transport": "pipe",
        "gen_ai.tool.name": "add",
        "gen_ai.operation.name": "execute_tool",
    }
    assert spans["initialize"]["parent_id"] is None


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "MCPIO_OTEL"}


def _modules(code: str, **env: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        env={**_env(), **env},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_telemetry_off_imports_nothing_of_opentelemetry_and_wraps_nothing() -> None:
    code = "from mcpio import Server; s = Server('x'); s.http_app(); s.session(None)"
    assert not [m for m in _modules(code) if m.startswith(("opentelemetry", "mcpio._otel."))]
    # no wrapper on the hot path: the sessions run the server's own handler, the app is the app
    server = Server("x")
    assert server.plain and not server.telemetry
    assert type(server.http_app()).__name__ == "StreamableHTTPApp"


def test_telemetry_on_by_argument_or_environment() -> None:
    assert "opentelemetry.trace" in _modules("from mcpio import Server; Server('x', telemetry=True)")
    assert "opentelemetry.trace" in _modules("from mcpio import Server; Server('x')", MCPIO_OTEL="1")
    assert "opentelemetry.trace" not in _modules(
        "from mcpio import Server; Server('x', telemetry=False)", MCPIO_OTEL="1"
    )


def test_telemetry_without_the_api_says_what_to_install() -> None:
    code = "import sys; sys.modules['opentelemetry'] = None\nfrom mcpio import Server\nServer('x', telemetry=True)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert done.returncode != 0
    assert "pip install 'mcpio[otel]'" in done.stderr.splitlines()[-1]


@pytest.mark.parametrize("flag", ["--otel"])
def test_mcpio_run_otel_without_the_api_is_a_usage_error(tmp_path: Path, flag: str) -> None:
    (tmp_path / "server.py").write_text("from mcpio import Server\nserver = Server('x')\n")
    code = "import sys; sys.modules['opentelemetry'] = None\nfrom mcpio.cli import main\nsys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", code, "run", flag, "server.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(),
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert done.returncode != 0
    assert "pip install 'mcpio[otel]'" in done.stderr
