"""The stdio transport modes every stdio test runs in: ``loop`` (the event loop's pipe
transports, the POSIX default) and ``threads`` (blocking reader/writer threads, the Windows
default). The mode reaches servers spawned by the test through ``MCPIO_STDIO_MODE`` (they
inherit the environment) and mcpio clients in the test process through the same variable."""

from __future__ import annotations

import pytest

MODES = ("loop", "threads")


@pytest.fixture(params=MODES, autouse=True)
def stdio_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("MCPIO_STDIO_MODE", request.param)
    return request.param
