"""No import cycle among mcpio's modules at run time.

The graph: an edge from module A to module B when importing A executes an import of B — an
``import``/``from … import`` in A's module body or a class body (inside ``try``, ``if``, ``with``
too), but not in a function (run later, when every module is loaded) nor under
``if TYPE_CHECKING:`` (never run). Importing ``a.b.c`` runs ``a`` and ``a.b`` first, so those are
edges too, except towards A's own packages (already being imported when A runs) unless A
imports a name they define (``from . import NAME``). A cycle in this graph is an order in which
some module sees another half-initialised; there is none, and this keeps it so."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "mcpio"


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _run_time_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return found


def _targets(name: str, is_package: bool, node: ast.Import | ast.ImportFrom, modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = name.split(".") if is_package else name.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    submodules = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in modules]
    return submodules + ([module] if len(submodules) < len(node.names) else [])  # a name module defines


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same tree its import runs (see the module docstring)."""
    modules = _modules(root)
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        out: set[str] = set()
        for node in _run_time_imports(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(name, path.name == "__init__.py", node, modules):
                parts = target.split(".")
                for i in range(1, len(parts) + 1):
                    step = ".".join(parts[:i])
                    own_package = name.startswith(step + ".")
                    if step in modules and step != name and (i == len(parts) or not own_package):
                        out.add(step)
        edges[name] = out
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_mcpio_has_no_import_cycle_at_run_time() -> None:
    edges = import_graph(SRC)
    # the graph is the real one: the engine imports the sans-IO connection at import time
    assert "mcpio._protocol._connection" in edges["mcpio._session"]
    assert cycles(edges) == []


def test_a_cycle_is_found(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from ._a import A\n")
    (pkg / "_a.py").write_text("from ._b import B\nA = 1\n")
    (pkg / "_b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._c import C\n"
        "def later():\n    from ._c import C\nfrom . import _c\nB = 2\n"
    )
    (pkg / "_c.py").write_text("from ._a import A\n")  # _a -> _b -> _c -> _a
    (pkg / "_d.py").write_text("from . import _a\n")  # its own package: no edge back to pkg
    edges = import_graph(pkg)
    assert cycles(edges) == [["pkg._a", "pkg._b", "pkg._c"]]
    assert edges["pkg._d"] == {"pkg._a"}
    (pkg / "_b.py").write_text("def later():\n    from ._c import C\nB = 2\n")  # only when called
    assert cycles(import_graph(pkg)) == []
