"""A pytest plugin: a ready, connected ``client`` fixture for testing an MCP server.

Load it in ``conftest.py`` and say which server to test with an ``mcp_server`` fixture (anything
:class:`~mcpio.Client` takes: the :class:`~mcpio.Server` object itself, in memory and fastest, a
``server.py`` path served as ``mcpio run`` serves it, a command line or an ``http(s)://`` URL)::

    import pytest

    from notes import server

    pytest_plugins = ["mcpio.testing"]


    @pytest.fixture
    def mcp_server():
        return server

Then every async test that takes ``client`` gets a connected :class:`~mcpio.Client`, closed after
the test. It works with either async test runner, on the test's own event loop: pytest-asyncio
(``@pytest.mark.asyncio``, strict or auto mode) and anyio (``@pytest.mark.anyio``). Override the
``mcp_client_options`` fixture to pass options to the Client (``{"era": "legacy"}``, ``env``,
``timeout`` …). ``import mcpio`` does not load this module (nor pytest).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from ._client._client import Client

__all__ = ["client", "mcp_client_options"]


@pytest.fixture
def mcp_client_options() -> dict[str, Any]:
    """Keyword arguments for the ``client`` fixture's :class:`~mcpio.Client` (none by default)."""
    return {}


@pytest.fixture
async def client(mcp_server: Any, mcp_client_options: dict[str, Any]) -> AsyncIterator[Client]:
    """A :class:`~mcpio.Client` connected to ``mcp_server`` for the test, closed after it."""
    async with Client(mcp_server, **mcp_client_options) as connected:
        yield connected


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_fixture_setup(fixturedef: Any, request: Any) -> Any:
    """Run ``client`` on the test's runner: anyio's when the test uses anyio (it then has an
    ``anyio_backend`` fixture), else pytest-asyncio's (the mark ``pytest_asyncio.fixture`` sets,
    which strict mode needs; left off for anyio, whose plugin runs the fixture then)."""
    func: Any = getattr(fixturedef, "func", None)
    if func is not None and getattr(func, "__module__", None) == __name__ and fixturedef.argname == "client":
        target = getattr(func, "__func__", func)
        target._force_asyncio_fixture = "anyio_backend" not in request.fixturenames
    yield
