"""The package as a new user gets it: `python -m build` makes an sdist and a wheel (the wheel
built from the sdist, so the sdist is complete), the wheel holds what it should, and installed
into a fresh virtual environment it runs the quick start exactly as the docs type it.

Offline: the fresh environment gets the wheel and msgspec (repacked from this environment's
installed copy) with `--no-index`. Only the build itself may fetch setuptools for its
isolated build environment, through pip's configured index.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import os
import re
import shlex
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.support import uncovered_env

ROOT = Path(__file__).resolve().parents[2]
FIRST_SERVER = ROOT / "docs" / "getting-started" / "first-server.md"


def run(argv: list[str], *, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, **kwargs)
    assert done.returncode == 0, f"{shlex.join(argv)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="session")
def dist(tmp_path_factory) -> Path:
    """`python -m build`: the sdist, then the wheel from it (built once per session)."""
    pytest.importorskip("build", reason="the test extra installs `build`")
    out = tmp_path_factory.mktemp("dist")
    # not under coverage: the build (pip, setuptools) runs no mcpio code, and the tracer slows it down
    run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], timeout=300, env=uncovered_env())
    return out


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    [whl] = dist.glob("mcpio-*-py3-none-any.whl")
    return whl


def repack(name: str, out: Path) -> Path:
    """A wheel of an installed distribution, rebuilt from its files (no index, no network)."""
    d = importlib.metadata.distribution(name)
    info = next(f for f in d.files if f.name == "WHEEL" and f.parent.name.endswith(".dist-info"))
    tags = [line.split(":", 1)[1].strip() for line in d.read_text("WHEEL").splitlines() if line.startswith("Tag:")]
    py, abi, plat = (".".join(sorted({t.split("-")[i] for t in tags})) for i in range(3))
    whl = out / f"{d.metadata['Name'].replace('-', '_')}-{d.version}-{py}-{abi}-{plat}.whl"
    record, dist_info = [], info.parent.as_posix()
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as z:
        for f in d.files:
            p = f.as_posix()
            if (
                "__pycache__" in p
                or p.startswith("..")
                or f.name in ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")
            ):
                continue
            data = Path(f.locate()).read_bytes()
            z.writestr(p, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{p},sha256={digest},{len(data)}")
        z.writestr(f"{dist_info}/RECORD", "\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n")
    return whl


@pytest.fixture(scope="session")
def venv(wheel: Path, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel and its one dependency, installed offline."""
    root = tmp_path_factory.mktemp("fresh")
    wheels = root / "wheels"
    wheels.mkdir()
    repack("msgspec", wheels)
    env = root / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(env)])
    python = env / "bin" / "python"
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--find-links",
            str(wheel.parent),
            "--find-links",
            str(wheels),
            "mcpio",
        ]
    )
    return env


