"""RFC 6570 URI templates: expansion and matching, for resource templates (no I/O).

Supported expressions (levels 1–3 plus the explode modifier on path operators):
``{var}`` simple (one segment: never matches ``/``), ``{+var}`` reserved (may contain
``/``, for paths), ``{#var}`` fragment, ``{.var}``, ``{/var}`` / ``{/var*}`` path segments,
``{;var}``, and the query forms ``{?a,b}`` / ``{&c}``. Variable lists (``{x,y}``) split on commas.

:meth:`UriTemplate.match` returns the decoded variables of a concrete URI, or None.

**Path safety** (``../`` in a variable is a way out of a folder): values are percent-decoded,
so ``doc://..%2F..%2Fetc%2Fpasswd`` would hand ``../../etc/passwd`` to a handler that joins it
to a folder. ``match`` therefore refuses (returns None, "no match") a decoded value that

* contains a NUL byte or a backslash, or starts with a drive letter (``C:``);
* for a one-segment variable (``{var}``, ``{.var}``, ``{;var}``, ``{/var}``, queries):
  contains ``/`` or is ``.`` or ``..``;
* for a multi-segment variable (``{+var}``, ``{#var}``, ``{/var*}``, which exist to carry
  ``/``): starts with ``/`` (absolute) or has a ``..`` segment;

unless the variable is named in ``paths`` — a parameter declared as a path
(``Annotated[str, mcpio.PathParam]``), whose value is passed as is (NUL bytes aside) for the
handler to confine, e.g. with :class:`mcpio.SafePath`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Final

# urllib.parse (and ipaddress with it) is imported where a URI is matched or expanded, not when
# a template is registered: a stdio server's start-up should not pay for it.

_EXPR = r"\{([^{}]*)\}"  # compiled by re on first use, not at start-up
_OPERATORS: Final = "+#./;?&"
_UNRESERVED_SAFE = "-._~"
_RESERVED_SAFE = ":/?#[]@!$&'()*+,;=" + _UNRESERVED_SAFE


class UriTemplateError(ValueError):
    """The template is malformed; the message says where."""


class _Var:
    __slots__ = ("explode", "name", "prefix")

    def __init__(self, spec: str) -> None:
        self.explode = spec.endswith("*")
        spec = spec.rstrip("*")
        self.prefix: int | None = None
        if ":" in spec:
            spec, n = spec.split(":", 1)
            self.prefix = int(n)
        if not re.fullmatch(r"[A-Za-z0-9_.%]+", spec):
            raise UriTemplateError(f"invalid variable name {spec!r}")
        self.name = spec


class UriTemplate:
    """A parsed RFC 6570 template. ``variables`` lists the names in order of appearance."""

    def __init__(self, template: str) -> None:
        self.template = template
        self._parts: list[str | tuple[str, list[_Var]]] = []
        pos = 0
        for m in re.finditer(_EXPR, template):
            if m.start() > pos:
                self._parts.append(template[pos : m.start()])
            body = m.group(1)
            op = body[0] if body and body[0] in _OPERATORS else ""
            names = body[len(op) :]
            if not names:
                raise UriTemplateError(f"empty expression at offset {m.start()} in {template!r}")
            self._parts.append((op, [_Var(v) for v in names.split(",")]))
            pos = m.end()
        if pos < len(template):
            self._parts.append(template[pos:])
        if "{" in "".join(p for p in self._parts if isinstance(p, str)) or "}" in "".join(
            p for p in self._parts if isinstance(p, str)
        ):
            raise UriTemplateError(f"unbalanced braces in {template!r}")
        self.variables: list[str] = [v.name for p in self._parts if isinstance(p, tuple) for v in p[1]]
        # Variables that exist to carry "/": reserved and fragment expansion, exploded path segments.
        self._multi_segment = frozenset(
            v.name
            for p in self._parts
            if isinstance(p, tuple)
            for v in p[1]
            if p[0] in ("+", "#") or (p[0] == "/" and v.explode)
        )
        self._query_vars = [v.name for p in self._parts if isinstance(p, tuple) and p[0] in ("?", "&") for v in p[1]]
        self._regex = re.compile(self._build_regex())

    @property
    def is_template(self) -> bool:
        return bool(self.variables)

    def _build_regex(self) -> str:
        out = ["^"]
        for part in self._parts:
            if isinstance(part, str):
                out.append(re.escape(part))
                continue
            op, vars_ = part
            if op in ("?", "&"):
                if "(?P<__query>" not in "".join(out):
                    out.append(r"(?P<__query>(?:[?&][^#]*)?)")
                continue
            seps = {"": ",", "+": ",", "#": ",", ".": r"\.", "/": "/", ";": ";"}[op]
            lead = {"": "", "+": "", "#": "#", ".": r"\.", "/": "/", ";": ";"}[op]
            if op in ("", "."):
                charset = r"[^/?#.,]*" if op == "." else r"[^/?#,]*"
            elif op == "/":
                charset = r"[^/?#]*"
            else:
                charset = r"[^?#]*" if op == "+" else r".*"
            groups = []
            for v in vars_:
                g = f"(?P<{_group(v.name)}>{charset if not v.explode else '.*'})"
                if op == ";":
                    g = re.escape(v.name) + "=?" + g
                groups.append(g)
            out.append(lead + seps.join(groups))
        out.append("$")
        return "".join(out)

    def match(self, uri: str, paths: Collection[str] = ()) -> dict[str, str] | None:
        """Variables of ``uri`` if it matches this template, percent-decoded; else None.

        None also when a value is refused by the path-safety rules of the module docstring;
        variables named in ``paths`` are exempt (NUL bytes aside).
        """
        m = self._regex.match(uri)
        if m is None:
            return None
        from urllib.parse import parse_qsl, unquote

        result: dict[str, str] = {}
        for name in self.variables:
            if name in self._query_vars:
                continue
            value = m.group(_group(name))
            if value is None:
                continue
            result[name] = unquote(value)
        if self._query_vars:
            query = m.group("__query") or ""
            pairs = dict(parse_qsl(query[1:], keep_blank_values=True)) if query else {}
            for name in self._query_vars:
                if name in pairs:
                    result[name] = pairs[name]
        for name, value in result.items():
            if value == "" and name not in self._query_vars:
                return None  # a template variable must match something
            if path_refusal(value, name in self._multi_segment, name in paths) is not None:
                return None
        return result

    def expand(self, **values: object) -> str:
        """Fill in the template (RFC 6570 §3.2); missing variables expand to nothing."""
        from urllib.parse import quote

        out: list[str] = []
        for part in self._parts:
            if isinstance(part, str):
                out.append(part)
                continue
            op, vars_ = part
            safe = _RESERVED_SAFE if op in ("+", "#") else _UNRESERVED_SAFE
            items = []
            for v in vars_:
                if values.get(v.name) is None:
                    continue
                raw = str(values[v.name])
                if v.prefix is not None:
                    raw = raw[: v.prefix]
                enc = quote(raw, safe=safe)
                if op in (";", "?", "&"):
                    enc = f"{v.name}={enc}" if (enc or op != ";") else v.name
                items.append(enc)
            if not items:
                continue
            first = {"": "", "+": "", "#": "#", ".": ".", "/": "/", ";": ";", "?": "?", "&": "&"}[op]
            sep = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/", ";": ";", "?": "&", "&": "&"}[op]
            out.append(first + sep.join(items))
        return "".join(out)

    def __repr__(self) -> str:
        return f"UriTemplate({self.template!r})"


_DRIVE = r"^[A-Za-z]:"


def path_refusal(value: str, multi_segment: bool = False, is_path: bool = False) -> str | None:
    """Why ``value`` may not be a template variable (see the module docstring), or None."""
    if "\0" in value:
        return "a NUL byte"
    if is_path:
        return None
    if "\\" in value:
        return "a backslash"
    if re.match(_DRIVE, value):
        return "a drive letter"
    if not multi_segment:
        if "/" in value:
            return "a path separator"
        if value in (".", ".."):
            return f"{value!r}"
        return None
    if value.startswith("/"):
        return "an absolute path"
    if ".." in value.split("/"):
        return "a '..' segment"
    return None


def _group(name: str) -> str:
    return "v_" + re.sub(r"[^A-Za-z0-9_]", "_", name)
