"""Type hints -> JSON Schema, and JSON arguments -> Python call arguments (layer 0, pure).

:func:`analyze_function` inspects a tool, prompt or resource function once, at registration;
the :class:`FunctionSignature` it returns holds everything the hot path needs:

- ``input_schema``: JSON Schema 2020-12, ``type: object``, ``properties`` always present,
  ``required`` only when non-empty (required iff no default), ``additionalProperties: false``
  (``**kwargs`` is refused, so a function takes no other argument). Models are ``$ref``s into
  ``$defs``; Enums are inlined; no ``title`` keys. Descriptions come from ``Annotated``
  metadata (``msgspec.Meta``, a string, ``pydantic.Field``), else from the docstring.
  Parameters the framework supplies are left out (``_callables.injection``): typed as one of
  ``injected`` (or Optional of one) they are listed in ``injected``; with a marker instance of
  one as default or ``Annotated`` metadata (``Depends(get_db)``) they are in ``provided``.
- ``output_schema``: from the return annotation, or None (missing, None, Any, plain ``str``
  — text needs no structured twin —, mentions a content type, unrepresentable). A non-object
  schema is wrapped as ``{"result": ...}``.
- ``bind(arguments)``: ONE precompiled msgspec conversion (a Struct per function) validates
  the arguments and converts them to the annotated types. It is lax like pydantic: numeric
  and boolean strings are accepted (URI template variables and prompt arguments are strings),
  absent optional ones are left out (the default applies). Failure raises :class:`ArgumentError`
  naming the argument and what was expected; an unknown one, :class:`UnknownArguments`.
- ``to_structured(value)``: the JSON-able structuredContent of a return value.

What cannot work raises TypeError at registration, naming the function, the parameter and the
type: ``*args``/``**kwargs``, positional-only parameters, unrepresentable types, unresolvable
annotations. pydantic is never imported here: models and ``Field`` objects are recognized only
once the user's code has imported pydantic (looked up in ``sys.modules``).
"""

from __future__ import annotations

import datetime
import re
import sys
import types
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin

import msgspec
from msgspec import UNSET, UnsetType

from ._callables import EMPTY as _EMPTY
from ._callables import POSITIONAL_ONLY, VAR_KEYWORD, VAR_POSITIONAL
from ._callables import injection as _injection
from ._callables import parameters as _parameters
from ._callables import type_hints as _type_hints
from ._callables import unwrap as _unwrap
from ._handle import HANDLE_TYPE, StateHandle
from ._schema_docs import attach_defs as _attach_defs
from ._schema_docs import clean as _clean
from ._schema_docs import prompt_arguments
from ._schema_docs import resolve as _resolve
from ._schema_docs import wants_json as _wants_json
from ._schema_output import conform as _conform
from ._schema_output import jsonable as _jsonable

__all__ = ["ArgumentError", "FunctionSignature", "Parameter", "analyze_function", "prompt_arguments"]

_REF = "#/$defs/"
_convert = msgspec.convert
_EXACT = (str, int, float, bool)  # a value of exactly one of these converts to itself
_asdict = msgspec.structs.asdict


class ArgumentError(Exception):
    """Arguments that do not fit a function's signature; ``str(exc)`` says what to fix:
    ``Invalid arguments for TOOL: DETAIL`` (the one place it is worded), or DETAIL alone."""

    def __init__(self, detail: str, tool: str | None = None) -> None:
        super().__init__(detail if tool is None else f"Invalid arguments for {tool}: {detail}")
        self.detail, self.tool = detail, tool


class UnknownArguments(ArgumentError):
    """Arguments the function does not take (a misspelt name, say): refused, never dropped."""


class Parameter(msgspec.Struct):  # a Struct, not a dataclass: dataclasses is not imported at start-up
    """One schema-visible parameter: its property schema and how it is documented."""

    name: str
    annotation: Any
    required: bool
    schema: dict[str, Any]
    description: str | None = None
    default: Any = _EMPTY


