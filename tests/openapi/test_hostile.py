"""A generated server under hostile arguments (a model calling its tools) and hostile or broken
documents: what reaches the API on 127.0.0.1 (the echo app of test_requests, served by uvicorn) and
what the caller is told, never a secret."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from mcpio import Client, Server
from tests.openapi.test_requests import ANY, ECHO, param
from tests.support.http import ServerThread

MCPIO = [sys.executable, "-m", "mcpio"]

DOC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Hostile", "version": "1"},
    "components": {"securitySchemes": {"token": {"type": "http", "scheme": "bearer"}}},
    "paths": {
        "/users/{id}/profile": {
            "get": {"operationId": "profile", "parameters": [param("id", "path", {"type": "string"})], "responses": ANY}
        },
        "/files/{name}.json": {
            "get": {"operationId": "file", "parameters": [param("name", "path", {"type": "string"})], "responses": ANY}
        },
        "/pair/{a}/{b}/end": {
            "get": {
                "operationId": "pair",
                "parameters": [param("a", "path", {"type": "string"}), param("b", "path", {"type": "string"})],
                "responses": ANY,
            }
        },
        "/label/{x}": {
            "get": {
                "operationId": "label",
                "parameters": [param("x", "path", {"type": "string"}, style="label")],
                "responses": ANY,
            }
        },
        "/trace": {
            "get": {
                "operationId": "trace",
                "security": [{"token": []}],
                "parameters": [param("X-Trace", "header", {"type": "string"})],
                "responses": ANY,
            }
        },
    },
}


@pytest.fixture(scope="module")
def api() -> Iterator[ServerThread]:
    with ServerThread(ECHO) as srv:
        yield srv


def calls(server: Server, *tool_arguments: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        async with Client(server) as c:
            return [await c.call_tool(tool, arguments) for tool, arguments in tool_arguments]

    return asyncio.run(go())


def test_a_path_parameter_cannot_leave_its_segment_by_dot_segments_or_an_empty_value(api: ServerThread):
    """A value that makes its segment ``..``, ``.`` or empty would reach another path once the URL is
    normalised (RFC 3986 §5.2.4; ``//`` merged by proxies): refused, and nothing is sent."""
    server = Server.from_openapi(DOC, base_url=f"{api.base}/api")
    hostile = calls(
        server,
        ("profile", {"id": ".."}),  # /api/profile
        ("pair", {"a": "..", "b": ".."}),  # /end: above the base URL's /api
        ("label", {"x": "."}),  # label style: "." + "." is ".."
        ("profile", {"id": ""}),  # /api/users//profile
        ("profile", {"id": None}),  # a path parameter left unfilled
    )
    for result in hostile:
        assert result["isError"] is True, result
        assert result["content"][0]["text"].startswith("Invalid arguments for "), result
    assert "cannot have its segment '{id}' be '..'" in hostile[0]["content"][0]["text"]
    fine = calls(server, ("profile", {"id": "../x"}), ("profile", {"id": "a..b"}), ("file", {"name": "."}))
    assert [r["structuredContent"]["path"] for r in fine] == [
        "/api/users/..%2Fx/profile",
        "/api/users/a..b/profile",
        "/api/files/..json",  # not a dot segment
    ]
