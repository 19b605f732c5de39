"""``mcpio.testing``: the ``client`` fixture as a user's test suite meets it — a project of
their own (a server module, a conftest loading the plugin, async tests) run by a real pytest
process, with pytest-asyncio (strict and auto mode) and with anyio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SERVER = """\
from mcpio import Server

server = Server("notes")


@server.tool()
def add(a: int, b: int) -> int:
    return a + b


@server.tool()
def greet(name: str) -> str:
    return f"Hello, {name}!"
"""

CONFTEST = """\
import pytest

from notes import server

pytest_plugins = ["mcpio.testing"]


@pytest.fixture
def mcp_server():
    return {target}
"""

ASYNCIO_TEST = """\
import pytest


@pytest.mark.asyncio
async def test_add(client):
    result = await client.call_tool("add", {"a": 2, "b": 3})
    assert not result.is_error and result.data == 5
"""

ANYIO_TEST = """\
import pytest


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_greet(client):
    assert (await client.call_tool("greet", {"name": "Ada"})).data == "Hello, Ada!"
"""


def project(tmp_path: Path, *tests: str, target: str = "server") -> Path:
    (tmp_path / "notes.py").write_text(SERVER)
    (tmp_path / "conftest.py").write_text(CONFTEST.format(target=target))
    for i, text in enumerate(tests):
        (tmp_path / f"test_{i}.py").write_text(text)
    return tmp_path


def pytest_run(where: Path, *options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-W", "ignore::DeprecationWarning", *options],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_with_anyio(tmp_path: Path) -> None:
    done = pytest_run(project(tmp_path, ANYIO_TEST), "-p", "no:asyncio")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_with_pytest_asyncio_strict_mode_beside_anyio(tmp_path: Path) -> None:
    pytest.importorskip("pytest_asyncio")
    done = pytest_run(project(tmp_path, ASYNCIO_TEST, ANYIO_TEST), "-o", "asyncio_mode=strict")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_with_pytest_asyncio_auto_mode_and_a_py_file(tmp_path: Path) -> None:
    pytest.importorskip("pytest_asyncio")
    unmarked = ASYNCIO_TEST.replace("@pytest.mark.asyncio\n", "")
    done = pytest_run(project(tmp_path, unmarked, target=repr("notes.py")), "-o", "asyncio_mode=auto")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_import_mcpio_does_not_load_the_plugin() -> None:
    code = "import sys, mcpio; assert 'mcpio.testing' not in sys.modules and 'pytest' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