class FunctionSignature:
    """The analysis of one function (see the module docstring); built by :func:`analyze_function`."""

    __slots__ = (
        "_choices",
        "_described",
        "_exact",
        "_fields",
        "_json_params",
        "_names",
        "_optional",
        "_pending",
        "_struct",
        "injected",
        "is_async",
        "name",
        "output_schema",
        "output_type",
        "provided",
        "wrap_output",
    )

    def __init__(
        self,
        name: str,
        injected: list[str],
        is_async: bool,
        output: tuple[dict[str, Any] | None, bool, Any],
        fields: list[tuple[Any, ...]],
        pending: tuple[Any, ...],
        provided: dict[str, Any] | None = None,
    ) -> None:
        self.name, self.injected, self.is_async = name, injected, is_async
        self.provided = provided or {}  # parameter -> its marker (e.g. Depends), resolved per call
        self.output_schema, self.wrap_output, self.output_type = output
        # What only tools/list and the like show (descriptions, parameters, input_schema) is
        # made from ``pending`` (the arguments of _describe) on first use: nothing in it can fail,
        # and a server registering hundreds of tools answers initialize before.
        self._pending: tuple[Any, ...] | None = pending
        self._described: tuple[str | None, list[Parameter], dict[str, Any]] = (None, [], {})
        # The arguments Struct (and msgspec's decoder for it) is built on the first bind, not at
        # registration: a server with 200 tools starts without compiling 200 decoders.
        self._fields = fields
        self._struct: type | None = None
        # One pass, no comprehension frames (per registered tool): the optional
        # parameters, and the arguments that are already exactly the declared types and need no
        # conversion: name -> type when every parameter is a required plain str/int/float/bool.
        optional: list[str] = []
        exact: dict[str, Any] | None = {}
        for f in fields:
            if len(f) == 2 and f[1] in _EXACT:
                if exact is not None:
                    exact[f[0]] = f[1]
                continue
            exact = None
            if len(f) == 3 and f[2] is UNSET:
                optional.append(f[0])
        self._optional = tuple(optional)
        self._exact = exact
        self._choices: dict[str, Any] | None = None  # these two: on the first bad arguments
        self._json_params: tuple[str, ...] = ()
        self._names: frozenset[str] = frozenset()  # the parameters' names (from _build)

    @property
    def description(self) -> str | None:
        """The docstring without its parameter sections, or None."""
        return self._describe()[0]

    @property
    def parameters(self) -> list[Parameter]:
        """The schema-visible parameters, in declaration order."""
        return self._describe()[1]

    @property
    def input_schema(self) -> dict[str, Any]:
        """The arguments' JSON Schema (see the module docstring)."""
        return self._describe()[2]

    def _describe(self) -> tuple[str | None, list[Parameter], dict[str, Any]]:
        pending = self._pending
        if pending is not None:  # once; a race makes the same thing twice, harmlessly
            self._described, self._pending = _describe(*pending), None
        return self._described

    def _build(self) -> type:
        # An optional parameter left out stays UNSET (and out of the call): its field's type
        # admits the marker. Made here, not at registration: typing's Union[...] is ~3 k
        # instructions a parameter (cold start with many tools).
        fields = [(f[0], Union[f[1], UnsetType], UNSET) if len(f) == 3 and f[2] is UNSET else f for f in self._fields]
        struct = msgspec.defstruct(re.sub(r"\W", "_", self.name) + "_arguments", fields, kw_only=True)
        defs = self.input_schema.get("$defs", {})
        self._json_params = tuple(p.name for p in self.parameters if _wants_json(p.schema, defs))
        self._names = frozenset(f[0] for f in self._fields)
        self._struct = struct
        return struct

    def bind(self, arguments: Any, copy: bool = True) -> dict[str, Any]:
        """Validate JSON ``arguments`` (an object or None) and convert them to keyword arguments.
        ``copy=False``: when they are exactly the declared types, ``arguments`` itself is returned
        (for a caller that only unpacks it into the call), else a new dict as always.

        Raises:
            UnknownArguments: an argument the function does not take (it is never dropped
                silently); the message suggests the close name.
            ArgumentError: an argument is missing or does not fit its type; the message names
                the argument, what was expected and what was given.
        """
        if arguments is None:
            arguments = {}
        elif type(arguments) is not dict:
            if not isinstance(arguments, Mapping):
                from ._schema_errors import json_type  # bad arguments: not at start-up

                raise ArgumentError(f"expected an object, got {json_type(arguments)}", self.name)
            arguments = dict(arguments)
        exact = self._exact
        if exact is not None and len(arguments) == len(exact):
            for name, value in arguments.items():
                if type(value) is not exact.get(name):
                    break
            else:  # what msgspec would give: the same values (the identity), no unknown keys
                return dict(arguments) if copy else arguments
        struct = self._struct or self._build()
        if not arguments.keys() <= self._names:
            from ._schema_errors import unknown  # bad arguments: not at start-up

            raise UnknownArguments(unknown(arguments, [f[0] for f in self._fields]), self.name)
        try:
            obj: Any = _convert(arguments, struct, strict=False, dec_hook=_dec_hook)
        except msgspec.ValidationError as exc:
            obj = self._retry_json(arguments, exc)
        kwargs = _asdict(obj)
        for name in self._optional:
            if kwargs[name] is UNSET:
                del kwargs[name]
        return kwargs

    def _retry_json(self, arguments: dict[str, Any], exc: msgspec.ValidationError) -> Any:
        # Some clients send list/object arguments JSON-encoded as strings: decode those, retry once.
        strings = [n for n in self._json_params if isinstance(arguments.get(n), str)]
        try:
            if strings:
                fixed = {**arguments, **{n: msgspec.json.decode(arguments[n]) for n in strings}}
                return _convert(fixed, self._struct, strict=False, dec_hook=_dec_hook)
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
        if self._choices is None:
            defs = self.input_schema.get("$defs", {})
            self._choices = {p.name: e for p in self.parameters if (e := _resolve(p.schema, defs).get("enum"))}
        from ._schema_errors import explain

        raise ArgumentError(explain(str(exc), arguments, self._choices), self.name) from None

    def to_structured(self, value: Any) -> dict[str, Any]:
        """The structuredContent for ``value``: JSON-able, wrapped as ``{"result": ...}`` if ``wrap_output``."""
        data = _conform(value, self.output_type, self.name, _dec_hook)  # OutputMismatch: a bug in the tool
        if self.wrap_output:
            return {"result": data}
        if not isinstance(data, dict):
            raise TypeError(
                f"{self.name}() returned {type(value).__name__}, but its return annotation promises an object"
            )
        return data


