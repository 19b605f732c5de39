"""Shared fixtures: where things are, and the schema validator."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def wire_validator():
    from tests.support import wire

    if not (wire.SCHEMA_DIR / "2025-11-25" / "schema.json").is_file():
        pytest.fail(f"the MCP schemas are missing at {wire.SCHEMA_DIR} (set MCPIO_SHARED to the shared/ folder)")
    return wire


@pytest.fixture
def python() -> str:
    return sys.executable
