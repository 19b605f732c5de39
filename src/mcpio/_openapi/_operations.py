"""OpenAPI operations -> tool definitions: names, input and output schemas, and how to call.

Each operation (a method of a path item) becomes an :class:`Operation`: its tool name (the
``operationId``, else ``method_path``, made valid under the tool-name rule of spec 2025-11-25 —
1–64 characters of ``[A-Za-z0-9_.-]`` here, and unique), its description (summary and description),
its input schema (one property per path, query, header and cookie parameter, named after the
parameter, ``name__in`` when two locations share a name, or for a parameter named ``body`` of
an operation with a request body; a JSON object body's properties beside them when none
collides, else one ``body`` argument) and its output schema (the first 2xx JSON
response: an object schema as is, anything else wrapped as ``{"result": …}``).

What cannot be called is skipped with the reason (:attr:`Converted.skipped`): a body of a media
type other than JSON, form, multipart or text, a reference to another document, a parameter with
``content`` instead of ``schema`` that is not JSON.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from ._schemas import Schemas, Unsupported, deref, obj

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
# spec 2025-11-25: header parameters named Accept, Content-Type or Authorization are ignored (OAS 3.x §4.8.12)
_IGNORED_HEADERS = frozenset(("accept", "content-type", "authorization"))
_NAME_MAX = 64  # the conformance suite's tools-name-format check (spec-notes: 1-64 of [A-Za-z0-9_./-])
FILE_NOTE = "the file's content, base64-encoded"
CONTENT = "content"  # the Param.style of a parameter described by ``content`` (JSON), not a ``style``


class Param:
    """One parameter: where it goes and how it is written (OAS ``style``/``explode``)."""

    __slots__ = ("arg", "explode", "location", "name", "style")

    def __init__(self, arg: str, name: str, location: str, style: str, explode: bool) -> None:
        self.arg, self.name, self.location, self.style, self.explode = arg, name, location, style, explode


class Operation:
    """One operation, ready to serve: see the module docstring."""

    def __init__(self, method: str, path: str, op: dict[str, Any]) -> None:
        self.method, self.path, self.raw = method.upper(), path, op
        self.operation_id: str | None = op.get("operationId") if isinstance(op.get("operationId"), str) else None
        self.tags: list[str] = [t for t in op.get("tags") or () if isinstance(t, str)]
        self.name = ""
        self.description: str | None = None
        self.params: list[Param] = []
        self.body_kind: str | None = None  # "json", "form", "multipart", "text"
        self.body_media = ""
        self.body_args: list[str] | None = None  # flattened body properties, else None: one "body" argument
        self.files: frozenset[str] = frozenset()  # multipart fields sent as files (base64 arguments)
        self.input_schema: dict[str, Any] = {"type": "object", "properties": {}}
        self.output_schema: dict[str, Any] | None = None
        self.wrap_output = False
        self.security: list[dict[str, Any]] | None = None

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


class Converted:
    """What a document converts to: the operations served and those skipped, with why."""

    def __init__(self) -> None:
        self.operations: list[Operation] = []
        self.skipped: list[tuple[str, str]] = []  # (METHOD /path, reason)


def convert(
    doc: dict[str, Any], names: Mapping[str, str] | None = None, include: Callable[[Operation], bool] | None = None
) -> Converted:
    """Every operation of ``doc`` (``names`` renames by operationId or "METHOD /path")."""
    schemas = Schemas(doc)
    out = Converted()
    taken: set[str] = set()
    for path, item in (doc.get("paths") or {}).items():
        try:
            item = deref(doc, item)
        except Unsupported as exc:
            out.skipped.append((f"* {path}", str(exc)))
            continue
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            raw = item.get(method)
            if not isinstance(raw, dict):
                continue
            op = Operation(method, path, raw)
            if include is not None and not include(op):
                continue
            try:
                _build(op, doc, schemas, item.get("parameters") or [])
            except Unsupported as exc:
                out.skipped.append((op.label, str(exc)))
                continue
            wanted = (names or {}).get(op.operation_id or "") or (names or {}).get(op.label)
            op.name = _unique(wanted or tool_name(op), taken)
            out.operations.append(op)
    return out


def tool_name(op: Operation) -> str:
    """A valid tool name for ``op``: its operationId, else ``method_path``, cut to 64 characters."""
    raw = op.operation_id or f"{op.method.lower()}_{op.path}"
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", raw).strip("_") or op.method.lower()
    return name[:_NAME_MAX]


def _unique(name: str, taken: set[str]) -> str:
    n = 1
    candidate = name
    while candidate in taken:
        n += 1
        suffix = f"_{n}"
        candidate = name[: _NAME_MAX - len(suffix)] + suffix
    taken.add(candidate)
    return candidate


def _build(op: Operation, doc: dict[str, Any], schemas: Schemas, shared: list[Any]) -> None:
    raw = op.raw
    text = "\n\n".join(
        s.strip() for s in (raw.get("summary"), raw.get("description")) if isinstance(s, str) and s.strip()
    )
    op.description = text or None
    props: dict[str, Any] = {}
    required: list[str] = []
    params: dict[tuple[str, str], dict[str, Any]] = {}
    for p in [*shared, *(raw.get("parameters") or [])]:  # the operation's own override the path item's
        p = deref(doc, p)
        if (
            isinstance(p, dict)
            and isinstance(p.get("name"), str)
            and p.get("in") in ("path", "query", "header", "cookie")
        ):
            if p["in"] == "header" and p["name"].lower() in _IGNORED_HEADERS:
                continue
            params[(p["name"], p["in"])] = p
    counts: dict[str, int] = {"body": 1} if raw.get("requestBody") is not None else {}  # the body may be "body"
    for name, _ in params:
        counts[name] = counts.get(name, 0) + 1
    for (name, location), p in params.items():
        arg = name if counts[name] == 1 else f"{name}__{location}"
        schema = p.get("schema")
        if schema is None:
            schema = _content_schema(p.get("content"), op, f"parameter {name!r}")
        prop = schemas.convert(schema)
        prop = dict(prop) if isinstance(prop, dict) else {"allOf": [prop]}
        if isinstance(p.get("description"), str) and "description" not in prop:
            prop["description"] = p["description"]
        if p.get("deprecated") is True:
            prop["deprecated"] = True
        props[arg] = prop
        if location == "path" or p.get("required") is True:
            required.append(arg)
        style = p.get("style") or ("simple" if location in ("path", "header") else "form")
        if p.get("schema") is None:  # ``content``: the value is its JSON text, whatever its location
            style = CONTENT
        explode = p.get("explode")
        op.params.append(Param(arg, name, location, style, explode if isinstance(explode, bool) else style == "form"))
    body = deref(doc, raw.get("requestBody")) if raw.get("requestBody") is not None else None
    if isinstance(body, dict):
        _body(op, doc, schemas, body, props, required)
    op.input_schema = _object(props, required)
    op.output_schema, op.wrap_output = _output(op, doc, schemas)
    security = raw.get("security", doc.get("security"))
    op.security = security if isinstance(security, list) else None


def _content_schema(content: Any, op: Operation, what: str) -> Any:
    if isinstance(content, dict):
        for media, entry in content.items():
            if _is_json(media) and isinstance(entry, dict):
                return entry.get("schema", {})
    raise Unsupported(f"{what} is described by a content type other than JSON")


def _is_json(media: str) -> bool:
    m = media.split(";")[0].strip().lower()
    return m == "application/json" or m.endswith("+json") or m == "*/*"


_KINDS = (
    ("json", _is_json),
    ("multipart", lambda m: m.startswith("multipart/form-data")),
    ("form", lambda m: m.startswith("application/x-www-form-urlencoded")),
    ("text", lambda m: m.startswith("text/plain")),
)


def _body(
    op: Operation,
    doc: dict[str, Any],
    schemas: Schemas,
    body: dict[str, Any],
    props: dict[str, Any],
    required: list[str],
) -> None:
    content = obj(body.get("content"))
    found = next(((k, m) for k, test in _KINDS for m in content if test(m.lower())), None)
    if found is None:
        if not content:
            return
        raise Unsupported(f"its request body is {', '.join(content)} (JSON, form, multipart and text/plain are served)")
    kind, media = found
    op.body_kind, op.body_media = kind, media
    entry = content[media] if isinstance(content[media], dict) else {}
    raw_schema = entry.get("schema", {"type": "string"} if kind == "text" else {})
    resolved = deref(doc, raw_schema)
    files: set[str] = set()
    if kind == "multipart" and isinstance(resolved, dict):
        files = {k for k, v in (resolved.get("properties") or {}).items() if _is_file(deref(doc, v))}
    flat = (
        kind != "text"
        and isinstance(resolved, dict)
        and isinstance(resolved.get("properties"), dict)
        and resolved.get("properties")
        and not set(resolved["properties"]) & (set(props) | {"body"})
    )
    if flat:
        assert isinstance(resolved, dict)
        op.body_args = list(resolved["properties"])
        for k, v in resolved["properties"].items():
            props[k] = _file_arg(v) if k in files else schemas.convert(v)
            if k in files and isinstance(deref(doc, v), dict) and deref(doc, v).get("description"):
                props[k]["description"] = f"{deref(doc, v)['description']} ({FILE_NOTE})"
        need = resolved.get("required") if body.get("required") is True else None  # an optional body: none
        required.extend(r for r in need or [] if r in resolved["properties"])
        op.files = frozenset(files)
    else:
        if files:
            raise Unsupported("its multipart body has files but is not an object of named fields")
        prop = schemas.convert(raw_schema)
        prop = dict(prop) if isinstance(prop, dict) else {"allOf": [prop]}
        if isinstance(body.get("description"), str):
            prop.setdefault("description", body["description"])
        props["body"] = prop
        if body.get("required") is True:
            required.append("body")


def _is_file(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("type") == "array":
        return False
    return schema.get("format") == "binary" or ("contentMediaType" in schema and schema.get("type") == "string")


def _file_arg(schema: Any) -> dict[str, Any]:
    return {"type": "string", "contentEncoding": "base64", "description": FILE_NOTE}


def _object(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """One object schema whose properties' ``$defs`` are gathered at the top (where ``#/$defs/…`` points)."""
    defs: dict[str, Any] = {}
    for prop in props.values():
        if isinstance(prop, dict) and "$defs" in prop:
            defs.update(prop.pop("$defs"))
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = list(dict.fromkeys(required))
    if defs:
        schema["$defs"] = defs
    return schema