def analyze_function(
    fn: Callable[..., Any],
    *,
    injected: tuple[type, ...] = (),
    content_types: tuple[type, ...] = (),
    name: str | None = None,
) -> FunctionSignature:
    """Analyze ``fn`` (a function, method, ``functools.partial`` or callable object) once.

    Args:
        fn: the user's function.
        injected: what the framework supplies, kept out of the schema: parameter types (Context)
            and marker classes (Depends), see ``_callables.injection``.
        content_types: return types that are content blocks rather than structured output.
        name: the name to report (default: the function's ``__name__``).

    Raises:
        TypeError: the function cannot be exposed; the message names the function, the
            parameter and the type.
    """
    if not callable(fn):
        raise TypeError(f"{fn!r} is not callable")
    target, default_name, doc, is_async = _unwrap(fn)
    fname = name or default_name
    try:
        params = _parameters(fn)
        hints = _type_hints(target)
    except Exception as exc:
        raise TypeError(
            f"{fname}(): cannot resolve its signature ({type(exc).__name__}: {exc}); "
            "annotation types must be defined at module level or imported"
        ) from None
    specs: list[tuple[str, Any, Any, bool, Any]] = []  # name, hint, normalized type, required, default
    injected_names: list[str] = []
    provided: dict[str, Any] = {}
    fields: list[tuple[Any, ...]] = []
    for pname, kind, default in params:
        if kind in (VAR_POSITIONAL, VAR_KEYWORD):
            stars = "*" if kind == VAR_POSITIONAL else "**"
            raise TypeError(f"{fname}(): {stars}{pname} is not supported; declare each argument as a named parameter")
        if kind == POSITIONAL_ONLY:
            raise TypeError(
                f"{fname}(): positional-only parameter {pname!r} is not supported (arguments are passed by name)"
            )
        hint = hints.get(pname, Any)
        how = _injection(hint, default, injected) if injected else None
        if how is not None:
            if how is True:
                injected_names.append(pname)
            else:
                provided[pname] = how
            continue
        tp, factory = _normalize(hint), None
        if _is_field_info(default):  # param: int = pydantic.Field(3, description=...): msgspec fills it in
            meta = _field_meta(default)
            tp = Annotated[tp, meta] if meta is not None else tp
            default, factory = _field_default(default)
        required = default is _EMPTY and factory is None and hint is not StateHandle  # minted when absent
        specs.append((pname, hint, tp, required, default))
        if factory is not None:
            fields.append((pname, tp, msgspec.field(default_factory=factory)))
        else:
            fields.append((pname, tp) if required else (pname, tp, UNSET))  # Union[tp, UnsetType] in _build

    try:
        schemas, defs = _generate([s[2] for s in specs], "validation")
    except TypeError:
        for pname, hint, tp, _, _ in specs:
            try:
                _generate([tp], "validation")
            except TypeError as exc:
                raise TypeError(
                    f"{fname}(): parameter {pname!r} has type {_type_name(hint)}, which cannot be "
                    f"represented as JSON Schema ({_reason(exc)})"
                ) from None
        raise

    output = _output_schema(hints.get("return", _EMPTY), content_types)
    return FunctionSignature(fname, injected_names, is_async, output, fields, (doc, specs, schemas, defs), provided)


