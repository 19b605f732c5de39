"""Output for the command line: aligned tables for people, JSON for programs, errors on stderr.

Everything a server sends is untrusted: a tool name, a description, a result, an error message
or a log line could carry terminal escapes (clear the screen, forge lines, retitle the window,
set the clipboard with OSC 52). :func:`clean` is the one place that removes them; every
function here that prints (``out``, ``err``, ``error``, ``table``, ``content_text`` …) passes
text through it, so no printing path can forget. JSON output escapes control characters
itself (:func:`to_json`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import unicodedata
from collections.abc import Sequence
from typing import Any

# ESC-introduced sequences (CSI, OSC, DCS/SOS/PM/APC strings, two-byte escapes), their 8-bit C1
# forms, then any remaining C0/C1 control or DEL. Strings end at BEL, ST (ESC \ or 0x9c), or at
# the end of the text (an unterminated OSC would otherwise swallow what follows on a terminal).
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"  # CSI ... final
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC/DCS/SOS/PM/APC
    r"|\x1b[ -/]*[0-~]?"  # other ESC sequences
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONTROLS_NO_NL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_BIDI = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"), None)


def clean(text: Any, *, multiline: bool = True) -> str:
    """``text`` without terminal escapes and control characters (newline and tab kept when
    ``multiline``; a carriage return never, since it rewrites the line already shown)."""
    s = str(text if text is not None else "")
    if s.isascii() and s.isprintable():
        return s
    s = _ESCAPES.sub("", s)
    s = (_CONTROLS if multiline else _CONTROLS_NO_NL).sub("", s.replace("\r\n", "\n") if multiline else s)
    s = s.translate(_BIDI)  # bidirectional overrides: text that reads differently from what it is
    return "".join(c for c in s if unicodedata.category(c) != "Cs")


def is_terminal() -> bool:
    return sys.stdout.isatty()


def width() -> int:
    """The columns tables must fit: ``$COLUMNS`` when set, else the terminal's width when stdout
    is one, else no limit (a pipe or a file gets whole lines)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size((100, 24)).columns if is_terminal() else 10_000


_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def to_json(obj: Any, indent: int | None = 2) -> str:
    """``obj`` as JSON that is safe on a terminal: ``json.dumps`` escapes C0 controls; DEL, the
    C1 controls (an 8-bit CSI is 0x9b) and bidirectional overrides are escaped here too (they
    can only occur inside strings, where ``\\uXXXX`` means the same)."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False)
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dump_json(obj: Any) -> None:
    sys.stdout.write(to_json(obj) + "\n")


def out(text: Any = "") -> None:
    """A line (or several) on stdout, cleaned."""
    s = clean(text)
    sys.stdout.write(s + ("" if s.endswith("\n") else "\n"))


def err(text: Any) -> None:
    """A line (or several) on stderr, cleaned."""
    s = clean(text)
    sys.stderr.write(s + ("" if s.endswith("\n") else "\n"))
    sys.stderr.flush()


def error(message: str, hint: str | None = None) -> None:
    """``mcpio: error: MESSAGE`` on stderr (and the hint on the next line)."""
    err(f"mcpio: error: {message}" + (f"\n  {hint}" if hint else ""))


def one_line(text: Any) -> str:
    return " ".join(clean(text).split())


def _cut(text: str, w: int) -> str:
    return text if len(text) <= w else text[: max(w - 1, 0)] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], total: int | None = None) -> str:
    """Columns aligned, cells cleaned and on one line. The table fits ``total`` columns (the
    terminal's width when stdout is one): the widest columns are narrowed to one common cap, each keeping
    at least its header's width (or 8), and cut cells end with …."""
    cells = [[one_line(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    limit = width() if total is None else total
    floor = [min(w, max(len(h), 8)) for w, h in zip(widths, headers, strict=True)]
    room = limit - 2 * (len(widths) - 1)
    if widths and sum(widths) > room:  # one cap for every column, the largest that fits
        cap = max(widths)
        while cap > 1 and sum(max(min(w, cap), f) for w, f in zip(widths, floor, strict=True)) > room:
            cap -= 1
        widths = [max(min(w, cap), f) for w, f in zip(widths, floor, strict=True)]
    lines = []
    for row in [list(headers), ["-" * min(len(h), widths[i]) for i, h in enumerate(headers)], *cells]:
        parts = []
        for i, c in enumerate(row):
            c = _cut(c, widths[i])
            parts.append(c.ljust(widths[i]) if i < len(row) - 1 else c)
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def content_text(block: dict[str, Any]) -> str:
    """One content block (tool result, prompt message) as text for a person (cleaned)."""
    kind = block.get("type")
    if kind == "text":
        return clean(block.get("text", ""))
    if kind in ("image", "audio"):
        data = block.get("data") or ""
        return clean(f"[{kind} {block.get('mimeType', '?')}, {len(data) * 3 // 4} bytes]")
    if kind == "resource_link":
        return clean(f"[resource link {block.get('uri')}" + (f" ({block['name']})" if block.get("name") else "") + "]")
    if kind == "resource":
        return resource_text(block.get("resource") or {})
    return to_json(block, indent=None)


def resource_text(contents: dict[str, Any]) -> str:
    if "text" in contents:
        return clean(contents["text"])
    blob = contents.get("blob") or ""
    return clean(f"[blob {contents.get('uri', '')} {contents.get('mimeType', '?')}, {len(blob) * 3 // 4} bytes]")
