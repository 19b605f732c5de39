"""The layering contract, the public surface, import cost and module size, enforced."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "mcpio"

# Layer of each private module or package (dependencies point down: a module may import only
# from its own layer or lower ones).
LAYERS = {
    "_version": 0,
    "_log": 0,
    "_errors": 0,
    "_jsonrpc": 0,
    "_versions": 0,
    "_schema": 0,
    "_schema_types": 0,
    "_schema_errors": 0,
    "_schema_docs": 0,
    "_schema_output": 0,
    "_docstrings": 0,
    "_callables": 0,
    "_uritemplate": 0,
    "_naming": 0,
    "_content": 0,
    "_safepath": 0,
    "_pyfile": 0,  # which files are Python code mcpio serves, which are programs
    "_suggest": 0,
    "_skills": 0,
    "_handle": 0,
    "_shown": 0,  # how a URL mcpio was given is shown (without its credentials)
    "_collector": 0,
    "_protocol": 1,
    "_transports": 2,
    "_state": 2,
    "_platform": 2,
    "_session": 3,
    "_replies": 3,
    "_server": 4,
    "_client": 4,
    "_host": 4,
    "_auth": 4,
    "_otel": 4,
    "_openapi": 4,
    "_gateway": 4,
    "cli": 5,
    "_coldstart": 5,  # the command line's own start-up (mcpio run)
    "testing": 5,
    "auth": 5,
    "_cli": 5,
    "_inspect": 5,
    "__main__": 5,
    "types": 4,
    "deps": 4,  # the public ready-made dependency providers
    "middleware": 4,  # the public ready-made middleware (mcpio.middleware)
}
# Packages of the same layer that must not import each other.
SIBLINGS_APART = {("_server", "_client"), ("_client", "_server")}


def _top(module_path: Path) -> str:
    rel = module_path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text())
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []  # typing-only imports do not count
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module and node.module.startswith("mcpio."):
                out.append((node.module.split(".")[1], node.lineno))
            elif node.level > 0:
                base = path.relative_to(SRC).parent.parts
                up = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                parts = list(up) + (node.module.split(".") if node.module else [])
                if parts:
                    out.append((parts[0].removesuffix(".py"), node.lineno))
                else:
                    out.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("mcpio."):
                    out.append((alias.name.split(".")[1], node.lineno))
    return out


def test_layers_point_down():
    problems = []
    for path in SRC.rglob("*.py"):
        top = _top(path)
        if top == "__init__":
            continue
        assert top in LAYERS, f"{path}: module {top!r} has no layer; add it to LAYERS"
        for imported, line in _imports(path):
            if imported not in LAYERS or imported == top:
                continue
            if LAYERS[imported] > LAYERS[top]:
                problems.append(
                    f"{path.relative_to(SRC)}:{line} (layer {LAYERS[top]}) imports {imported} (layer {LAYERS[imported]})"
                )
            if (top, imported) in SIBLINGS_APART:
                problems.append(f"{path.relative_to(SRC)}:{line}: {top} must not import {imported}")
    assert not problems, "\n".join(problems)


# What differs between operating systems lives in mcpio._platform only (issue 19).
_PLATFORM_ATTRS = {
    ("os", a) for a in ("killpg", "setsid", "setpgrp", "getpgid", "pidfd_open", "dup", "dup2", "set_blocking")
}
_PLATFORM_ATTRS |= {
    ("select", "kqueue"),
    ("select", "kevent"),
    ("signal", "SIGKILL"),
    ("signal", "SIGBREAK"),
    ("signal", "CTRL_BREAK_EVENT"),
    ("ctypes", "windll"),
    ("ctypes", "WinDLL"),
    ("subprocess", "CREATE_NEW_PROCESS_GROUP"),
}
_PLATFORM_MODULES = {"fcntl", "termios", "msvcrt", "winreg", "_winapi", "pty", "tty", "resource"}


def test_nothing_platform_specific_outside_the_platform_package():
    problems = []
    for path in SRC.rglob("*.py"):
        if _top(path) == "_platform":
            continue
        where = path.relative_to(SRC)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if (node.value.id, node.attr) in _PLATFORM_ATTRS or node.attr == "add_signal_handler":
                    problems.append(f"{where}:{node.lineno}: {node.value.id}.{node.attr}")
            elif isinstance(node, ast.keyword) and node.arg in ("start_new_session", "creationflags", "preexec_fn"):
                problems.append(f"{where}:{node.lineno}: {node.arg}=")
            elif isinstance(node, ast.Import):
                problems += [
                    f"{where}:{node.lineno}: import {a.name}" for a in node.names if a.name in _PLATFORM_MODULES
                ]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in _PLATFORM_MODULES:
                problems.append(f"{where}:{node.lineno}: from {node.module} import")
    assert not problems, "use mcpio._platform instead:\n" + "\n".join(problems)


def test_modules_stay_small():
    # The budget is for hand-written code: generated modules (first line "# Generated by ...")
    # are exempt; tests/unit/test_types.py keeps them in step with their generator.
    big = [
        f"{p.relative_to(SRC)}: {n}"
        for p in SRC.rglob("*.py")
        if (n := len(lines := p.read_text().splitlines())) > 600 and not lines[0].startswith("# Generated by ")
    ]
    assert not big, big


def test_no_shell_true_in_the_package():
    hits = [str(p) for p in SRC.rglob("*.py") if "shell=True" in p.read_text()]
    assert not hits


def test_public_api_is_sorted_complete_and_importable():
    import mcpio

    assert mcpio.__all__ == sorted(mcpio.__all__)
    for name in mcpio.__all__:
        obj = getattr(mcpio, name)
        if name != "__version__":
            assert getattr(obj, "__module__", "mcpio") == "mcpio", name


@pytest.mark.parametrize("stmt", ["import mcpio", "from mcpio import Server, Context, Image"])
def test_import_does_not_load_http_cli_or_pydantic(stmt):
    code = f"{stmt}; import sys, json; print(json.dumps(sorted(sys.modules)))"
    mods = json.loads(
        subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
        ).stdout
    )
    forbidden = [
        m
        for m in mods
        if m.split(".")[0]
        in {
            "httpx",
            "uvicorn",
            "starlette",
            "pydantic",
            "argparse",
            "mcp",
            "anyio",
            "h11",
            "jwt",
            "cryptography",
            "redis",
            "hypercorn",
            "h2",
            "hpack",
            "opentelemetry",
        }
        or m.startswith(
            (
                "mcpio.cli",
                "mcpio._cli",
                "mcpio._http",
                "mcpio._transports._http",
                "mcpio._auth",
                "mcpio.auth",
                "mcpio._inspect",
                "mcpio._server._workers",  # --workers: the supervisor (multiprocessing) only when asked
                "mcpio._transports._uvicorn",
                "mcpio._transports._hypercorn",
                "mcpio._server._replicas",
                "mcpio._otel._",
            )
        )
    ]
    assert not forbidden, forbidden


def test_scoped_items_and_the_stdio_path_load_nothing_of_auth():
    code = (
        "import sys, json; from mcpio import Server; s = Server('x')\n"
        "@s.tool(scopes=['a'])\ndef t() -> str: return 'x'\n"
        "from mcpio._transports import _stdio\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    mods = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert not [m for m in mods if m.split(".")[0] in {"jwt", "cryptography", "httpx"} or "auth" in m], mods


def test_the_state_seam_imports_redis_only_for_a_redis_state():
    code = (
        "import sys, mcpio._state as st; st.MemoryState(); "
        "before = 'redis' in sys.modules or 'mcpio._state._redis_sessions' in sys.modules; "
        "st.RedisState; print(before, 'redis' in sys.modules, 'mcpio._state._redis_sessions' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True", "True"]


def test_shared_tasks_load_only_with_a_redis_state():
    """Tasks on the state backend (_state._redis_tasks) load with a RedisState only: a server with
    task tools on MemoryState keeps its in-memory TaskStore and imports nothing more."""
    code = (
        "import sys; from mcpio import Server; from mcpio._state import MemoryState; s = Server('x')\n"
        "@s.tool(task_support='optional')\ndef t() -> str: return 'x'\n"
        "s.http_app(state=MemoryState()); print(s.tasks.shared is None, 'mcpio._state._redis_tasks' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "False"]


def test_the_oauth_proxy_loads_its_crypto_only_when_built():
    """``import mcpio.auth`` (which names OAuthProxy) loads no JOSE, crypto or HTTP client; the
    proxy imports them when constructed, and never the CLI."""
    code = "import sys, json, mcpio.auth; print(json.dumps(sorted(sys.modules)))"
    mods = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert not [
        m
        for m in mods
        if m.split(".")[0] in {"jwt", "cryptography", "httpx", "uvicorn"} or m.startswith(("mcpio._cli", "mcpio.cli"))
    ], mods


# Server's private state is read in _server/_server.py only (issue #33: no hub others reach
# into): another module reaches it through ``server.registry``, ``server.changes`` and the other
# public attributes. A reach is ``X._name`` outside that module, ``_name`` a private member of
# Server (of its class, its bases or an instance), and X ``self`` in one of Server's bases (its
# mixins) or an expression naming a server (``server``, ``ctx.server``, ``self.owner`` …). A
# subclass overriding a hook (``_on_request``) and calling ``super()``'s is not a reach.
_SERVERISH = ("server", "srv", "owner", "child", "parent")


def _server_private_names() -> tuple[set[str], set[tuple[str, str]]]:
    from mcpio import Server

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    mine = [k for k in Server.__mro__ if k.__module__.startswith("mcpio.")]
    names = {n for k in mine for n in vars(k) if private(n)} | {n for n in vars(Server("probe")) if private(n)}
    bases = {(k.__module__, k.__qualname__) for k in mine if k is not Server}
    return names, bases


def server_private_reaches(sources: dict[str, str]) -> list[str]:
    """``where:line: text`` of every reach into Server's private state in ``sources``
    (module name -> source text), but for mcpio._server._server itself."""
    names, bases = _server_private_names()
    found: list[tuple[str, int, str]] = []
    for module, text in sources.items():
        if module == "mcpio._server._server":
            continue
        tree = ast.parse(text)
        mixins = {id(n) for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and (module, n.name) in bases}
        in_mixin: set[int] = set()
        for node in ast.walk(tree):
            if id(node) in mixins:
                in_mixin |= {id(n) for n in ast.walk(node)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in names:
                continue
            value = node.value
            words = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
            words |= {n.attr for n in ast.walk(value) if isinstance(n, ast.Attribute)}
            selfish = isinstance(value, ast.Name) and value.id == "self" and id(node) in in_mixin
            if selfish or words & set(_SERVERISH):
                found.append((module, node.lineno, ast.unparse(node)))
    return [f"{m}:{line}: {text}" for m, line, text in sorted(found)]


def _package_sources() -> dict[str, str]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path.read_text()
    return out


def test_server_private_state_is_read_in_its_own_module_only():
    reaches = server_private_reaches(_package_sources())
    assert not reaches, "reach it through server.registry, server.changes or a public method:\n" + "\n".join(reaches)


def test_a_reintroduced_private_reach_is_found():
    sources = {
        "mcpio._server._changes": "class ChangesMixin:\n    def f(self):\n        return self._binding\n",
        "mcpio._server._context": "def g(ctx):\n    return (ctx.owner or ctx.server)._lifespan_values\n",
        "mcpio._server._server": "class Server:\n    def h(self):\n        return self._binding\n",
        "mcpio._gateway._config": "class G:\n    async def _on_request(self, s, ev):\n        return await super()._on_request(s, ev)\n",
    }
    assert server_private_reaches(sources) == [
        "mcpio._server._changes:3: self._binding",
        "mcpio._server._context:2: (ctx.owner or ctx.server)._lifespan_values",
    ]
