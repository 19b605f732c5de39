"""Static proof for what cannot run here: mypy checks the code as it is on Windows and macOS
(``--platform``), so a Windows-only or macOS-only path cannot reference what does not exist
there (``os.killpg`` or ``os.set_blocking`` on Windows, ``select.kqueue`` on Linux,
``ctypes.WinDLL`` on POSIX …). The platform branches use ``sys.platform`` checks mypy
understands, so each implementation is checked against its own OS's standard library.

The check: the whole package passes the project's ``mypy --strict`` (pyproject's
``[tool.mypy]``) on macOS and on Windows, as it does on Linux (tests/unit/test_typing.py). A
probe calling other OSes' APIs shows the check is not vacuous on any of the three.

No cache is written (``--cache-dir`` set to the null device): the platforms' checks run at
once, and mypy's shared SQLite cache, written by several processes together, once failed with
an internal error (``--no-incremental`` stops mypy reading its cache, not writing it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import uncovered_env

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = ("linux", "darwin", "win32")
ERROR = re.compile(r"^(?P<where>[^:]+:\d+): error: (?P<what>.*)$", re.M)


def mypy(platform: str, *args: str) -> subprocess.Popen[str]:
    """mypy for ``platform``: with pyproject's ``[tool.mypy]`` when ``args`` is empty (the
    package, ``--strict``), else with no config and these arguments only."""
    config = [] if not args else ["--config-file=", "--python-version", "3.11", "--ignore-missing-imports"]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mypy",
            *config,
            "--platform",
            platform,
            "--no-incremental",
            f"--cache-dir={os.devnull}",
            "--no-error-summary",
            "--no-pretty",
            *args,
        ],
        cwd=ROOT,
        env=uncovered_env(),  # mypy runs no mcpio code: under coverage's tracer it only runs slower
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def errors(proc: subprocess.Popen[str]) -> set[str]:
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode in (0, 1), f"mypy itself failed ({proc.returncode}):\n{out}"
    return {f"{m['where']}: {m['what']}" for m in ERROR.finditer(out)}


@pytest.mark.timeout(600)  # two whole-package mypy runs on two cores; each waits at most 300 s
def test_the_package_is_strict_on_macos_and_windows():
    procs = {p: mypy(p) for p in ("darwin", "win32")}
    found = {p: errors(proc) for p, proc in procs.items()}
    assert found == {"darwin": set(), "win32": set()}


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_check_sees_a_call_that_does_not_exist_on_that_os(platform, tmp_path):
    """The check is not vacuous: code calling an API of another OS fails it."""
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import os, select, ctypes\n"
        "os.killpg(1, 9)\n"  # not on Windows
        "select.kqueue()\n"  # not on Linux or Windows
        "ctypes.WinDLL('kernel32')\n"
    )  # Windows only
    expected = {"linux": {"kqueue", "WinDLL"}, "darwin": {"WinDLL"}, "win32": {"killpg", "kqueue"}}[platform]
    found = errors(mypy(platform, str(probe)))
    assert {name for name in ("killpg", "kqueue", "WinDLL") if any(name in e for e in found)} == expected, found