def _describe(
    doc: str | None, specs: list[tuple[str, Any, Any, bool, Any]], schemas: list[dict[str, Any]], defs: dict[str, Any]
) -> tuple[str | None, list[Parameter], dict[str, Any]]:
    """(description, parameters, input_schema) of an analysed function: docstring, schemas, defaults."""
    from ._docstrings import parse_docstring  # at the first description, not at start-up

    description, doc_params = parse_docstring(doc)
    parameters: list[Parameter] = []
    for (pname, hint, _, required, default), schema in zip(specs, schemas, strict=True):
        desc = schema.get("description") or doc_params.get(pname)
        if desc:
            schema["description"] = desc
        base = _strip(hint)
        if get_origin(base) is Literal and "enum" in schema:  # declaration order, not msgspec's sorted one
            schema["enum"] = msgspec.to_builtins(list(get_args(base)))
        if not required and default is not _EMPTY:
            try:
                schema["default"] = _jsonable(default)
            except (TypeError, ValueError):
                pass
        parameters.append(Parameter(pname, hint, required, schema, desc, default))
    input_schema: dict[str, Any] = {"type": "object", "properties": {p.name: p.schema for p in parameters}}
    required_names = [p.name for p in parameters if p.required]
    if required_names:
        input_schema["required"] = required_names
    input_schema["additionalProperties"] = False  # no **kwargs (refused at analysis): others are refused
    return description, parameters, _attach_defs(input_schema, defs)


# ---- the callable and its types ------------------------------------------------------------------

_FORMATS = {datetime.datetime: "date-time", datetime.time: "time"}
_CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length", "pattern")


def _strip(tp: Any) -> Any:
    """``tp`` without ``Annotated`` metadata."""
    if type(tp) is type:  # a plain class (most hints): no typing construct to look into
        return tp
    return get_args(tp)[0] if get_origin(tp) is Annotated else tp


def _mentions(tp: Any, classes: tuple[type, ...]) -> bool:
    """Whether ``classes`` appear anywhere in the type expression ``tp``."""
    if isinstance(tp, type) and get_origin(tp) is None and issubclass(tp, classes):
        return True
    return any(_mentions(a, classes) for a in get_args(tp))


