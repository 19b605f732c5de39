"""Docstring parsing: split a function's docstring into its description and per-parameter text.

Contract: ``parse_docstring(doc)`` returns ``(description, params)``. ``description`` is the
cleaned docstring (``inspect.cleandoc``) with the parameter sections removed, or None when
nothing is left; every other section (Returns, Raises, Examples, ...) stays. ``params`` maps a
parameter name (stars stripped) to its description, continuation lines joined with spaces.

Three styles are understood, and may not be mixed within one section:

- Google: an ``Args:`` / ``Arguments:`` / ``Parameters:`` / ``Params:`` / ``Keyword Args:``
  header, then indented ``name (type): text`` or ``name: text`` entries;
- NumPy: a ``Parameters`` (or ``Other Parameters``) header underlined with dashes, then
  ``name : type`` entries with indented text;
- Sphinx: ``:param name: text`` / ``:param type name: text`` fields (``:type name:`` fields
  are dropped).

Pure functions, no imports beyond the standard library.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["parse_docstring"]

# Patterns as strings, compiled by ``re`` (and cached there) on first use: most docstrings have no
# parameter section, and a server's start-up should not compile them all (cold start).
_GOOGLE_HEADER = r"(?i)^(?P<indent>\s*)(?:args|arguments|parameters|params|keyword args|keyword arguments|kwargs|other parameters)\s*:\s*$"
_GOOGLE_ENTRY = r"^\*{0,2}(?P<name>\w+)\s*(?:\([^)]*\))?\s*:(?:\s+(?P<text>.*))?$"
_NUMPY_HEADER = r"(?i)^\s*(?:parameters|other parameters|arguments|keyword arguments)\s*$"
_NUMPY_RULE = r"^\s*-{3,}\s*$"
_NUMPY_ENTRY = r"^(?P<names>\*{0,2}\w+(?:\s*,\s*\*{0,2}\w+)*)\s*(?::.*)?$"
_SPHINX_PARAM = r"^(?P<indent>\s*):(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*?\s)?\*{0,2}(?P<name>\w+)\s*:\s*(?P<text>.*)$"
_SPHINX_TYPE = r"^(?P<indent>\s*):(?:type|vartype)\s+\w+\s*:"
_SPHINX_FIELD = r"^\s*:\w"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(parts: list[str]) -> str:
    return " ".join(p.strip() for p in parts if p.strip())


def parse_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """Split ``doc`` into (description without parameter sections, {param: description})."""
    if not doc or not doc.strip():
        return None, {}
    import inspect  # not at start-up: a description is made on first read, after asyncio loaded it

    lines = inspect.cleandoc(doc).splitlines()
    kept: list[str] = []
    params: dict[str, str] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        # A section header ends with a colon (Google), starts with one (Sphinx) or has a rule
        # under it (NumPy): other lines are prose, kept without trying the patterns (a colon
        # inside a sentence is common; compiling and trying four patterns on it cost a
        # 200-tool start ~50k instructions a tool).
        bare = line.strip()
        if bare.endswith(":") or bare.startswith(":") or (i + 1 < len(lines) and "---" in lines[i + 1]):
            m = re.match(_GOOGLE_HEADER, line)
            if m:
                i = _google(lines, i + 1, len(m.group("indent")), params)
                continue
            if re.match(_NUMPY_HEADER, line) and i + 1 < len(lines) and re.match(_NUMPY_RULE, lines[i + 1]):
                i = _numpy(lines, i + 2, params)
                continue
            m = re.match(_SPHINX_PARAM, line)
            if m or re.match(_SPHINX_TYPE, line):
                i = _sphinx(lines, i, params)
                continue
        kept.append(line)
        i += 1
    text = "\n".join(kept)
    if any(not a.strip() and not b.strip() for a, b in itertools.pairwise(kept)):  # what the pattern needs
        text = re.sub(r"\n\s*\n(\s*\n)+", "\n\n", text)  # runs of blank lines -> one
    text = text.strip()
    return (text or None), params


def _google(lines: list[str], i: int, header_indent: int, params: dict[str, str]) -> int:
    """Consume a Google-style section starting at line ``i``; return the next line index."""
    entry_indent: int | None = None
    name: str | None = None
    parts: list[str] = []
    while i < len(lines):
        line = lines[i]
        if line.strip():
            ind = _indent(line)
            if ind <= header_indent:
                break
            if entry_indent is None:
                entry_indent = ind
            m = re.match(_GOOGLE_ENTRY, line.strip()) if ind <= entry_indent else None
            if m:
                if name is not None:
                    params[name] = _join(parts)
                name, parts = m.group("name"), [m.group("text") or ""]
            elif ind < entry_indent:
                break
            else:
                parts.append(line)
        i += 1
    if name is not None:
        params[name] = _join(parts)
    return i


def _numpy(lines: list[str], i: int, params: dict[str, str]) -> int:
    """Consume a NumPy-style section body starting at line ``i``; return the next line index."""
    names: list[str] = []
    parts: list[str] = []

    def flush() -> None:
        for n in names:
            params[n] = _join(parts)

    while i < len(lines):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and re.match(_NUMPY_RULE, lines[i + 1]):
            break  # the next section's header
        if line.strip():
            if _indent(line) == 0:
                m = re.match(_NUMPY_ENTRY, line.strip())
                if not m:
                    break
                flush()
                names = [n.strip().lstrip("*") for n in m.group("names").split(",")]
                parts = []
            else:
                parts.append(line)
        i += 1
    flush()
    return i


def _sphinx(lines: list[str], i: int, params: dict[str, str]) -> int:
    """Consume one Sphinx ``:param:`` or ``:type:`` field (with continuation lines)."""
    line = lines[i]
    m = re.match(_SPHINX_PARAM, line)
    base = _indent(line)
    parts = [m.group("text")] if m else []
    i += 1
    while i < len(lines) and lines[i].strip() and _indent(lines[i]) > base and not re.match(_SPHINX_FIELD, lines[i]):
        parts.append(lines[i])
        i += 1
    if m:
        params[m.group("name")] = _join(parts)
    return i