def _output(op: Operation, doc: dict[str, Any], schemas: Schemas) -> tuple[dict[str, Any] | None, bool]:
    """The 2xx responses' output schema, and whether it is wrapped; none unless every 2xx response
    is JSON with the same schema: a tool with an output schema MUST answer structured content that
    conforms (spec 2025-11-25 server/tools §Output Schema), which a 204, a text answer or another
    2xx's body cannot."""
    responses = obj(op.raw.get("responses"))
    schema_of: list[Any] = []
    for code, value in sorted((str(k), v) for k, v in responses.items()):  # YAML may key them by int
        if not (code.startswith("2") and len(code) == 3):
            continue
        response = deref(doc, value)
        content = response.get("content") if isinstance(response, dict) else None
        if not isinstance(content, dict):
            return None, False
        media = next((m for m in content if _is_json(m) and m != "*/*"), None)
        if media is None or not isinstance(content[media], dict) or "schema" not in content[media]:
            return None, False
        schema_of.append(content[media]["schema"])
    if schema_of and all(x == schema_of[0] for x in schema_of):
        raw = schema_of[0]
        resolved = deref(doc, raw)
        schema = schemas.convert(raw)
        is_object = isinstance(resolved, dict) and resolved.get("type") == "object"
        if is_object and isinstance(schema, dict) and schema.get("type", "object") == "object":  # not nullable
            return {**schema, "type": "object"}, False
        inner = dict(schema) if isinstance(schema, dict) else {"allOf": [schema]}
        return _object({"result": inner}, ["result"]), True
    return None, False
