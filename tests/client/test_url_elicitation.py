"""URL-mode elicitation against the mcpio client (examples/url_elicitation.py as a real stdio
subprocess, and served over Streamable HTTP on 127.0.0.1): ``ctx.elicit_url`` in both eras
(2025-11-25 ``elicitation/create`` with ``mode: "url"`` and an ``elicitationId``, then
``notifications/elicitation/complete``; 2026-07-28 an input_required round, no id), a client
that did not declare URL mode refused with a clear error, and -32042 typed on the client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from mcpio import Client, URLElicitationRequired
from tests.support.http import mcpio_http
from tests.support.wire import validate_def

EXAMPLE = "examples/url_elicitation.py"


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with mcpio_http(EXAMPLE) as (url, _):
        yield url


async def connect(target: str, era: str, action: str) -> tuple[Any, list[dict], list[tuple[str, Any]]]:
    asked: list[dict] = []
    notes: list[tuple[str, Any]] = []
    completed = asyncio.Event()

    def user(params: dict) -> dict:
        asked.append(params)
        return {"action": action}

    def note(method: str, params: Any) -> None:
        notes.append((method, params))
        if method == "notifications/elicitation/complete":
            completed.set()

    async with Client(target, era=era, elicitation=user, elicitation_modes=("form", "url"), on_notification=note) as c:
        result = await c.call_tool("connect", {"service": "github"})
        if era == "legacy" and action == "accept":
            await asyncio.wait_for(completed.wait(), 30)
    return result, asked, notes


@pytest.mark.parametrize("target", ["stdio", "http"])
def test_legacy_url_elicitation_and_its_completion(target, http_url):
    where = EXAMPLE if target == "stdio" else http_url
    result, asked, notes = asyncio.run(connect(where, "legacy", "accept"))
    assert result.text == "connected github"
    (params,) = asked
    assert params["mode"] == "url" and params["url"] == "https://auth.example.com/github/connect"
    assert params["message"] == "Sign in to github" and len(params["elicitationId"]) >= 16
    assert ("notifications/elicitation/complete", {"elicitationId": params["elicitationId"]}) in notes
    validate_def(params, "2025-11-25", "ElicitRequestURLParams")  # the official schema
    validate_def(
        {
            "jsonrpc": "2.0",
            "method": "notifications/elicitation/complete",
            "params": next(p for m, p in notes if m.endswith("/complete")),
        },
        "2025-11-25",
        "ElicitationCompleteNotification",
    )
    declined, _, _ = asyncio.run(connect(where, "legacy", "decline"))
    assert declined.text == "not connected (decline)"


@pytest.mark.parametrize("target", ["stdio", "http"])
def test_modern_url_elicitation_is_an_input_required_round(target, http_url):
    where = EXAMPLE if target == "stdio" else http_url
    result, asked, notes = asyncio.run(connect(where, "modern", "accept"))
    assert result.text == "connected github"
    (params,) = asked
    assert params == {"mode": "url", "message": "Sign in to github", "url": "https://auth.example.com/github/connect"}
    validate_def(params, "2026-07-28", "ElicitRequestURLParams")
    assert not any(m == "notifications/elicitation/complete" for m, _ in notes)


def test_a_client_without_url_mode_is_refused_clearly(http_url):
    async def run(era: str) -> Any:
        async with Client(http_url, era=era, elicitation=lambda p: {"action": "accept"}) as c:
            return await c.call_tool("connect", {"service": "github"})

    legacy = asyncio.run(run("legacy"))
    assert legacy.is_error and "capability elicitation.url is absent" in legacy.text
    with pytest.raises(Exception) as caught:  # 2026-07-28: -32021 with requiredCapabilities
        asyncio.run(run("modern"))
    assert getattr(caught.value, "code", None) == -32021 and "elicitation.url" in str(caught.value)


def test_url_elicitation_required_is_typed_on_the_client():
    async def run() -> None:
        async with Client(EXAMPLE, era="legacy") as c:
            with pytest.raises(URLElicitationRequired) as caught:
                await c.call_tool("connect_later", {"service": "github"})
            (wanted,) = caught.value.elicitations
            assert wanted["mode"] == "url" and wanted["url"] == "https://auth.example.com/github/connect"
            assert caught.value.code == -32042 and wanted["elicitationId"]
            error = {"code": caught.value.code, "message": caught.value.message, "data": caught.value.data}
            validate_def({"jsonrpc": "2.0", "id": 1, "error": error}, "2025-11-25", "URLElicitationRequiredError")

    asyncio.run(run())
