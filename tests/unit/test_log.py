"""mcpio._log: module loggers that import logging at their first use (issue 17, cold start)."""

from __future__ import annotations

import logging
import subprocess
import sys

from mcpio import _log
from tests.support import uncovered_env


def test_a_deferred_logger_becomes_the_real_one_at_first_use() -> None:
    ns: dict[str, object] = {}
    ns["log"] = deferred = _log._Deferred("mcpio.test-deferred", ns, "log")
    assert deferred.name == "mcpio.test-deferred"  # forwarded
    assert ns["log"] is logging.getLogger("mcpio.test-deferred")  # rebound: no stand-in on later calls


def test_with_logging_loaded_the_logger_is_the_real_one_and_configure_runs_at_once() -> None:
    ns: dict[str, object] = {}
    assert _log.logger("mcpio.test-loaded", ns) is logging.getLogger("mcpio.test-loaded")
    ran: list[bool] = []
    _log.configure(lambda: ran.append(True))
    assert ran == [True]


SCRIPT = """
import sys
from mcpio import _log
ns = {}
ns["log"] = _log.logger("mcpio.x", ns)
seen = []
_log.configure(lambda: seen.append("logging" in sys.modules))
before = "logging" in sys.modules
ns["log"].warning("hello")  # imports logging, runs the configuration first, then logs
import logging
print(before, seen, ns["log"] is logging.getLogger("mcpio.x"))
"""


def test_logging_loads_at_the_first_use_after_what_configure_deferred() -> None:
    env = uncovered_env()
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "[True]", "True"]
    assert "hello" in done.stderr
