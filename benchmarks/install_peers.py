"""Install the benchmark peers into the running interpreter's environment (used by scripts/bench).

* ``mcp``: the newest release of the official Python SDK (and its dependencies).
* ``mcp-proxy``: the newest release (a stdio-to-HTTP bridge peer of ``mcpio run URL``).
* ``fastmcp``: the newest release. ``pip install fastmcp`` alone backtracks to an older
  release when the newest one wants a dependency version this registry does not serve (4.1.6
  wants ``certifi>=2026.10.19``; the registry's newest is 2026.10.18). So: install the newest
  ``fastmcp`` and ``fastmcp-slim`` with ``--no-deps``, then their requirements (with the
  ``client``/``server`` extras fastmcp asks for), each relaxed to the bare package name when
  its version range cannot be met.

Idempotent and quiet; prints one line per peer with the installed version.
"""

from __future__ import annotations

import importlib.metadata as md
import subprocess
import sys

PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]


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
    # mcp-proxy (sparfenyuk): a stdio-to-Streamable-HTTP bridge, beside `mcpio run URL` in proxy_bench.py.
    if pip("install", "-U", "mcp-proxy", check=False, quiet=True) != 0:
        print("install_peers: mcp-proxy could not be installed; proxy_bench.py leaves it out", file=sys.stderr)
    for dist in ("mcp", "fastmcp", "mcp-proxy", "mcpio"):
        try:
            print(f"install_peers: {dist} {md.version(dist)}", file=sys.stderr)
        except md.PackageNotFoundError:
            print(f"install_peers: {dist} NOT INSTALLED", file=sys.stderr)


if __name__ == "__main__":
    main()
