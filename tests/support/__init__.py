"""Helpers shared by the test suite's packages."""

from __future__ import annotations

import os


def uncovered_env() -> dict[str, str]:
    """This process's environment without what starts coverage in a Python subprocess
    (``scripts/test`` measures subprocesses: ``COVERAGE_PROCESS_START``, ``COVERAGE_PROCESS_CONFIG``):
    for a process whose start-up must be its own (an import probe, a cold start), or one that runs
    no mcpio code (mypy, a package build), where the tracer only costs CPU."""
    return {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_PROCESS_")}
