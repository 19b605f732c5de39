#!/usr/bin/env python3
"""Generate mcpio's typed MCP wire shapes (msgspec Structs) from the official JSON Schemas.

    python tools/gen_types.py                 # rewrite tests/support/wire_types/_v<version>.py
    python tools/gen_types.py --check         # exit 1 if a committed module is stale
    python tools/gen_types.py --schema-dir DIR --out-dir DIR --verbose

The schemas are read from ``<schema-dir>/<version>/schema.json``; the default schema dir is
``$MCPIO_SHARED/mcp-schema``, else ``../shared/mcp-schema`` beside the repository root, else the
copy in ``schemas/mcp-schema`` (the same files).
Output is deterministic: the same schema always gives the same bytes (a unit test re-runs the
generator and compares with the committed modules).

Mapping rules, one per JSON Schema construct:

* object ``$defs`` entry (or inline object) with declared ``properties`` and no
  ``additionalProperties`` -> ``msgspec.Struct`` (kw_only, omit_defaults, frozen), fields in
  schema order with the required ones first; inline objects get a struct named
  ``<Parent><Property>`` (``Item`` for array items, ``Value`` for map values);
* a JSON key that is not a plain identifier -> a sanitised field name with the key kept via
  ``msgspec.field(name=...)`` (``_meta`` -> ``meta``, ``$schema`` -> ``schema``);
* optional property -> ``X | msgspec.UnsetType = msgspec.UNSET`` (absent stays absent; null is
  accepted only where the schema allows it, e.g. ``"type": ["integer", "null"]``);
* ``_meta`` properties and ``*MetaObject`` defs -> ``dict[str, Any]`` (they carry open-ended
  ``io.modelcontextprotocol/...`` and vendor keys);
* object with ``additionalProperties`` alongside declared properties (an open object), object
  without properties, ``additionalProperties: {}`` / ``true`` -> ``dict[str, Any]``; a schema
  for ``additionalProperties`` -> ``dict[str, X]``; properties that hold a JSON Schema
  document (``OPEN_PROPERTIES``) -> ``dict[str, Any]`` too, since a Struct would drop keywords;
* ``anyOf`` of several structs -> a msgspec tagged union when every member has a distinct
  required string ``const`` in one common property (content blocks by ``type``, requests and
  notifications by ``method``): that property becomes the struct's ``tag_field`` / ``tag``; any
  other union of objects falls back to ``dict[str, Any]`` (``Any`` if it mixes in non-objects)
  with a comment naming the union;
* ``allOf`` -> the members merged into one object (later properties override earlier ones);
* other ``const`` -> ``Literal[value]``; ``enum`` -> ``Literal[...]``; ``array`` ->
  ``list[X]``; ``integer`` -> int, ``number`` -> float, ``boolean`` -> bool, ``string`` -> str,
  ``null`` -> None, ``{}`` -> Any; minimum / maximum / minItems / maxItems -> ``msgspec.Meta``;
* a recursive alias (JSONValue <-> JSONObject) is cut with ``Any`` where it recurses;
* ``SCHEMA_PATCHES`` adds the few optional keys the official examples use but the schema omits;
* descriptions -> class docstrings / alias comments (first sentence of the first line).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import keyword
import os
import re
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERSIONS = ("2025-11-25", "2026-07-28")
ROOT = Path(__file__).resolve().parents[1]
OUT_DIR = ROOT / "tests" / "support" / "wire_types"
# Properties whose value is a JSON Schema document: open-ended by nature.
OPEN_PROPERTIES = frozenset({"inputSchema", "outputSchema"})
# Names the generated annotations use; no field may shadow them (msgspec resolves lazily).
RESERVED = frozenset({"Any", "Annotated", "Literal", "msgspec", "str", "int", "float", "bool", "list", "dict", "None"})
# Keys the official examples carry but the schema does not declare. JSON Schema objects are
# open, so the example is valid; a Struct would silently drop the key and break the round trip
# the tests demand. Each patch adds one optional property; keep this table tiny and explained.
SCHEMA_PATCHES: dict[str, dict[str, dict[str, Any]]] = {
    "2026-07-28": {
        # examples/ListRootsRequest/list-roots-request.json still shows the JSON-RPC id that
        # roots/list had before it became an embedded input request.
        "ListRootsRequest": {"id": {"$ref": "#/$defs/RequestId"}}
    }
}
WIDTH = 100
_MISSING = object()


def default_schema_dir() -> Path:
    """``$MCPIO_SHARED/mcp-schema``; else the shared/ folder beside the checkout, where the project's
    workspace keeps it; else the copy in this repository (``schemas/mcp-schema``, the same files), so
    that a clone anywhere runs the tests."""
    shared = os.environ.get("MCPIO_SHARED")
    if shared:
        return Path(shared) / "mcp-schema"
    beside = ROOT.parent / "shared" / "mcp-schema"
    return beside if beside.is_dir() else ROOT / "schemas" / "mcp-schema"


def module_name(version: str) -> str:
    return "_v" + version.replace("-", "_")


def _upper_first(s: str) -> str:
    s = re.sub(r"[^0-9A-Za-z]+(.)", lambda m: m.group(1).upper(), s.lstrip("_$"))
    return s[:1].upper() + s[1:]


def _identifier(key: str) -> str:
    name = re.sub(r"\W", "_", key.lstrip("_$")) or "field"
    if name[0].isdigit():
        name = "f_" + name
    return name + "_" if keyword.iskeyword(name) or name in RESERVED else name


def _literal(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def _summary(description: str | None, defs: dict[str, Any] | None = None) -> str:
    """The first sentence of the first paragraph, with TypeDoc ``{@link X}`` markup made plain."""
    paragraph = " ".join(re.split(r"\n\s*\n", (description or "").strip())[0].split())

    def link(m: re.Match[str]) -> str:
        target = m.group(1)  # "{@link CallToolRequest | tools/call}" arrives glued: "CallToolRequesttools/call"
        prefix = max((d for d in defs or () if target.startswith(d) and target != d), key=len, default="")
        return f"`{target[len(prefix) :] if prefix else target}`"

    text = re.sub(r"\{@link\s+([^}|\s]+)[^}]*\}", link, paragraph)
    return re.split(r"(?<=[a-z0-9`)][.!?])\s+(?=[A-Z])", text, maxsplit=1)[0]


@dataclass
class Field:
    key: str
    name: str
    annotation: str
    required: bool
    comment: list[str] = field(default_factory=list)


@dataclass
class Struct:
    name: str
    doc: str
    schema: dict[str, Any]
    fields: list[Field] = field(default_factory=list)


@dataclass
class Member:
    """One option of an ``anyOf``, classified the way msgspec sees union members."""

    kind: str  # "struct" (a $def struct), "object" (dict-like), "array", "scalar", "any"
    label: str  # for comments: the $def name or a JSON type
    ref: str | None = None
    schema: Any = None


class Generator:
    def __init__(self, version: str, raw: bytes) -> None:
        self.version = version
        self.sha256 = hashlib.sha256(raw).hexdigest()
        doc = json.loads(raw)
        self.defs: dict[str, Any] = doc["$defs"]
        self.patched: set[tuple[str, str]] = set()
        for name, props in SCHEMA_PATCHES.get(version, {}).items():
            for key, sub in props.items():
                assert key not in self.defs[name]["properties"], f"patch {name}.{key} is now in the schema: drop it"
                self.defs[name]["properties"][key] = sub
                self.patched.add((name, key))
        self.names = sorted(self.defs)
        self.merged: dict[str, dict[str, Any]] = {}
        self.tags: dict[str, tuple[str, str]] = {}  # struct name -> (tag_field, tag)
        self.structs: dict[str, Struct] = {}  # emitted structs (defs and inline), in order
        self.aliases: dict[str, str | None] = {}  # alias -> rendered expression (None: in progress)
        self.alias_order: list[str] = []
        self.alias_comments: dict[str, list[str]] = {}
        self.fallbacks: list[tuple[str, list[str]]] = []  # (where, union members)
        self.used: set[str] = set()

    # ---- schema shape --------------------------------------------------------------------
    def ref_name(self, schema: dict[str, Any]) -> str:
        ref = schema["$ref"]
        prefix = "#/$defs/"
        assert ref.startswith(prefix), ref
        return ref[len(prefix) :]

    def merge(self, schema: dict[str, Any]) -> dict[str, Any]:
        """Flatten ``allOf`` (resolving ``$ref`` members) into one object schema."""
        if "allOf" not in schema:
            return schema
        out: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
        for part in schema["allOf"]:
            part = self.merge(self.defs[self.ref_name(part)] if "$ref" in part else part)
            assert part.get("type", "object") == "object", part
            for key, sub in part.get("properties", {}).items():
                out["properties"][key] = {**out["properties"].get(key, {}), **sub}
            out["required"] += [r for r in part.get("required", []) if r not in out["required"]]
            if part.get("additionalProperties", False) is not False:
                out["additionalProperties"] = part["additionalProperties"]
            out.setdefault("description", part.get("description"))
        if schema.get("description"):
            out["description"] = schema["description"]
        return out

    def def_schema(self, name: str) -> dict[str, Any]:
        if name not in self.merged:
            self.merged[name] = self.merge(self.defs[name])
        return self.merged[name]

    def is_struct_object(self, schema: Any, key: str | None = None) -> bool:
        if not isinstance(schema, dict) or "$ref" in schema:
            return False
        schema = self.merge(schema)
        return (
            schema.get("type") == "object"
            and bool(schema.get("properties"))
            and schema.get("additionalProperties", False) is False
            and key not in OPEN_PROPERTIES
            and key != "_meta"
        )

    def is_struct_def(self, name: str) -> bool:
        return not name.endswith("MetaObject") and self.is_struct_object(self.def_schema(name))

    def members(self, options: list[Any]) -> list[Member]:
        """Flatten an ``anyOf`` (through $refs to union defs) into classified members."""
        out: list[Member] = []
        for opt in options:
            if opt is True or opt == {}:
                out.append(Member("any", "any"))
            elif "$ref" in opt:
                name = self.ref_name(opt)
                target = self.def_schema(name)
                if "anyOf" in target or "oneOf" in target:
                    out += self.members(target.get("anyOf") or target["oneOf"])
                elif self.is_struct_def(name):
                    out.append(Member("struct", name, ref=name, schema=target))
                else:
                    out.append(self.classify(target, label=name, schema=opt))
            elif "anyOf" in opt or "oneOf" in opt:
                out += self.members(opt.get("anyOf") or opt["oneOf"])
            else:
                out.append(self.classify(self.merge(opt), label=str(opt.get("type", "any")), schema=opt))
        return out

    def classify(self, target: dict[str, Any], label: str, schema: Any) -> Member:
        kind = target.get("type")
        if isinstance(kind, list) or kind in ("string", "integer", "number", "boolean", "null"):
            return Member("scalar", label, schema=schema)
        if "const" in target or "enum" in target:
            return Member("scalar", label, schema=schema)
        if kind == "array":
            return Member("array", label, schema=schema)
        if kind == "object" or "properties" in target:
            return Member("object", label, schema=schema)
        return Member("any", label, schema=schema)

    # ---- tagged unions -------------------------------------------------------------------
    def walk(self, schema: Any, seen: list[list[Any]]) -> None:
        if isinstance(schema, dict):
            if "anyOf" in schema or "oneOf" in schema:
                seen.append(schema.get("anyOf") or schema["oneOf"])
            for key, sub in schema.items():
                if key == "properties":
                    for prop in sub.values():
                        self.walk(prop, seen)
                elif key in ("items", "additionalProperties", "anyOf", "allOf", "oneOf"):
                    self.walk(sub, seen)
        elif isinstance(schema, list):
            for sub in schema:
                self.walk(sub, seen)

    def tag_candidate(self, structs: list[str]) -> str | None:
        common: set[str] | None = None
        for name in structs:
            schema = self.def_schema(name)
            consts = {
                key
                for key, sub in schema.get("properties", {}).items()
                if key in schema.get("required", []) and isinstance(sub.get("const"), str)
            }
            common = consts if common is None else common & consts
        for key in sorted(common or ()):
            values = [self.def_schema(n)["properties"][key]["const"] for n in structs]
            if len(set(values)) == len(values) and all(self.tags.get(n, (key,))[0] == key for n in structs):
                return key
        return None

    def assign_tags(self) -> None:
        unions: list[list[Any]] = []
        for name in self.names:
            self.walk(self.defs[name], unions)
        for options in unions:
            members = self.members(options)
            structs = list(dict.fromkeys(m.ref for m in members if m.kind == "struct"))
            if len(structs) < 2 or any(m.kind in ("object", "any") for m in members):
                continue
            key = self.tag_candidate(structs)
            if key is not None:
                for name in structs:
                    self.tags[name] = (key, self.def_schema(name)["properties"][key]["const"])

    # ---- annotations ---------------------------------------------------------------------
    def annotation(self, schema: Any, ctx: str, key: str | None = None) -> tuple[str, list[str]]:
        """The Python annotation for ``schema`` and any comment lines explaining a fallback."""
        if schema is True or schema == {} or set(schema) <= {"description"}:
            return "Any", []
        if "$ref" in schema:
            name = self.ref_name(schema)
            if not self.is_struct_def(name):
                return self.alias(name), []
            return name, []
        if "anyOf" in schema or "oneOf" in schema:
            return self.union(schema.get("anyOf") or schema["oneOf"], ctx)
        schema = self.merge(schema)
        if "const" in schema:
            return f"Literal[{_literal(schema['const'])}]", []
        if "enum" in schema:
            return "Literal[" + ", ".join(_literal(v) for v in schema["enum"]) + "]", []
        kind = schema.get("type")
        if isinstance(kind, list):
            return " | ".join(self.scalar(k, schema) for k in kind), []
        if kind == "object" or "properties" in schema:
            return self.object(schema, ctx, key)
        if kind == "array":
            item, comment = self.annotation(schema.get("items", {}), ctx + "Item")
            return self.constrained(f"list[{item}]", schema, min_length="minItems", max_length="maxItems"), comment
        if kind is None:
            return "Any", []
        return self.scalar(kind, schema), []

    def scalar(self, kind: str, schema: dict[str, Any]) -> str:
        base = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}[kind]
        if kind in ("integer", "number"):
            return self.constrained(
                base, schema, ge="minimum", le="maximum", gt="exclusiveMinimum", lt="exclusiveMaximum"
            )
        if kind == "string":
            return self.constrained(base, schema, min_length="minLength", max_length="maxLength", pattern="pattern")
        return base

    def constrained(self, base: str, schema: dict[str, Any], **keywords: str) -> str:
        args = [f"{arg}={schema[kw]!r}" for arg, kw in keywords.items() if kw in schema]
        return f"Annotated[{base}, msgspec.Meta({', '.join(args)})]" if args else base

    def object(self, schema: dict[str, Any], ctx: str, key: str | None) -> tuple[str, list[str]]:
        if self.is_struct_object(schema, key):
            return self.struct(ctx, schema), []
        extra = schema.get("additionalProperties", _MISSING)
        if schema.get("properties") or key in OPEN_PROPERTIES:
            return "dict[str, Any]", []
        if isinstance(extra, dict) and extra:
            value, comment = self.annotation(extra, ctx + "Value")
            return f"dict[str, {value}]", comment
        return "dict[str, Any]", []

    def union(self, options: list[Any], ctx: str) -> tuple[str, list[str]]:
        members = self.members(options)
        labels = list(dict.fromkeys(m.label for m in members))
        structs = list(dict.fromkeys(m.ref for m in members if m.kind == "struct"))
        objects = [m for m in members if m.kind == "object"]
        arrays = [m for m in members if m.kind == "array"]
        tagged = len(structs) < 2 or all(
            n in self.tags and self.tags[n][0] == self.tags[structs[0]][0] for n in structs
        )
        ok = (
            not any(m.kind == "any" for m in members)
            and tagged
            and len(structs) + len(objects) <= (len(structs) if len(structs) > 1 else 1)
            and len(arrays) <= 1
        )
        if not ok:
            fallback = "dict[str, Any]" if all(m.kind in ("struct", "object") for m in members) else "Any"
            self.fallbacks.append((ctx, labels))
            return fallback, [f"untagged union: {' | '.join(labels)}"]
        parts: list[str] = []
        for m in members:
            if m.kind == "struct":
                text = m.ref
            else:
                text, _ = self.annotation(m.schema, ctx)
            for piece in [text] if m.kind != "scalar" else text.split(" | "):
                if piece not in parts:
                    parts.append(piece)
        return " | ".join(parts), []

    # ---- definitions ---------------------------------------------------------------------
    def struct(self, name: str, schema: dict[str, Any], inline: bool = True) -> str:
        if inline:  # a synthesised <Parent><Property> name must be new
            assert name not in self.used and name not in RESERVED, f"name clash: {name}"
            self.used.add(name)
        schema = self.merge(schema)
        out = Struct(name, _summary(schema.get("description"), self.defs), schema)
        tag = self.tags.get(name)
        required = schema.get("required", [])
        keys = [k for k in schema["properties"] if k in required] + [
            k for k in schema["properties"] if k not in required
        ]
        names: set[str] = set()
        for key in keys:
            if tag and key == tag[0]:
                continue
            sub = schema["properties"][key]
            fname = _identifier(key)
            while fname in names:
                fname += "_"
            names.add(fname)
            ann, comment = self.annotation(sub, name + _upper_first(key), key)
            if (name, key) in self.patched:
                comment = ["not in the schema: the official example carries it (see SCHEMA_PATCHES)", *comment]
            out.fields.append(Field(key, fname, ann, key in required, comment))
        self.structs[name] = out
        return name

    def alias(self, name: str) -> str:
        """Render a non-struct $def as a module-level alias, after the aliases it uses."""
        if name in self.aliases:
            if self.aliases[name] is None:  # recursion: cut here with the open shape of the def
                kind = self.def_schema(name).get("type")
                return {"object": "dict[str, Any]", "array": "list[Any]"}.get(kind, "Any")
            return name
        self.aliases[name] = None
        schema = self.def_schema(name)
        comment = [_summary(schema.get("description"), self.defs)]
        if name.endswith("MetaObject"):
            expr = "dict[str, Any]"
            known = list(schema.get("properties", {}))
            if known:
                comment.append("known keys: " + ", ".join(known))
        else:
            expr, extra = self.annotation(schema, name)
            comment += extra
        self.aliases[name] = expr
        self.alias_comments[name] = [c for c in comment if c]
        self.alias_order.append(name)
        return name

    def build(self) -> None:
        self.used.update(self.names)
        self.assign_tags()
        for name in self.names:
            if self.is_struct_def(name):
                self.struct(name, self.def_schema(name), inline=False)
            else:
                self.alias(name)

    # ---- output --------------------------------------------------------------------------
    def render(self) -> str:
        self.build()
        body: list[str] = []
        for struct in self.structs.values():
            body += ["", ""] + self.render_struct(struct)
        body += ["", ""]
        for name in self.alias_order:
            for line in self.alias_comments[name]:
                body += textwrap.wrap(line, WIDTH, initial_indent="# ", subsequent_indent="# ")
            body += self.render_alias(name, self.aliases[name] or "Any")
        body += ["", "DEFS: dict[str, Any] = {"]
        body += [f'    "{name}": {name},' for name in self.names]
        body += ["}", ""]
        text = "\n".join(body)
        typing_names = [n for n in ("Annotated", "Any", "Literal") if re.search(rf"\b{n}\[|\b{n}\b", text)]
        head = [
            f"# Generated by tools/gen_types.py from schema/{self.version}/schema.json (sha256 {self.sha256}). Do not edit.",
            f'"""MCP {self.version} wire shapes: one msgspec Struct or type alias per schema ``$defs`` entry."""',
            "",
            "from __future__ import annotations",
            "",
            f"from typing import {', '.join(typing_names)}",
            "",
            "import msgspec",
            "",
            f'PROTOCOL_VERSION = "{self.version}"',
            f'SCHEMA_SHA256 = "{self.sha256}"',
            "",
            "",
            "class _Wire(msgspec.Struct, kw_only=True, omit_defaults=True, frozen=True):",
            '    """Base of every generated wire shape (each subclass is kw_only too)."""',
        ]
        return "\n".join(head) + "\n" + text

    def render_alias(self, name: str, expr: str) -> list[str]:
        line = f"{name} = {expr}"
        if len(line) <= WIDTH:
            return [line]
        rows: list[str] = []
        for piece in expr.split(" | "):  # pack union members, breaking before a "|"
            if rows and len(rows[-1]) + len(piece) + 3 <= WIDTH - 4:
                rows[-1] += " | " + piece
            else:
                rows.append(("| " if rows else "") + piece)
        return [f"{name} = ("] + [f"    {r}" for r in rows] + [")"]

    def render_struct(self, struct: Struct) -> list[str]:
        tag = self.tags.get(struct.name)
        # kw_only is per class in msgspec (not inherited); frozen and omit_defaults come from _Wire
        bases = "_Wire, kw_only=True" + (f', tag_field="{tag[0]}", tag={_literal(tag[1])}' if tag else "")
        lines = [f"class {struct.name}({bases}):"]
        doc = struct.doc.replace("\\", "\\\\").replace('"""', '\\"\\"\\"').rstrip('"')
        doc_lines = textwrap.wrap(doc or ("" if struct.fields else struct.name), WIDTH - 7)
        if not doc_lines:
            pass
        elif len(doc_lines) == 1:
            lines.append(f'    """{doc_lines[0]}"""')
        else:
            lines += [f'    """{doc_lines[0]}'] + [f"    {d}" for d in doc_lines[1:]] + ['    """']
        if struct.fields and doc_lines:
            lines.append("")
        for f in struct.fields:
            assert f.name not in RESERVED, f"{struct.name}.{f.name} shadows a name the annotations use"
            for c in f.comment:
                lines += textwrap.wrap(c, WIDTH - 4, initial_indent="    # ", subsequent_indent="    # ")
            named = f.name != f.key
            if f.required:
                value = f" = msgspec.field(name={_literal(f.key)})" if named else ""
                lines.append(f"    {f.name}: {f.annotation}{value}")
            else:
                value = f"msgspec.field(default=msgspec.UNSET, name={_literal(f.key)})" if named else "msgspec.UNSET"
                lines.append(f"    {f.name}: {f.annotation} | msgspec.UnsetType = {value}")
        return lines


def generate(version: str, schema_dir: Path) -> tuple[str, Generator]:
    gen = Generator(version, (schema_dir / version / "schema.json").read_bytes())
    return gen.render(), gen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema-dir", type=Path, default=default_schema_dir())
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)
    parser.add_argument("--version", action="append", choices=VERSIONS, help="default: all")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    parser.add_argument("--verbose", action="store_true", help="list structs, tags and fallbacks")
    args = parser.parse_args(argv)
    stale = []
    for version in args.version or VERSIONS:
        text, gen = generate(version, args.schema_dir)
        path = args.out_dir / f"{module_name(version)}.py"
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
        print(f"{path}: {len(gen.structs)} structs, {len(gen.aliases)} aliases, {text.count(chr(10))} lines")
        if args.verbose:
            for name, (key, value) in sorted(gen.tags.items()):
                print(f"  tag {name}: {key}={value!r}")
            for where, labels in gen.fallbacks:
                print(f"  fallback {where}: {' | '.join(labels)}")
    if stale:
        print("stale (re-run tools/gen_types.py):", *stale, sep="\n  ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
