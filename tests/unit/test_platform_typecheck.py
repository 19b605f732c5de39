"""Static proof for what cannot run here: mypy checks the code as it is on Windows, macOS and
Linux (``--platform``), so a Windows-only or macOS-only path cannot reference what does not
exist there (``os.killpg`` or ``os.set_blocking`` on Windows, ``select.kqueue`` on Linux,
``ctypes.WinDLL`` on POSIX …). The platform branches use ``sys.platform`` checks mypy
understands, so each implementation is checked against its own OS's standard library.

Two checks: the platform seam and the stdio transports pass ``--strict`` on every OS; and the
whole package has no error that only one OS sees (the errors mypy reports in other modules,
which are not about platforms, are the same on all three).

No config file is read (``--config-file=``): pyproject's ``[tool.mypy]`` belongs to the
package-wide check, and these flags are the whole contract here. No cache is written
(``--cache-dir`` set to the null device): the three platforms' checks run at once, and mypy's
shared SQLite cache, written by three processes together, once failed with an internal error
(``--no-incremental`` stops mypy reading its cache, not writing it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = ("linux", "darwin", "win32")
SEAM = [
    "src/mcpio/_platform",
    "src/mcpio/_transports/_stdio.py",
    "src/mcpio/_transports/_subprocess.py",
    "src/mcpio/_transports/_threadpipes.py",
]
ERROR = re.compile(r"^(?P<where>[^:]+:\d+): error: (?P<what>.*)$", re.M)


def mypy(platform: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file=",
            "--platform",
            platform,
            "--python-version",
            "3.11",
            "--no-incremental",
            f"--cache-dir={os.devnull}",
            "--ignore-missing-imports",
            "--no-error-summary",
            "--no-pretty",
            *args,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def errors(proc: subprocess.Popen[str]) -> set[str]:
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode in (0, 1), f"mypy itself failed ({proc.returncode}):\n{out}"
    return {f"{m['where']}: {m['what']}" for m in ERROR.finditer(out)}


def test_the_platform_seam_and_the_stdio_transports_are_strict_on_every_os():
    procs = {p: mypy(p, "--strict", "--follow-imports=silent", *SEAM) for p in PLATFORMS}
    found = {p: errors(proc) for p, proc in procs.items()}
    assert found == {p: set() for p in PLATFORMS}


@pytest.mark.timeout(600)  # three whole-package mypy runs on two cores; each waits at most 300 s
def test_no_type_error_is_seen_on_one_os_only():
    procs = {p: mypy(p, "src/mcpio") for p in PLATFORMS}
    found = {p: errors(proc) for p, proc in procs.items()}
    for p in ("darwin", "win32"):
        only_there, only_linux = found[p] - found["linux"], found["linux"] - found[p]
        assert not only_there and not only_linux, (
            f"platform-specific type errors: only on {p}: {sorted(only_there)}; only on linux: {sorted(only_linux)}"
        )


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