def test_sdist_has_the_sources_and_no_tests(dist: Path):
    [sdist] = dist.glob("mcpio-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
    top = names[0].split("/")[0]
    for needed in ("pyproject.toml", "README.md", "LICENSE", "src/mcpio/__init__.py", "src/mcpio/py.typed"):
        assert f"{top}/{needed}" in names, f"{needed} missing from {sdist.name}"
    assert not [n for n in names if n.startswith(f"{top}/tests/")], "the sdist carries the tests"


def test_wheel_contents(wheel: Path):
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
        metadata = z.read(f"{info}/METADATA").decode()
        entry_points = z.read(f"{info}/entry_points.txt").decode()
    assert "mcpio/py.typed" in names  # PEP 561: type checkers use the package's annotations
    assert "mcpio/__init__.py" in names and "mcpio/_cli/_main.py" in names
    assert {n.split("/")[0] for n in names} == {"mcpio", info}, "only the package and its metadata"
    assert not [n for n in names if "/tests/" in n or n.startswith("tests/") or "conftest" in n]
    assert re.search(r"^Requires-Dist: msgspec>=", metadata, flags=re.M)
    assert re.search(r"^Requires-Python: >=3\.11", metadata, flags=re.M)
    assert "mcpio = mcpio.cli:main" in entry_points
    assert re.search(r"^License-Expression: MIT", metadata, flags=re.M) or "License: MIT" in metadata


def test_installed_in_a_fresh_venv(venv: Path, tmp_path: Path):
    bin_ = venv / "bin"
    done = run(
        [str(bin_ / "python"), "-c", "import mcpio, sys; print(mcpio.__version__); print(mcpio.__file__)"], cwd=tmp_path
    )
    version, location = done.stdout.split()
    assert version == importlib.metadata.version("mcpio")
    assert Path(location).is_relative_to(venv), f"mcpio imported from {location}, not from the fresh venv"
    done = run([str(bin_ / "mcpio"), "--help"], cwd=tmp_path)
    assert "usage: mcpio" in done.stdout and "install" in done.stdout
    run([str(bin_ / "python"), "-m", "mcpio", "--version"], cwd=tmp_path)


def quick_start(page: Path) -> tuple[str, list[tuple[list[str], list[str]]]]:
    """The server file (the `<!-- file: server.py -->` block) and the `$ mcpio …` commands of a
    page's console blocks, each with the output lines shown under it."""
    text = page.read_text(encoding="utf-8")
    server = re.search(r"<!-- file: server\.py -->\s*```python\n(.*?)```", text, flags=re.S)
    assert server, f"{page.name}: no <!-- file: server.py --> block"
    commands: list[tuple[list[str], list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                argv = shlex.split(line[2:], comments=True)
                commands.append((argv, []))
            elif line.strip() and commands:
                commands[-1][1].append(line.strip())
    return server.group(1), [(argv, shown) for argv, shown in commands if argv[0] == "mcpio"]


@pytest.mark.parametrize("page", [FIRST_SERVER, ROOT / "README.md"], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_quick_start_as_typed_from_the_docs(venv: Path, tmp_path: Path, page: Path):
    """The new user: the server file typed from the page, then every `$ mcpio` command of it, run
    with the fresh venv's mcpio (HOME is a temp folder: `install` writes host files there)."""
    source, commands = quick_start(page)
    (tmp_path / "server.py").write_text(source, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    assert any(argv[1] == "list" for argv, _ in commands) and any(argv[1] == "call" for argv, _ in commands)
    for argv, shown in commands:
        done = run(argv, cwd=tmp_path, env=env)
        if shown:  # the page shows the whole output: it must be what a reader gets
            got = [line.strip() for line in done.stdout.splitlines() if line.strip()]
            assert got == shown, f"{shlex.join(argv)}: the page shows {shown}; the output was\n{done.stdout}"
    installed = [argv for argv, _ in commands if argv[1] == "install"]
    for argv in installed:
        host = argv[argv.index("--host") + 1]
        config = {
            "claude": home / ".config" / "Claude" / "claude_desktop_config.json",
            "cursor": home / ".cursor" / "mcp.json",
            "vscode": tmp_path / ".vscode" / "mcp.json",
        }[host]
        entries = json.loads(config.read_text(encoding="utf-8"))
        [entry] = (entries.get("mcpServers") or entries["servers"]).values()
        assert entry["command"] == str(venv / "bin" / "python"), (
            "the entry must run the venv's Python by its absolute path"
        )
        assert str(tmp_path / "server.py") in entry["args"]


def test_the_new_users_mistakes_with_the_wheel(venv: Path, tmp_path: Path):
    """Issue 15's new user, after the quick start, with the wheel's `mcpio` in a fresh venv: the
    mistakes people make, and the one or two lines each must get (tests/cli/test_first_hour.py
    covers every one of them in depth against the development install)."""
    source, _ = quick_start(FIRST_SERVER)
    (tmp_path / "server.py").write_text(source, encoding="utf-8")
    env = {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }
    mcpio = str(venv / "bin" / "mcpio")

    def fails(*argv: str, status: int) -> list[str]:
        done = subprocess.run([mcpio, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == status, (
            f"mcpio {shlex.join(argv)}: exit {done.returncode}\n{done.stdout}{done.stderr}"
        )
        assert "Traceback" not in done.stderr
        return [line for line in done.stderr.splitlines() if line.strip()]

    # a tool name and an argument name, misspelt: refused before sending, with a suggestion
    tools = run([mcpio, "list", "server.py", "tools", "--json"], cwd=tmp_path, env=env)
    tool = json.loads(tools.stdout)[0]
    name, params = tool["name"], list(tool["inputSchema"].get("properties") or {})
    assert params, "the quick start's first tool takes arguments"
    said = fails("call", "server.py", name + "x", status=2)
    assert said[0] == f"mcpio: error: the server has no tool '{name}x' (did you mean '{name}'?)"
    said = fails("call", "server.py", name, f"{params[0]}x=1", status=2)
    assert said[0].startswith(f"mcpio: error: {name}: unknown argument '{params[0]}x' (did you mean '{params[0]}'?)")
    assert "nothing was sent" in said[-1]
    # an error in their own file: their file, line and message, no traceback through mcpio
    (tmp_path / "broken.py").write_text(
        "from mcpio import Server\n\nserver = Server('x')\ndef oops(:\n", encoding="utf-8"
    )
    said = fails("list", "broken.py", status=3)
    assert (
        said[0]
        == "mcpio: error: the server did not start: broken.py:4: SyntaxError: invalid syntax (in your server's code)"
    )
    # a target that is not there
    said = fails("list", "nowhere.py", status=2)
    assert "nowhere.py" in said[0]
