"""Output for the command line: aligned tables for people, JSON for programs, errors on stderr."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Sequence
from typing import Any


def is_terminal() -> bool:
    return sys.stdout.isatty()


def width() -> int:
    return shutil.get_terminal_size((100, 24)).columns if is_terminal() else 10_000


def dump_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def error(message: str) -> None:
    sys.stderr.write(f"mcpio: error: {message}\n")


def one_line(text: Any) -> str:
    return " ".join(str(text or "").split())


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns aligned; on a terminal the last column is cut to fit the screen."""
    cells = [[one_line(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    room = width() - sum(w + 2 for w in widths[:-1])
    if widths and room >= 10:
        widths[-1] = min(widths[-1], room)
    lines = []
    for row in [list(headers), ["-" * len(h) for h in headers], *cells]:
        parts = []
        for i, c in enumerate(row):
            w = widths[i]
            if len(c) > w:
                c = c[: max(w - 1, 0)] + "…"
            parts.append(c.ljust(w) if i < len(row) - 1 else c)
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def content_text(block: dict[str, Any]) -> str:
    """One content block (tool result, prompt message) as text for a person."""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        data = block.get("data") or ""
        return f"[{kind} {block.get('mimeType', '?')}, {len(data) * 3 // 4} bytes]"
    if kind == "resource_link":
        return f"[resource link {block.get('uri')}" + (f" ({block['name']})" if block.get("name") else "") + "]"
    if kind == "resource":
        return resource_text(block.get("resource") or {})
    return json.dumps(block, ensure_ascii=False)


def resource_text(contents: dict[str, Any]) -> str:
    if "text" in contents:
        return str(contents["text"])
    blob = contents.get("blob") or ""
    return f"[blob {contents.get('uri', '')} {contents.get('mimeType', '?')}, {len(blob) * 3 // 4} bytes]"
