"""More of a new user's first hour, with real ``mcpio`` subprocesses: the slips met walking the
quick start, the gateway recipes, the OpenAPI guide and the missing extras (each test names
the message the user must get instead of a traceback or a puzzle)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MCPIO = [sys.executable, "-m", "mcpio"]


def mcpio(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*MCPIO, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=90,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def test_a_script_that_raises_is_one_line_naming_its_file(tmp_path):
    """A file run as a script (another SDK's server: it never imports mcpio) that raises, at
    import or while serving, is the user's code failing: one line naming the file and line, as
    for an mcpio server, not a traceback through mcpio's own frames."""
    (tmp_path / "other.py").write_text("import json\n\nimport no_such_module_here\n")
    expected = "other.py:3: ModuleNotFoundError: No module named 'no_such_module_here' (in your server's code)"
    hint = "  fix it and run the command again; -v shows the full traceback"
    run = mcpio("run", "other.py", cwd=tmp_path)
    assert (run.returncode, lines(run.stderr)) == (3, [f"mcpio: error: {expected}", hint]), run.stderr
    listed = mcpio("list", "other.py", cwd=tmp_path)
    assert listed.returncode == 3 and lines(listed.stderr) == [
        f"mcpio: error: the server did not start: {expected}",
        hint,
    ], listed.stderr
    verbose = mcpio("run", "other.py", "-v", cwd=tmp_path)
    assert "Traceback (most recent call last)" in verbose.stderr and expected in verbose.stderr