def _normalize(tp: Any) -> Any:
    """``tp`` for msgspec: ``Annotated`` strings, ``pydantic.Field`` and annotated-types constraints
    become ``msgspec.Meta``; datetime/time get a ``format``; generic arguments are rewritten too."""
    if type(tp) is type:  # a plain class: what the general path below gives
        return Annotated[tp, msgspec.Meta(extra_json_schema={"format": _FORMATS[tp]})] if tp in _FORMATS else tp
    if tp is StateHandle:  # a string the framework describes (and mints when absent)
        return HANDLE_TYPE
    origin = get_origin(tp)
    if origin is Annotated:
        base, *extras = get_args(tp)
        metas = [m for x in extras if (m := _to_meta(x)) is not None]
        return Annotated[(_normalize(base), *metas)] if metas else _normalize(base)
    if tp in _FORMATS:
        return Annotated[tp, msgspec.Meta(extra_json_schema={"format": _FORMATS[tp]})]
    if origin is None or origin is Literal:
        return tp
    args = get_args(tp)
    new = tuple(a if a is Ellipsis or isinstance(a, list) else _normalize(a) for a in args)
    if all(a is b for a, b in zip(args, new, strict=True)):
        return tp
    try:
        return Union[new] if origin in (Union, types.UnionType) else origin[new]
    except TypeError:
        return tp


def _to_meta(x: Any) -> msgspec.Meta | None:
    if isinstance(x, msgspec.Meta):
        return x
    if isinstance(x, str):
        return msgspec.Meta(description=x)
    if _is_field_info(x):
        return _field_meta(x)
    kw = _constraints(x)
    return msgspec.Meta(**kw) if kw else None


def _constraints(obj: Any) -> dict[str, Any]:
    """Constraints of an annotated-types / pydantic metadata object (``Ge(0)``, ``MaxLen(5)``...)."""
    if type(obj).__module__.partition(".")[0] not in ("annotated_types", "pydantic"):
        return {}
    kw = {key: getattr(obj, key) for key in _CONSTRAINTS if getattr(obj, key, None) is not None}
    if isinstance(kw.get("pattern"), re.Pattern):
        kw["pattern"] = kw["pattern"].pattern
    return kw


def _is_field_info(x: Any) -> bool:
    fields = sys.modules.get("pydantic.fields")
    return fields is not None and isinstance(x, fields.FieldInfo)


def _field_meta(field: Any) -> msgspec.Meta | None:
    kw: dict[str, Any] = {}
    for m in field.metadata:
        kw.update(_constraints(m))
    if field.description:
        kw["description"] = field.description
    if field.examples:
        kw["examples"] = list(field.examples)
    if isinstance(field.json_schema_extra, dict):
        kw["extra_json_schema"] = dict(field.json_schema_extra)
    return msgspec.Meta(**kw) if kw else None


def _field_default(field: Any) -> tuple[Any, Callable[[], Any] | None]:
    """(schema default, factory bind uses when the argument is absent) of a ``Field(...)`` default."""
    if field.default_factory is not None:
        return _EMPTY, field.default_factory
    if type(field.default).__name__ == "PydanticUndefinedType":
        return _EMPTY, None
    value = field.default
    return value, lambda: value


def _is_model(tp: Any) -> bool:
    """Whether ``tp`` is a pydantic model class (False, cheaply, while pydantic is not loaded)."""
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(tp, type) and issubclass(tp, main.BaseModel)


def _type_name(tp: Any) -> str:
    return tp.__qualname__ if isinstance(tp, type) and get_origin(tp) is None else repr(tp).replace("typing.", "")


def _reason(exc: BaseException) -> str:
    return ([ln.strip() for ln in str(exc).splitlines() if ln.strip()] or [type(exc).__name__])[-1]


# ---- conversion hooks ----------------------------------------------------------------------------


def _dec_hook(tp: Any, obj: Any) -> Any:
    if not _is_model(tp):
        raise NotImplementedError(f"cannot convert to {tp!r}")
    if isinstance(obj, tp):
        return obj
    try:
        return tp.model_validate(obj)
    except ValueError as exc:  # pydantic.ValidationError is a ValueError
        if not callable(getattr(exc, "errors", None)) or not exc.errors():  # type: ignore[attr-defined]
            raise
        first = exc.errors()[0]  # type: ignore[attr-defined]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        # \x1f-separated path and message; _explain merges the path into msgspec's location.
        raise ValueError(f"\x1f{loc}\x1f{'' if first['type'] == 'missing' else first['msg']}") from None


# ---- schema generation ---------------------------------------------------------------------------

