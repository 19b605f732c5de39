"""OpenAPI schemas -> JSON Schema 2020-12, with every ``$ref`` kept as a ``$defs`` entry.

An OpenAPI 3.1 schema is JSON Schema 2020-12 already; a 3.0 schema differs in a few keywords,
rewritten here (in 3.1 documents too, where authors often still write them): ``nullable: true`` adds ``"null"`` to ``type`` (or ``anyOf`` a null), a boolean
``exclusiveMinimum``/``exclusiveMaximum`` becomes the number form, ``example`` is dropped, and
the tuple form of ``items`` (a list, with ``additionalItems``) becomes ``prefixItems`` (and
``items``). Keywords
only OpenAPI reads (``discriminator``, ``xml``, ``externalDocs``, ``x-*``) are dropped in both, so
``tools/list`` carries only what a JSON Schema validator and a model read.

A local ``$ref`` (``#/components/schemas/Pet``, or any JSON pointer into the document) becomes
``#/$defs/Pet``; each referenced schema is converted once per document, and a tool's schema carries
the ``$defs`` it reaches (recursive schemas stay references: cycles are kept, not unrolled). A
reference to another document cannot be followed: :class:`Unsupported` says which.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

# keywords whose value is a schema, a list of schemas, or a map of name -> schema
_ONE = frozenset(
    ("items", "not", "additionalProperties", "contains", "if", "then", "else", "propertyNames",
     "unevaluatedProperties", "unevaluatedItems", "contentSchema", "additionalItems")
)  # fmt: skip
_LIST = frozenset(("allOf", "anyOf", "oneOf", "prefixItems"))
_MAP = frozenset(("properties", "patternProperties", "dependentSchemas", "$defs", "definitions"))
_DROPPED = frozenset(
    (
        "discriminator",
        "xml",
        "externalDocs",
        "nullable",
        "$schema",
        "$id",
        "$anchor",
        "$recursiveAnchor",
        "$dynamicAnchor",
    )
)
_RECURSIVE = frozenset(("$recursiveRef", "$dynamicRef"))  # "#": the schema being defined -> a $ref to its $defs entry


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is an object, else an empty one (a document's optional members)."""
    return value if isinstance(value, dict) else {}


class Unsupported(Exception):
    """Part of an operation that cannot be served (the reason an operation is skipped)."""


def pointer(doc: Any, ref: str) -> Any:
    """The value at local reference ``ref`` (``#/a/b``) of ``doc``; Unsupported if it has none."""
    if not ref.startswith("#"):
        raise Unsupported(f"$ref {ref!r} points into another document (only local references are followed)")
    node = doc
    for raw in unquote(ref[1:]).split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            raise Unsupported(f"$ref {ref!r} points at nothing in the document")
    return node


def deref(doc: Any, obj: Any) -> Any:
    """``obj`` with its ``$ref`` chain followed (parameters, request bodies, responses)."""
    seen: set[str] = set()
    while isinstance(obj, dict) and isinstance(obj.get("$ref"), str):
        ref = obj["$ref"]
        if ref in seen:
            raise Unsupported(f"$ref {ref!r} refers to itself")
        seen.add(ref)
        obj = pointer(doc, ref)
    return obj


