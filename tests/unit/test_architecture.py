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
    "_version": 0, "_errors": 0, "_jsonrpc": 0, "_versions": 0, "_schema": 0, "_schema_types": 0,
    "_docstrings": 0, "_uritemplate": 0, "_content": 0, "_types": 0, "_safepath": 0,
    "_protocol": 1,
    "_transports": 2,
    "_session": 3,
    "_server": 4, "_client": 4, "_host": 4,
    "cli": 5, "_cli": 5, "__main__": 5,
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
                problems.append(f"{path.relative_to(SRC)}:{line} (layer {LAYERS[top]}) imports {imported} (layer {LAYERS[imported]})")
            if (top, imported) in SIBLINGS_APART:
                problems.append(f"{path.relative_to(SRC)}:{line}: {top} must not import {imported}")
    assert not problems, "\n".join(problems)


def test_modules_stay_small():
    big = [f"{p.relative_to(SRC)}: {n}" for p in SRC.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600]
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
    mods = json.loads(subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True).stdout)
    forbidden = [m for m in mods if m.split(".")[0] in {"httpx", "uvicorn", "starlette", "pydantic", "argparse", "mcp", "anyio", "h11"}
                 or m.startswith(("mcpio.cli", "mcpio._cli", "mcpio._http", "mcpio._transports._http"))]
    assert not forbidden, forbidden
