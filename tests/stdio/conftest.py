"""Every test in tests/stdio runs in both stdio transport modes (see tests/support/modes.py)."""

from tests.support.modes import stdio_mode  # noqa: F401 - an autouse, parametrized fixture