class Schemas:
    """The converter for one document: referenced schemas converted once, named uniquely."""

    def __init__(self, doc: dict[str, Any]) -> None:
        self.doc = doc
        self.v30 = str(doc.get("openapi", "")).startswith("3.0")
        self._names: dict[str, str] = {}  # $ref -> its $defs name
        self._taken: set[str] = set()
        self._defs: dict[str, tuple[Any, set[str]]] = {}  # $defs name -> (converted, the $refs it uses)
        self._within: list[str] = []
        self._closures: dict[frozenset[str], dict[str, Any]] = {}  # the $defs entries being converted, innermost last

    def convert(self, schema: Any) -> dict[str, Any] | bool:
        """``schema`` as a standalone JSON Schema 2020-12, with the ``$defs`` it reaches."""
        refs: set[str] = set()
        out: dict[str, Any] | bool = self._convert(schema, refs)
        defs = self._closure(refs)
        if defs:
            out = {"allOf": [out]} if not isinstance(out, dict) else dict(out)
            out["$defs"] = defs
        return out

    def _closure(self, refs: set[str]) -> dict[str, Any]:
        """The $defs ``refs`` reach; made once per set of references (operations share responses),
        and shared: never changed in place."""
        key = frozenset(refs)
        found = self._closures.get(key)
        if found is None:
            found = self._closures[key] = self._reach(refs)
        return found

    def _reach(self, refs: set[str]) -> dict[str, Any]:
        defs: dict[str, Any] = {}
        todo = list(refs)
        while todo:
            name = todo.pop()
            if name in defs:
                continue
            converted, uses = self._defs[name]
            defs[name] = converted
            todo.extend(u for u in uses if u not in defs)
        return defs

    def _ref(self, ref: str) -> str:
        """The ``$defs`` name of ``ref``, converting its target on first use."""
        name = self._names.get(ref)
        if name is not None:
            return name
        target = pointer(self.doc, ref)
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", unquote(ref.rsplit("/", 1)[-1])) or "schema"
        name, n = base, 1
        while name in self._taken:
            n += 1
            name = f"{base}_{n}"
        mark = len(self._names)
        self._taken.add(name)
        self._names[ref] = name
        uses: set[str] = set()
        self._defs[name] = ({}, uses)  # placeholder: a cycle back here is a reference, not a loop
        self._within.append(name)
        try:
            self._defs[name] = (self._convert(target, uses), uses)
        except BaseException:  # forget it and what it began (they may refer to it): the next use fails too
            for gone in list(self._names)[mark:]:
                self._taken.discard(self._names[gone])
                self._defs.pop(self._names.pop(gone), None)
            raise
        finally:
            self._within.pop()
        return name

    def _convert(self, node: Any, refs: set[str]) -> Any:
        if not isinstance(node, dict):
            return node if isinstance(node, bool) else {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            name = self._ref(ref)
            refs.add(name)
            out: dict[str, Any] = {"$ref": f"#/$defs/{name}"}
            if self.v30:  # 3.0: siblings of $ref are ignored (3.1 applies them)
                return out
        else:
            out = {}
        for key, value in node.items():
            if key == "$ref" or key in _DROPPED or key.startswith("x-"):
                continue
            if key in _RECURSIVE:
                if value == "#" and self._within:
                    refs.add(self._within[-1])
                    out["$ref"] = f"#/$defs/{self._within[-1]}"
                continue  # another dynamic reference cannot be kept once the schema is moved: anything goes
            if key == "items" and isinstance(value, list):  # the tuple form before 2020-12: prefixItems
                out["prefixItems"] = [self._convert(v, refs) for v in value]
                if "additionalItems" in node:  # what follows the tuple: 2020-12's items
                    out["items"] = self._convert(node["additionalItems"], refs)
            elif key == "additionalItems" and isinstance(node.get("items"), list):
                continue  # made items above
            elif key in _ONE:
                out[key] = self._convert(value, refs) if isinstance(value, (dict, bool)) else value
            elif key in _LIST and isinstance(value, list):
                out[key] = [self._convert(v, refs) for v in value]
            elif key in _MAP and isinstance(value, dict):
                out[key] = {k: self._convert(v, refs) for k, v in value.items()}
            elif key == "required" and isinstance(value, list):  # unique names (OpenAI's repeat some)
                out[key] = list(dict.fromkeys(v for v in value if isinstance(v, str)))
            elif key == "example":
                if not self.v30:
                    out[key] = value
            else:
                out[key] = value
        _from_30(node, out)  # in 3.1 documents too: their authors write 3.0 keywords (OpenAI's: exclusiveMinimum: true)
        return out


def _from_30(node: dict[str, Any], out: dict[str, Any]) -> None:
    """The OpenAPI 3.0 keywords that JSON Schema 2020-12 spells differently (module docstring),
    rewritten wherever they appear (never valid 2020-12 as they are: lenient on input)."""
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = node.get(exclusive)
        if isinstance(flag, bool):
            del out[exclusive]
            if flag and bound in node:
                out[exclusive] = out.pop(bound)
    if node.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
            if isinstance(out.get("enum"), list) and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        elif kind is None and out:
            inner = dict(out)
            out.clear()
            out["anyOf"] = [inner, {"type": "null"}]
