"""The skills extension's data rules (SEP-2640, ``io.modelcontextprotocol/skills``); no I/O.

A skill is a folder with a ``SKILL.md`` at its root that begins with YAML frontmatter (at least
``name`` and ``description``: the Agent Skills format). A server lists each skill as an *entry*
(SEP-2640 §skills/list)::

    {"uri": "skill://<skill-path>/SKILL.md", "frontmatter": {...},
     "resources": [{"uri": ..., "digest": "sha256:<64 hex>", "size": <bytes>}, ...]}

and serves every file through ``resources/read``. A host verifies what it reads against the
entry (§Integrity and verification): the byte length equals ``size``, the SHA-256 of the raw
bytes equals ``digest``, and the frontmatter of a fetched ``SKILL.md`` equals the entry's,
field by field; on any mismatch it MUST NOT use the content. This module holds those rules,
shared by the server (``_server/_skills``) and the client (``_client/_skills``).

The frontmatter parser reads the YAML subset skills use (block mappings and sequences, plain,
quoted and block scalars, flow sequences of scalars, comments) with the YAML 1.2 core schema
for plain scalars; anything else (anchors, tags, flow mappings) is a :class:`ValueError` that
names the line, so a skill never loads with a half-understood header.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Final

from ._versions import SKILLS_EXTENSION as SKILLS_EXTENSION  # defined there: the server announces it

SKILL_FILE: Final = "SKILL.md"
SKILL_SCHEME: Final = "skill://"
SKILL_MIME_TYPE: Final = "text/markdown"
# Agent Skills naming rule for the final <skill-path> segment (SEP-2640 §Skill URIs).
NAME_RE: Final = re.compile(r"^(?!.*--)[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")
DIGEST_RE: Final = re.compile(r"^sha256:[0-9a-f]{64}$")
MAX_RESOURCES: Final = 512  # SEP-2640 §Limits: SHOULD NOT serve more entries per skill
MAX_TOTAL_SIZE: Final = 16 * 1024 * 1024  # SEP-2640 §Limits: SHOULD NOT serve more bytes per skill

_DELIMITED = re.compile(r"^---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|$)", re.DOTALL | re.MULTILINE)


class SkillVerificationError(ValueError):
    """Content read for a skill does not match its entry (size, digest or frontmatter).

    The server's fault (or a tampered path between): the content must not be used
    (SEP-2640 §Integrity and verification). ``uri`` is the file that failed."""

    def __init__(self, uri: str, reason: str) -> None:
        super().__init__(f"skill file {uri} failed verification: {reason}; it was not used")
        self.uri = uri
        self.reason = reason


def digest(data: bytes) -> str:
    """``sha256:<64 lowercase hex>`` of the raw bytes (SEP-2640 §Digests)."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_dir(uri: str) -> str:
    """The skill's directory URI: its SKILL.md URI without ``/SKILL.md``."""
    return uri[: -len("/" + SKILL_FILE)] if uri.endswith("/" + SKILL_FILE) else uri.rsplit("/", 1)[0]


def skill_name(uri: str) -> str | None:
    """The final <skill-path> segment of a SKILL.md URI (the skill's name), or None."""
    path = uri.partition("://")[2].split("/")
    parts = [p for p in path if p]
    return parts[-2] if len(parts) >= 2 and parts[-1] == SKILL_FILE else None


