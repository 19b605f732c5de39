"""The type check: ``mypy --strict`` (configured in pyproject.toml) passes on the package, passes
on a typed example of user code (tests/typing/good_usage.py, which also runs), and fails, with
the expected errors, on the bad examples beside it (each ``# E: text`` comment names an error
mypy must report on that line)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import uncovered_env

ROOT = Path(__file__).resolve().parents[2]
TYPING = ROOT / "tests" / "typing"

pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    # not under coverage (mypy runs no mcpio code: the tracer would only slow it down)
    return subprocess.run(
        [sys.executable, "-m", "mypy", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env=uncovered_env(),
    )


@pytest.mark.timeout(600)
def test_the_package_type_checks() -> None:
    out = mypy()  # files and strictness come from [tool.mypy] in pyproject.toml
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.timeout(600)
def test_typed_user_code_checks_and_runs() -> None:
    out = mypy("--strict", str(TYPING / "good_usage.py"))
    assert out.returncode == 0, out.stdout + out.stderr
    run = subprocess.run([sys.executable, str(TYPING / "good_usage.py")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


@pytest.mark.timeout(600)
@pytest.mark.parametrize("path", sorted(TYPING.glob("bad_*.py")), ids=lambda p: p.stem)
def test_wrong_user_code_fails_with_the_expected_errors(path: Path) -> None:
    expected = {
        (n, m.group(1).strip())
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if (m := re.search(r"# E: (.*)$", line))
    }
    assert expected, f"{path.name} names no expected error"
    out = mypy("--strict", "--no-error-summary", str(path))
    assert out.returncode == 1, out.stdout + out.stderr
    reported = [
        (int(m.group(1)), m.group(2)) for m in re.finditer(r"^[^:]+:(\d+): error: (.*)$", out.stdout, re.MULTILINE)
    ]
    for line, text in expected:
        assert any(n == line and text in msg for n, msg in reported), (
            f"{path.name}:{line}: expected {text!r}, got {reported}"
        )
