"""A real FastAPI app as an MCP server: served by uvicorn on 127.0.0.1 and reached through
``mcpio run --openapi http://127.0.0.1:PORT/openapi.json`` (a real CLI process, over stdio and
Streamable HTTP, driven by the mcpio Client), and in-process through ``Server.from_fastapi``."""

from __future__ import annotations

import asyncio
import base64
import json
import signal
import subprocess
import sys
from collections.abc import Iterator

import jsonschema
import pytest

from mcpio import Client, Server
from tests.openapi.app import app
from tests.support.http import ServerThread, free_port, wait_port

MCPIO = [sys.executable, "-m", "mcpio"]


@pytest.fixture(scope="module")
def api() -> Iterator[ServerThread]:
    with ServerThread(app) as srv:
        yield srv


async def _exercise(c: Client) -> None:
    """What every way of serving the app must answer alike."""
    tools = {t["name"]: t for t in await c.list_tools()}
    assert set(tools) == {"list_pets", "get_pet", "create_pet", "delete_pet", "upload_file", "echo_path", "whoami"}
    for t in tools.values():
        jsonschema.Draft202012Validator.check_schema(t["inputSchema"])
        assert t["inputSchema"]["type"] == "object"
    create = tools["create_pet"]
    assert create["inputSchema"]["required"] == ["name", "kind", "age"]  # the JSON body's fields, flattened
    kind = create["inputSchema"]["properties"]["kind"]
    assert create["inputSchema"]["$defs"][kind["$ref"].rsplit("/", 1)[1]]["enum"] == ["cat", "dog", "fish"]
    assert create["outputSchema"]["type"] == "object" and create["annotations"]["readOnlyHint"] is False
    assert tools["get_pet"]["annotations"] == {"readOnlyHint": True, "openWorldHint": True, "title": "Get a pet"}

    got = await c.call_tool("get_pet", {"pet_id": 1})  # a path parameter; output schema -> structuredContent
    assert got["structuredContent"]["owner"] == {"name": "Ada", "email": None} and not got.get("isError")
    jsonschema.validate(got["structuredContent"], tools["get_pet"]["outputSchema"])

    missing = await c.call_tool("get_pet", {"pet_id": 99})  # 404 -> isError with the status and the API's body
    assert missing["isError"] is True
    assert missing["content"][0]["text"] == 'GET /pets/{pet_id} failed: HTTP 404 Not Found\n{"detail":"no pet 99"}'

    listed = await c.call_tool("list_pets", {"kind": "dog", "tag": ["nope", "good"], "limit": 5})  # query, arrays
    assert [p["name"] for p in listed["structuredContent"]["result"]] == ["Rex"]
    assert (await c.call_tool("list_pets", {"kind": "cat"}))["structuredContent"] == {"result": []}

    bad = await c.call_tool("create_pet", {"name": "Tom", "kind": "cat", "age": -1})  # FastAPI's 422
    assert (
        bad["isError"] is True
        and "HTTP 422" in bad["content"][0]["text"]
        and "greater than or equal" in bad["content"][0]["text"]
    )
    wrong = await c.call_tool("create_pet", {"name": "Tom", "kind": "bird", "age": 1})  # not in the enum: the API says
    assert wrong["isError"] is True and "HTTP 422" in wrong["content"][0]["text"]
    absent = await c.call_tool("create_pet", {"name": "Tom"})  # a required argument missing: said before any request
    assert absent["isError"] is True and "missing required argument(s) kind, age" in absent["content"][0]["text"]

    made = await c.call_tool("create_pet", {"name": "Tom", "kind": "cat", "age": 2, "owner": {"name": "Bo"}})
    pet = made["structuredContent"]
    assert pet["owner"] == {"name": "Bo", "email": None} and pet["kind"] == "cat"  # the nested model went through
    gone = await c.call_tool("delete_pet", {"pet_id": pet["id"]})  # 204: no content, not an error
    assert not gone.get("isError") and "HTTP 204" in gone["content"][0]["text"]

    up = await c.call_tool("upload_file", {"folder": "a b", "file": base64.b64encode(b"\x00hello").decode()})
    assert up["structuredContent"] == {"folder": "a b", "size": 6, "head": "\x00hello"}  # multipart, a real file
    notb64 = await c.call_tool("upload_file", {"folder": "x", "file": "not base64!"})
    assert notb64["isError"] is True and "base64" in notb64["content"][0]["text"]

    odd = await c.call_tool("echo_path", {"value": "a b?c#d%"})  # escaped, and received exactly
    assert odd["structuredContent"] == {"value": "a b?c#d%"}
    escape = await c.call_tool("echo_path", {"value": "../../pets/1"})  # cannot climb to another path
    assert escape["isError"] is True and "HTTP 404" in escape["content"][0]["text"]


