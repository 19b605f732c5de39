"""Install the benchmark peers into the running interpreter's environment (used by scripts/bench).

* ``mcp``: the newest release of the official Python SDK (and its dependencies).
* ``mcp-proxy``: the newest release (a stdio <-> Streamable HTTP bridge, a peer of ``mcpio run URL``
  and ``mcpio run "COMMAND" -t http`` in proxy_bench.py), in a venv of its own,
  ``.venv-bench-mcp-proxy``: it requires ``mcp<2``, and installed beside fastmcp it downgraded
  ``mcp`` to 1.30, which fastmcp 4.2 (``mcp>=2.3``) does not import with (nor would the other
  benchmarks then measure the newest SDK).
* ``fastmcp``: the newest release. ``pip install fastmcp`` alone backtracks to an older
  release when the newest one wants a dependency version this registry does not serve (4.1.6
  wants ``certifi>=2026.10.19``; the registry's newest is 2026.10.18). So: install the newest
  ``fastmcp`` and ``fastmcp-slim`` with ``--no-deps``, then their requirements (with the
  ``client``/``server`` extras fastmcp asks for), each relaxed to the bare package name when
  its version range cannot be met.

Idempotent and quiet; prints one line per peer with the installed version, and checks that
``fastmcp`` imports (its server class is imported lazily: ``import fastmcp`` alone succeeds when
its ``mcp`` is the wrong one).
"""

from __future__ import annotations

import importlib.metadata as md
import subprocess
import sys
import venv
from pathlib import Path

PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
ROOT = Path(__file__).resolve().parents[1]
MCP_PROXY_VENV = ROOT / ".venv-bench-mcp-proxy"  # proxy_bench.py looks for bin/mcp-proxy here


def pip(*args: str, check: bool = True, quiet: bool = False) -> int:
    kw = {"capture_output": True} if quiet else {}
    return subprocess.run([*PIP, *args], check=check, **kw).returncode


def requirements(dist: str, extras: set[str]) -> list[str]:
    from packaging.requirements import Requirement

    out = []
    for raw in md.requires(dist) or []:
        req = Requirement(raw)
        if req.marker is not None:
            if not any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
                continue
            req.marker = None  # evaluated here; pip would evaluate "extra == ..." as false
        out.append(req)
    return out


def main() -> None:
    pip("install", "-U", "mcp", "packaging")
    # Newest fastmcp without letting pip backtrack to an older release.
    pip("install", "-U", "--no-deps", "fastmcp")

    # fastmcp is a thin wrapper over fastmcp-slim pinned to the same version: install that pin
    # (not fastmcp-slim's newest), also without dependencies, then the requirements of both.
    wanted: dict[str, object] = {}
    inner: list[tuple[str, set[str]]] = []
    for req in requirements("fastmcp", set()):
        if req.name.lower().replace("_", "-") == "fastmcp-slim":
            pip("install", "--no-deps", f"fastmcp-slim{req.specifier}")
            inner.append(("fastmcp-slim", set(req.extras)))
        else:
            wanted[str(req)] = req
    for dist, extras in inner:
        for req in requirements(dist, extras):
            wanted[str(req)] = req
    specs = [str(r) for r in wanted.values()]
    if pip("install", *specs, check=False, quiet=True) != 0:
        # Relax what cannot be met (e.g. certifi) one by one: install the rest exactly, then those by name.
        strict, loose = [], []
        for r in wanted.values():
            ok = (
                subprocess.run([*PIP, "install", "--dry-run", "--no-deps", str(r)], capture_output=True).returncode == 0
            )
            (strict if ok else loose).append(r)
        pip("install", *[str(r) for r in strict])
        if loose:
            print(
                "install_peers: relaxed (not served by this registry):",
                ", ".join(str(r) for r in loose),
                file=sys.stderr,
            )
            pip("install", *[r.name for r in loose])
    # mcp-proxy (sparfenyuk) in its own venv (its mcp<2 would downgrade the mcp fastmcp needs);
    # an earlier install_peers put it here: remove it, and let fastmcp's requirements restore mcp.
    if _installed("mcp-proxy"):
        pip("uninstall", "-y", "mcp-proxy", quiet=True)
        pip("install", *[str(r) for r in wanted.values() if r.name == "mcp"] or ["mcp"], check=False, quiet=True)
    mcp_proxy()
    for dist in ("mcp", "fastmcp", "mcpio"):
        print(f"install_peers: {dist} {_installed(dist) or 'NOT INSTALLED'}", file=sys.stderr)
    probe = subprocess.run([sys.executable, "-c", "from fastmcp import FastMCP"], capture_output=True, text=True)
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or ["?"])[-1]
        print(f"install_peers: fastmcp does not import ({why}); proxy_bench.py skips it", file=sys.stderr)


def mcp_proxy() -> None:
    python = MCP_PROXY_VENV / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True).create(MCP_PROXY_VENV)
    got = subprocess.run(
        [str(python), "-m", "pip", "--disable-pip-version-check", "-q", "install", "-U", "mcp-proxy"],
        capture_output=True,
        text=True,
    )
    if got.returncode != 0:
        print("install_peers: mcp-proxy could not be installed; proxy_bench.py leaves it out", file=sys.stderr)
        return
    version = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; print(m.version('mcp-proxy'), '(mcp', m.version('mcp') + ')')",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"install_peers: mcp-proxy {version} in {MCP_PROXY_VENV.name}", file=sys.stderr)


def _installed(dist: str) -> str | None:
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


if __name__ == "__main__":
    main()