def verify(uri: str, data: bytes, entry: dict[str, Any]) -> None:
    """Check ``data`` read from ``uri`` against the skill ``entry`` listing it.

    Raises :class:`SkillVerificationError` when the entry does not list ``uri`` (a host uses only
    listed files), when the size or digest differs, or, for the skill's SKILL.md, when its
    frontmatter differs from the entry's."""
    listed = entry.get("resources")
    if listed == "dynamic":
        item: dict[str, Any] | None = None  # no manifest: nothing to check the bytes against
    else:
        item = next((r for r in listed or () if isinstance(r, dict) and r.get("uri") == uri), None)
        if item is None:
            raise SkillVerificationError(uri, "the skill's entry does not list this file")
    if item is not None:
        if item.get("size") != len(data):
            raise SkillVerificationError(uri, f"{len(data)} bytes read, the entry says {item.get('size')!r}")
        if item.get("digest") != digest(data):
            raise SkillVerificationError(uri, f"digest {digest(data)} differs from the entry's {item.get('digest')!r}")
    if uri == entry.get("uri"):
        try:
            found = parse_frontmatter(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise SkillVerificationError(uri, f"its frontmatter cannot be read ({exc})") from None
        expected = entry.get("frontmatter")
        if not isinstance(expected, dict) or _canon(found) != _canon(expected):
            diff = sorted(
                k for k in set(found) | set(expected or {}) if _canon(found.get(k)) != _canon((expected or {}).get(k))
            )
            raise SkillVerificationError(
                uri, f"its frontmatter differs from the entry's in {', '.join(diff) or 'shape'}"
            )


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


# ---------------------------------------------------------------------- frontmatter (YAML subset)
def split_frontmatter(text: str) -> tuple[str, str] | None:
    """(frontmatter YAML, body) of a SKILL.md, or None when it has no leading ``---`` block."""
    text = text.removeprefix("\ufeff")
    m = _DELIMITED.match(text)
    return (m.group(1), text[m.end() :]) if m else None


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The frontmatter of a SKILL.md as a dict; :class:`ValueError` when absent or unreadable."""
    parts = split_frontmatter(text)
    if parts is None:
        raise ValueError("SKILL.md does not begin with a '---' delimited YAML frontmatter block")
    lines = [(i + 1, ln.rstrip("\r")) for i, ln in enumerate(parts[0].split("\n"))]
    lines = [(n, ln) for n, ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if not lines:
        return {}
    value, rest = _block(lines, _indent(lines[0][1]))
    if rest:
        raise ValueError(f"frontmatter line {rest[0][0]}: unexpected indentation")
    if not isinstance(value, dict):
        raise ValueError("frontmatter is not a mapping of keys to values")
    return value


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: list[tuple[int, str]], indent: int) -> tuple[Any, list[tuple[int, str]]]:
    """Parse the block at ``indent``; returns (value, the lines after it)."""
    if lines[0][1].lstrip().startswith("- ") or lines[0][1].strip() == "-":
        return _sequence(lines, indent)
    return _mapping(lines, indent)


def _mapping(lines: list[tuple[int, str]], indent: int) -> tuple[dict[str, Any], list[tuple[int, str]]]:
    out: dict[str, Any] = {}
    while lines and _indent(lines[0][1]) == indent:
        n, line = lines[0]
        key, sep, rest = _split_key(line.strip(), n)
        if not sep:
            raise ValueError(f"frontmatter line {n}: expected 'key: value'")
        out[key], lines = _value(rest, lines[1:], indent, n)
    if lines and _indent(lines[0][1]) > indent:
        raise ValueError(f"frontmatter line {lines[0][0]}: unexpected indentation")
    return out, lines


def _sequence(lines: list[tuple[int, str]], indent: int) -> tuple[list[Any], list[tuple[int, str]]]:
    out: list[Any] = []
    while lines and _indent(lines[0][1]) == indent and lines[0][1].lstrip().startswith("-"):
        n, line = lines[0]
        rest = line.strip()[1:].strip()
        if rest and ":" in rest and rest[0] not in "'\"[":  # "- key: value": a mapping item
            inner = " " * (indent + 2) + rest
            value, lines = _mapping([(n, inner), *lines[1:]], indent + 2)
            out.append(value)
            continue
        value, lines = _value(rest, lines[1:], indent, n)
        out.append(value)
    return out, lines


def _split_key(text: str, n: int) -> tuple[str, bool, str]:
    if text[:1] in "'\"":
        key, end = _quoted(text, n)
        rest = text[end:].lstrip()
        return key, rest.startswith(":"), rest[1:].strip()
    m = re.match(r"^([^:#]+?)\s*:(?:\s+|$)(.*)$", text)
    if m is None:
        return text, False, ""
    return m.group(1), True, m.group(2)


def _value(rest: str, lines: list[tuple[int, str]], indent: int, n: int) -> tuple[Any, list[tuple[int, str]]]:
    """The value after ``key:`` (or ``-``): inline scalar, block scalar or nested block."""
    rest = _strip_comment(rest)
    if rest[:1] in ("|", ">"):
        return _block_scalar(rest, lines, indent, n)
    if rest:
        return _scalar(rest, n), lines
    if lines and (
        _indent(lines[0][1]) > indent or (lines[0][1].lstrip().startswith("- ") and _indent(lines[0][1]) == indent)
    ):
        return _block(lines, _indent(lines[0][1]))
    return None, lines


def _block_scalar(head: str, lines: list[tuple[int, str]], indent: int, n: int) -> tuple[str, list[tuple[int, str]]]:
    body: list[str] = []
    while lines and _indent(lines[0][1]) > indent:
        body.append(lines[0][1])
        lines = lines[1:]
    if not body:
        return "", lines
    cut = min(_indent(b) for b in body)
    texts = [b[cut:] for b in body]
    text = "\n".join(texts) if head[0] == "|" else " ".join(texts)
    chomp = head[1:2]
    return (text if chomp == "-" else text + "\n"), lines


def _strip_comment(text: str) -> str:
    if text[:1] in "'\"":
        return text
    m = re.search(r"\s#", text)
    return (text[: m.start()] if m else text).strip()


def _quoted(text: str, n: int) -> tuple[str, int]:
    q = text[0]
    if q == "'":
        i, out = 1, []
        while i < len(text):
            if text[i] == "'":
                if text[i + 1 : i + 2] == "'":
                    out.append("'")
                    i += 2
                    continue
                return "".join(out), i + 1
            out.append(text[i])
            i += 1
    else:
        m = re.match(r'"((?:[^"\\]|\\.)*)"', text)
        if m:
            try:
                return json.loads('"' + m.group(1).replace("\\'", "'") + '"'), m.end()
            except ValueError:
                pass
    raise ValueError(f"frontmatter line {n}: unterminated or invalid quoted string")


_INT = re.compile(r"^[-+]?[0-9]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


def _scalar(text: str, n: int) -> Any:
    if text[:1] in "'\"":
        value, end = _quoted(text, n)
        if _strip_comment(text[end:]).strip():
            raise ValueError(f"frontmatter line {n}: text after a quoted string")
        return value
    if text.startswith("["):
        if not text.endswith("]"):
            raise ValueError(f"frontmatter line {n}: a flow sequence must close on its line")
        inner = text[1:-1].strip()
        return [_scalar(p.strip(), n) for p in _split_flow(inner, n)] if inner else []
    if text[:1] in "{&*!%@`":
        raise ValueError(f"frontmatter line {n}: unsupported YAML ({text[:1]!r}); use plain or quoted values")
    if text in ("null", "Null", "NULL", "~"):
        return None
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def _split_flow(inner: str, n: int) -> list[str]:
    parts: list[str] = []
    quote, start = "", 0
    for i, ch in enumerate(inner):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ",":
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    return [p for p in parts if p.strip()]