# The schemas msgspec gives the plain scalar types, written out: most tools take only these, and a
# server registering hundreds of them should not pay for msgspec's type walk each time.
_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    Any: {},
}


def _scalar(tp: Any) -> dict[str, Any] | None:
    try:
        return _SCALARS.get(tp)
    except TypeError:  # unhashable (an Annotated with unhashable metadata): not a plain scalar
        return None


def _generate(tps: list[Any], mode: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Schemas of ``tps`` plus their shared ``$defs``: titles stripped, Enums inlined."""
    plain: list[dict[str, Any]] = []  # all plain scalars: the same as msgspec's (tests/unit: test_schema)
    for tp in tps:  # a loop, not comprehensions: a frame less each, per registered tool
        scalar = _scalar(tp)
        if scalar is None:
            break
        plain.append(dict(scalar))
    else:
        return plain, {}
    extra: dict[str, Any] = {}

    def hook(tp: Any) -> dict[str, Any]:
        if not _is_model(tp):
            raise NotImplementedError
        js = tp.model_json_schema(ref_template=_REF + "{model}", mode=mode)
        for key, value in js.pop("$defs", {}).items():
            extra.setdefault(key, value)
        if set(js) == {"$ref"}:  # a recursive model: pydantic already put it in $defs
            return cast("dict[str, Any]", js)
        key = re.sub(r"\W", "_", tp.__name__)
        extra[key] = js
        return {"$ref": _REF + key}

    schemas, defs = msgspec.json.schema_components(tps, schema_hook=hook, ref_template=_REF + "{name}")
    for key, value in extra.items():
        defs.setdefault(key, value)
    order = _enum_classes(tps)
    enums: dict[str, Any] = {}
    for key, d in defs.items():
        if "enum" in d and set(d) <= {"title", "description", "enum", "type"}:
            d = {k: v for k, v in d.items() if k != "title"}
            if key in order:  # msgspec sorts the values; list them as declared
                values = msgspec.to_builtins([m.value for m in order[key]])
                if sorted(map(repr, values)) == sorted(map(repr, d["enum"])):
                    d["enum"] = values
            enums[key] = d
    cleaned = {k: _clean(v, enums) for k, v in defs.items() if k not in enums}
    return [_clean(s, enums) for s in schemas], cleaned


def _enum_classes(tps: list[Any]) -> dict[str, Any]:
    """Enum classes reachable from ``tps`` (through msgspec's type IR), by name."""
    mi = msgspec.inspect
    found: dict[str, Any] = {}
    seen: set[Any] = set()

    def walk(t: Any) -> None:
        cls = getattr(t, "cls", None)
        if isinstance(t, mi.EnumType):
            found.setdefault(t.cls.__name__, t.cls)
        elif cls is None or cls not in seen:
            seen.add(cls)
            subs = [getattr(t, a, None) for a in ("type", "item_type", "key_type", "value_type")]
            subs += [
                *getattr(t, "item_types", ()),
                *getattr(t, "types", ()),
                *(f.type for f in getattr(t, "fields", ())),
            ]
            for sub in subs:
                if isinstance(sub, mi.Type):
                    walk(sub)

    for t in mi.multi_type_info(tps):
        walk(t)
    return found


def _output_schema(ret: Any, content_types: tuple[type, ...]) -> tuple[dict[str, Any] | None, bool, Any]:
    """(outputSchema, wrap_output, the type results are checked against) for a return annotation."""
    base = _strip(ret)
    # A plain ``str`` is text content already: structuredContent {"result": text} would only
    # send it twice (results doubled in size for every host). Annotate another type to get structured output.
    if ret is _EMPTY or base in (None, type(None), Any, str) or (content_types and _mentions(ret, content_types)):
        return None, False, None
    try:
        (schema,), defs = _generate([_normalize(ret)], "serialization")
    except TypeError:
        return None, False, None
    if not schema:
        return None, False, None
    target = _resolve(schema, defs)
    if target.get("type") == "object":
        return _attach_defs(dict(target), defs), False, _normalize(ret)
    wrapped = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
    return _attach_defs(wrapped, defs), True, _normalize(ret)