def test_from_fastapi_in_process():
    server = Server.from_fastapi(app)
    assert server.name == "Pet shop" and server.version == "1.2.3"

    async def go() -> None:
        async with Client(server) as c:
            await _exercise(c)

    asyncio.run(go())


def test_cli_run_openapi_over_stdio(api: ServerThread):
    async def go() -> None:
        async with Client([*MCPIO, "run", "--openapi", f"{api.base}/openapi.json", "--base-url", api.base]) as c:
            assert c.server_info["name"] == "Pet shop"
            await _exercise(c)

    asyncio.run(go())


def test_cli_run_openapi_over_http_never_forwards_the_client_token(api: ServerThread):
    port = free_port()
    proc = subprocess.Popen(
        [*MCPIO, "run", "--openapi", f"{api.base}/openapi.json", "--base-url", api.base, "-t", "http"]
        + ["--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_port(port, proc=proc)

        async def go() -> None:
            url = f"http://127.0.0.1:{port}/mcp"
            async with Client(url, headers={"Authorization": "Bearer mcp-client-token"}) as c:
                who = await c.call_tool("whoami", {})
                assert who["structuredContent"] == {"authorization": None, "x_api_key": None}
                await _exercise(c)

        asyncio.run(go())
        listed = subprocess.run(
            [*MCPIO, "list", f"http://127.0.0.1:{port}/mcp", "tools"], capture_output=True, text=True, timeout=60
        )
        assert listed.returncode == 0 and "upload_file" in listed.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert out == ""


def test_list_and_call_name_the_generated_server_as_a_command_line(api: ServerThread):
    served = f"{sys.executable} -m mcpio run --openapi {api.base}/openapi.json --base-url {api.base}"
    listed = subprocess.run([*MCPIO, "list", served, "tools"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0 and "create_pet" in listed.stdout, listed.stderr
    called = subprocess.run(
        [*MCPIO, "call", served, "get_pet", "pet_id=1", "--json"], capture_output=True, text=True, timeout=60
    )
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"]["name"] == "Rex"


def test_cli_run_openapi_errors_are_one_line(tmp_path):
    swagger = tmp_path / "old.json"
    swagger.write_text('{"swagger": "2.0", "info": {"title": "x", "version": "1"}, "paths": {}}')
    proc = subprocess.run([*MCPIO, "run", "--openapi", str(swagger)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "Swagger 2.0" in proc.stderr and "Traceback" not in proc.stderr
    relative = tmp_path / "rel.json"
    relative.write_text(
        '{"openapi": "3.1.0", "info": {"title": "x", "version": "1"}, "servers": [{"url": "/v1"}], "paths": {}}'
    )
    proc = subprocess.run([*MCPIO, "run", "--openapi", str(relative)], capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "--base-url" in proc.stderr and "Traceback" not in proc.stderr
    both = subprocess.run(
        [*MCPIO, "run", "x.py", "--openapi", str(relative)], capture_output=True, text=True, timeout=60
    )
    assert both.returncode == 2 and "not both" in both.stderr


def test_doctor_reports_tools_token_cost_and_skipped_operations(api: ServerThread, tmp_path):
    doc = tmp_path / "api.json"
    spec = app.openapi()
    spec["paths"]["/raw"] = {
        "post": {"operationId": "raw", "requestBody": {"content": {"image/png": {}}}, "responses": {}}
    }
    doc.write_text(json.dumps(spec))
    proc = subprocess.run(
        [*MCPIO, "doctor", "--openapi", str(doc), "--base-url", api.base, "--json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    report = json.loads(proc.stdout)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # warnings only
    assert report["counts"]["tools"] == 7 and report["tools_list_tokens"] > 100
    assert report["skipped_operations"] == [
        {
            "operation": "POST /raw",
            "reason": "its request body is image/png (JSON, form, multipart and text/plain are served)",
        }
    ]
    assert "operation POST /raw is not served: its request body is image/png" in report["warnings"][0]
