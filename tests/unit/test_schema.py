"""``_schema``: type hints -> JSON Schema, JSON arguments -> Python arguments, return values ->
structuredContent; and ``_docstrings``. Pure, no event loop.

Every generated schema is checked to be valid JSON Schema 2020-12 and a valid MCP ``Tool``
(inputSchema/outputSchema) in each protocol version that has the field; sample arguments are
checked with jsonschema and with ``bind`` (valid ones accepted by both, invalid ones rejected
by both).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import importlib.util
import inspect
import subprocess
import sys
import textwrap
import types
import uuid
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple, Optional, TypedDict, Union

import jsonschema
import msgspec
import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpio._callables
from mcpio._content import CONTENT_TYPES, Image, Text, ToolResult
from mcpio._docstrings import parse_docstring
from mcpio._schema import ArgumentError, FunctionSignature, UnknownArguments, analyze_function, prompt_arguments
from mcpio._schema_output import OutputMismatch
from mcpio._server._context import Context

EMPTY = inspect.Parameter.empty  # what a test function's parameter default is not
NO_DEFAULT = mcpio._callables.EMPTY  # how mcpio marks a parameter without a default
TOOL_CONTENT = CONTENT_TYPES + (ToolResult,)


# ---- module-level types (annotations are strings here: ``from __future__ import annotations``) ----


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"
    BLUE = "blue"


class Level(enum.IntEnum):
    HIGH = 3
    LOW = 1
    MID = 2


@dataclasses.dataclass
class Point:
    """A point on the plane."""

    x: int
    y: int = 0


@dataclasses.dataclass
class Line:
    start: Point
    end: Point
    color: Color = Color.RED


@dataclasses.dataclass
class Tree:
    value: int
    children: list[Tree] = dataclasses.field(default_factory=list)


class Movie(TypedDict):
    title: str
    year: int


class Box(msgspec.Struct):
    width: float
    height: float


class Pair(NamedTuple):
    left: int
    right: str


class Inner(pydantic.BaseModel):
    v: int = pydantic.Field(ge=0, description="vee")


class User(pydantic.BaseModel):
    """A user."""

    name: str
    inner: Inner
    color: Color = Color.GREEN


class Node(pydantic.BaseModel):
    kids: list[Node] = []


class Ctx:
    """Stands in for the framework's Context."""


class SubCtx(Ctx):
    pass


class Opaque:
    """Not representable in JSON Schema."""


def sig_of(annotation: Any, default: Any = EMPTY, **kw: Any) -> FunctionSignature:
    """The signature of ``def f(v: annotation [= default])``."""

    def f(v):
        return v

    f.__annotations__ = {"v": annotation}
    if default is not EMPTY:
        f.__defaults__ = (default,)
    return analyze_function(f, **kw)


def returning(annotation: Any) -> FunctionSignature:
    def f():
        return None

    f.__annotations__ = {"return": annotation}
    return analyze_function(f, content_types=TOOL_CONTENT)


def check_schema(schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)


def valid(schema: dict[str, Any], instance: Any) -> bool:
    validator = jsonschema.Draft202012Validator
    return validator(schema, format_checker=validator.FORMAT_CHECKER).is_valid(instance)


# ---- property schemas -----------------------------------------------------------------------------

PROPERTY_CASES = [
    ("int", int, {"type": "integer"}),
    ("float", float, {"type": "number"}),
    ("bool", bool, {"type": "boolean"}),
    ("str", str, {"type": "string"}),
    ("bytes", bytes, {"type": "string", "contentEncoding": "base64"}),
    ("None", None, {"type": "null"}),
    ("Optional", Optional[int], {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    ("X | None", int | None, {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    ("Union", Union[int, str], {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
    ("Literal str keeps order", Literal["b", "a"], {"enum": ["b", "a"], "type": "string"}),
    ("Literal int", Literal[2, 1], {"enum": [2, 1], "type": "integer"}),
    ("Literal bool", Literal[True], {"enum": [True], "type": "boolean"}),
    ("Literal mixed has no type", Literal[1, "a"], {"enum": [1, "a"]}),
    ("Literal with None", Literal["a", None], {"enum": ["a", None], "type": ["string", "null"]}),
    ("Enum inlined in declaration order", Color, {"enum": ["red", "green", "blue"], "type": "string"}),
    ("IntEnum", Level, {"enum": [3, 1, 2], "type": "integer"}),
    ("list", list[int], {"type": "array", "items": {"type": "integer"}}),
    ("set", set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
    ("frozenset", frozenset[int], {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}),
    ("tuple[X, ...]", tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
    (
        "tuple[X, Y]",
        tuple[int, str],
        {
            "type": "array",
            "minItems": 2,
            "maxItems": 2,
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "items": False,
        },
    ),
    ("dict[str, X]", dict[str, float], {"type": "object", "additionalProperties": {"type": "number"}}),
    ("list of Enum", list[Color], {"type": "array", "items": {"enum": ["red", "green", "blue"], "type": "string"}}),
    ("datetime", datetime, {"type": "string", "format": "date-time"}),
    ("date", date, {"type": "string", "format": "date"}),
    ("time", time, {"type": "string", "format": "time"}),
    ("UUID", uuid.UUID, {"type": "string", "format": "uuid"}),
    ("Decimal", Decimal, {"type": "string", "format": "decimal"}),
    ("Optional datetime", Optional[datetime], {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}]}),
    ("Any", Any, {}),
    (
        "msgspec.Meta",
        Annotated[int, msgspec.Meta(ge=0, le=10, description="n")],
        {"type": "integer", "minimum": 0, "maximum": 10, "description": "n"},
    ),
    (
        "Meta on str",
        Annotated[str, msgspec.Meta(min_length=1, max_length=5, pattern="^[a-z]+$")],
        {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
    ),
    ("Annotated plain string", Annotated[str, "the name"], {"type": "string", "description": "the name"}),
    ("Meta title is stripped", Annotated[int, msgspec.Meta(title="T")], {"type": "integer"}),
    (
        "Annotated inside list",
        list[Annotated[int, msgspec.Meta(ge=0)]],
        {"type": "array", "items": {"type": "integer", "minimum": 0}},
    ),
    (
        "pydantic.Field in Annotated",
        Annotated[int, pydantic.Field(ge=1, lt=5, description="d")],
        {"type": "integer", "minimum": 1, "exclusiveMaximum": 5, "description": "d"},
    ),
    (
        "pydantic.Field string constraints",
        Annotated[str, pydantic.Field(min_length=2, max_length=3, pattern="^x")],
        {"type": "string", "minLength": 2, "maxLength": 3, "pattern": "^x"},
    ),
]


@pytest.mark.parametrize(
    ("annotation", "expected"), [c[1:] for c in PROPERTY_CASES], ids=[c[0] for c in PROPERTY_CASES]
)
def test_property_schema(annotation, expected):
    sig = sig_of(annotation)
    assert sig.input_schema == {
        "type": "object",
        "properties": {"v": expected},
        "required": ["v"],
        "additionalProperties": False,
    }
    assert sig.parameters[0].schema == expected
    check_schema(sig.input_schema)


MODEL_CASES = [
    (
        "dataclass",
        Point,
        {
            "Point": {
                "description": "A point on the plane.",
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
                "required": ["x"],
            }
        },
    ),
    (
        "TypedDict",
        Movie,
        {
            "Movie": {
                "type": "object",
                "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
                "required": ["title", "year"],
            }
        },
    ),
    (
        "msgspec.Struct",
        Box,
        {
            "Box": {
                "type": "object",
                "properties": {"width": {"type": "number"}, "height": {"type": "number"}},
                "required": ["width", "height"],
            }
        },
    ),
    (
        "NamedTuple",
        Pair,
        {
            "Pair": {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "minItems": 2,
                "maxItems": 2,
            }
        },
    ),
]


@pytest.mark.parametrize(("annotation", "defs"), [c[1:] for c in MODEL_CASES], ids=[c[0] for c in MODEL_CASES])
def test_model_parameters_are_refs_into_defs(annotation, defs):
    sig = sig_of(annotation)
    name = next(iter(defs))
    assert sig.input_schema["properties"]["v"] == {"$ref": f"#/$defs/{name}"}
    assert sig.input_schema["$defs"] == defs
    check_schema(sig.input_schema)


def test_nested_models_share_defs_and_enums_are_inlined():
    def draw(line: Line, points: list[Point]) -> None: ...

    schema = analyze_function(draw).input_schema
    assert schema["properties"] == {
        "line": {"$ref": "#/$defs/Line"},
        "points": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
    }
    assert set(schema["$defs"]) == {"Line", "Point"}  # the Color enum is inlined, not a def
    assert schema["$defs"]["Line"]["properties"]["color"] == {
        "enum": ["red", "green", "blue"],
        "type": "string",
        "default": "red",
    }
    check_schema(schema)


def test_recursive_dataclass():
    def grow(tree: Tree) -> None: ...

    sig = analyze_function(grow)
    assert sig.input_schema["$defs"]["Tree"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Tree"}
    check_schema(sig.input_schema)
    arg = {"tree": {"value": 1, "children": [{"value": 2}]}}
    assert valid(sig.input_schema, arg)
    assert sig.bind(arg) == {"tree": Tree(1, [Tree(2)])}


def test_pydantic_model_defs_are_hoisted_without_titles():
    def register(user: User, node: Node | None = None) -> None: ...

    schema = analyze_function(register).input_schema
    assert schema["properties"]["user"] == {"$ref": "#/$defs/User"}
    assert set(schema["$defs"]) == {"User", "Inner", "Node"}
    assert schema["$defs"]["User"] == {
        "description": "A user.",
        "type": "object",
        "required": ["name", "inner"],
        "properties": {
            "name": {"type": "string"},
            "inner": {"$ref": "#/$defs/Inner"},
            "color": {"enum": ["red", "green", "blue"], "type": "string", "default": "green"},
        },
    }
    assert schema["$defs"]["Inner"]["properties"]["v"] == {"type": "integer", "minimum": 0, "description": "vee"}
    assert "title" not in str(schema)
    check_schema(schema)


def test_no_title_keywords_but_properties_named_title_survive():
    def add(movie: Movie, title: str) -> None: ...

    schema = analyze_function(add).input_schema
    assert "title" in schema["properties"]
    assert "title" in schema["$defs"]["Movie"]["properties"]
    assert "title" not in schema["$defs"]["Movie"]


def test_required_iff_no_default_and_defaults_in_schema():
    def f(
        a: int,
        b: Optional[int],
        c: int = 3,
        d: Optional[str] = None,
        e: Color = Color.BLUE,
        f: tuple[int, int] = (1, 2),
        g: Point = Point(1, 2),
        h: Any = None,
    ) -> None: ...

    sig = analyze_function(f)
    assert sig.input_schema["required"] == ["a", "b"]
    props = sig.input_schema["properties"]
    assert "default" not in props["a"] and "default" not in props["b"]
    assert [props[k]["default"] for k in "cdefgh"] == [3, None, "blue", [1, 2], {"x": 1, "y": 2}, None]
    assert [p.required for p in sig.parameters] == [True, True, False, False, False, False, False, False]
    assert sig.parameters[2].default == 3 and sig.parameters[0].default is NO_DEFAULT
    check_schema(sig.input_schema)


def test_unencodable_default_is_left_out_of_the_schema():
    sentinel = Opaque()

    def f(a: Any = sentinel) -> None: ...

    sig = analyze_function(f)
    assert sig.input_schema == {"type": "object", "properties": {"a": {}}, "additionalProperties": False}
    assert sig.bind({}) == {}


def test_no_parameters_and_unannotated_parameters():
    def none() -> None: ...

    def loose(a, b=1): ...

    assert analyze_function(none).input_schema == {"type": "object", "properties": {}, "additionalProperties": False}
    sig = analyze_function(loose)
    assert sig.input_schema == {
        "type": "object",
        "properties": {"a": {}, "b": {"default": 1}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert sig.bind({"a": [1, {"x": None}]}) == {"a": [1, {"x": None}]}


def test_pydantic_field_as_default():
    def f(
        k: int = pydantic.Field(3, description="kay", ge=0),
        items: list[int] = pydantic.Field(default_factory=list),
        req: str = pydantic.Field(description="required one"),
    ) -> None: ...

    sig = analyze_function(f)
    props = sig.input_schema["properties"]
    assert props["k"] == {"type": "integer", "minimum": 0, "description": "kay", "default": 3}
    assert props["items"] == {"type": "array", "items": {"type": "integer"}}
    assert props["req"] == {"type": "string", "description": "required one"}
    assert sig.input_schema["required"] == ["req"]
    # The Python default is a FieldInfo, so bind must supply the real default.
    assert sig.bind({"req": "x"}) == {"k": 3, "items": [], "req": "x"}
    with pytest.raises(ArgumentError, match="'k': expected integer >= 0, got -1"):
        sig.bind({"req": "x", "k": -1})


# ---- descriptions ------------------------------------------------------------------------------

GOOGLE = """Add two numbers.

    Longer explanation
    over two lines.

    Args:
        a: The first number.
        b (int): The second
            number, continued.
        *rest: ignored stars.

    Returns:
        The sum.
    """

NUMPY = """Add two numbers.

    Parameters
    ----------
    a : int
        The first number.
    b : int, optional
        The second
        number, continued.

    Returns
    -------
    int
        The sum.
    """

SPHINX = """Add two numbers.

    :param a: The first number.
    :param int b: The second
        number, continued.
    :type a: int
    :returns: The sum.
    """


@pytest.mark.parametrize("doc", [GOOGLE, NUMPY, SPHINX], ids=["google", "numpy", "sphinx"])
def test_docstring_styles(doc):
    description, params = parse_docstring(doc)
    assert params["a"] == "The first number."
    assert params["b"] == "The second number, continued."
    assert description.startswith("Add two numbers.")
    assert "first number" not in description and ":param" not in description and "Args:" not in description
    assert "The sum." in description  # other sections stay


def test_google_description_keeps_body_and_returns():
    description, params = parse_docstring(GOOGLE)
    assert description == "Add two numbers.\n\nLonger explanation\nover two lines.\n\nReturns:\n    The sum."
    assert params == {"a": "The first number.", "b": "The second number, continued.", "rest": "ignored stars."}


def test_numpy_section_ends_at_next_header():
    description, params = parse_docstring(NUMPY)
    assert description == "Add two numbers.\n\nReturns\n-------\nint\n    The sum."
    assert set(params) == {"a", "b"}


@pytest.mark.parametrize("doc", [None, "", "   \n  "])
def test_empty_docstrings(doc):
    assert parse_docstring(doc) == (None, {})


def test_docstring_with_only_args_has_no_description():
    assert parse_docstring("\n    Args:\n        a: x\n    ") == (None, {"a": "x"})


def test_colons_inside_prose_are_prose_and_headers_still_parse():
    # Only a line ending with ':' (Google), starting with ':' (Sphinx) or over a rule (NumPy)
    # is tried as a header: the same results as trying the patterns on every line with a colon.
    doc = "Look up: a thing.\nNote: at 10:30.\n\nArgs:  \n    q: the query\n  :param n:  a number\n"
    assert parse_docstring(doc) == ("Look up: a thing.\nNote: at 10:30.", {"q": "the query", "n": "a number"})


def test_google_entry_text_on_next_line_and_section_aliases():
    doc = "Do it.\n\nArguments:\n    a:\n        On the next line.\n\nNotes:\n    kept\n"
    assert parse_docstring(doc) == ("Do it.\n\nNotes:\n    kept", {"a": "On the next line."})


def test_function_description_and_parameter_descriptions():
    def add(a: int, b: Annotated[int, "from Annotated"], c: int = 0) -> int:
        """Add numbers.

        Args:
            a: from the docstring
            b: loses to Annotated
        """
        return a + b + c

    sig = analyze_function(add)
    assert sig.description == "Add numbers."
    assert [p.description for p in sig.parameters] == ["from the docstring", "from Annotated", None]
    assert sig.input_schema["properties"]["a"] == {"type": "integer", "description": "from the docstring"}
    assert sig.input_schema["properties"]["b"] == {"type": "integer", "description": "from Annotated"}
    assert "description" not in sig.input_schema["properties"]["c"]


def test_no_docstring_means_no_description():
    def f(a: int) -> None: ...

    assert analyze_function(f).description is None


def test_description_on_a_model_reference():
    def f(p: Point) -> None:
        """F.

        Args:
            p: where
        """

    assert analyze_function(f).input_schema["properties"]["p"] == {"$ref": "#/$defs/Point", "description": "where"}


# ---- injected parameters ---------------------------------------------------------------------------


def test_injected_parameters_are_not_in_the_schema():
    def f(
        ctx: Ctx, a: int, maybe: Optional[Ctx] = None, sub: SubCtx | None = None, ann: Annotated[Ctx, "x"] = None
    ) -> None: ...

    sig = analyze_function(f, injected=(Ctx,))
    assert sig.injected == ["ctx", "maybe", "sub", "ann"]
    assert [p.name for p in sig.parameters] == ["a"]
    assert sig.input_schema == {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    assert sig.bind({"a": 1}) == {"a": 1}
    with pytest.raises(UnknownArguments, match="unknown argument 'ctx'"):  # injected: not the client's to give
        sig.bind({"a": 1, "ctx": "given"})


def test_the_real_context_is_injected():
    def f(x: int, ctx: Context) -> None: ...

    sig = analyze_function(f, injected=(Context,))
    assert sig.injected == ["ctx"] and list(sig.input_schema["properties"]) == ["x"]


def test_without_injected_types_a_context_parameter_is_an_error():
    def f(ctx: Ctx) -> None: ...

    with pytest.raises(TypeError, match="parameter 'ctx' has type Ctx"):
        analyze_function(f)


# ---- bind: conversions ----------------------------------------------------------------------------

UTC = UTC
BIND_CASES = [
    ("int", int, 3, 3),
    ("float from int", float, 3, 3.0),
    ("bool", bool, True, True),
    ("str", str, "hi", "hi"),
    ("bytes from base64", bytes, "aGVsbG8=", b"hello"),
    ("Optional None", Optional[int], None, None),
    ("Union keeps str", Union[int, str], "5", "5"),
    ("Literal", Literal["a", "b"], "b", "b"),
    ("Enum", Color, "green", Color.GREEN),
    ("IntEnum", Level, 2, Level.MID),
    ("list", list[int], [1, 2], [1, 2]),
    ("set", set[int], [1, 2], {1, 2}),
    ("frozenset", frozenset[str], ["a"], frozenset({"a"})),
    ("tuple var", tuple[int, ...], [1, 2, 3], (1, 2, 3)),
    ("tuple fixed", tuple[int, str], [1, "a"], (1, "a")),
    ("dict", dict[str, float], {"a": 1}, {"a": 1.0}),
    ("dataclass", Point, {"x": 1}, Point(1, 0)),
    (
        "nested dataclass",
        Line,
        {"start": {"x": 1}, "end": {"x": 2, "y": 3}, "color": "blue"},
        Line(Point(1), Point(2, 3), Color.BLUE),
    ),
    ("list of dataclass", list[Point], [{"x": 1}, {"x": 2}], [Point(1), Point(2)]),
    ("dict of dataclass", dict[str, Point], {"a": {"x": 1}}, {"a": Point(1)}),
    ("TypedDict", Movie, {"title": "T", "year": 1999}, {"title": "T", "year": 1999}),
    ("Struct", Box, {"width": 1, "height": 2.5}, Box(1.0, 2.5)),
    ("NamedTuple", Pair, [1, "r"], Pair(1, "r")),
    ("datetime", datetime, "2024-01-02T03:04:05Z", datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)),
    ("date", date, "2024-01-02", date(2024, 1, 2)),
    ("time", time, "03:04:05", time(3, 4, 5)),
    ("UUID", uuid.UUID, "12345678-1234-5678-1234-567812345678", uuid.UUID("12345678-1234-5678-1234-567812345678")),
    ("Decimal", Decimal, "1.50", Decimal("1.50")),
    ("Any", Any, {"k": [1]}, {"k": [1]}),
    ("Meta within bounds", Annotated[int, msgspec.Meta(ge=0, le=10)], 10, 10),
    ("pydantic model", User, {"name": "a", "inner": {"v": 1}}, User(name="a", inner=Inner(v=1))),
    ("pydantic in list", list[Inner], [{"v": 1}], [Inner(v=1)]),
    ("pydantic Field constraints", Annotated[int, pydantic.Field(ge=1)], 1, 1),
]


@pytest.mark.parametrize(
    ("annotation", "value", "expected"), [c[1:] for c in BIND_CASES], ids=[c[0] for c in BIND_CASES]
)
def test_bind_converts_to_the_annotated_type(annotation, value, expected):
    sig = sig_of(annotation)
    assert valid(sig.input_schema, {"v": value}), "a valid sample must validate against the schema"
    kwargs = sig.bind({"v": value})
    assert kwargs == {"v": expected}
    assert type(kwargs["v"]) is type(expected)


def test_bind_leaves_missing_optionals_out_and_refuses_unknown_arguments():
    def f(a: int, b: int = 2, c: Optional[str] = None) -> None: ...

    sig = analyze_function(f)
    assert sig.bind({"a": 1}) == {"a": 1}
    assert sig.bind({"a": 1, "c": None}) == {"a": 1, "c": None}
    with pytest.raises(UnknownArguments) as info:  # never dropped silently (issue 34)
        sig.bind({"a": 1, "bb": 5, "zzz": 5})
    assert str(info.value) == (
        "Invalid arguments for f: unknown argument 'bb' (did you mean 'b'?); unknown argument 'zzz'; it takes a, b, c"
    )
    assert sig.bind({"a": 1, "b": 5, "c": "x"}) == {"a": 1, "b": 5, "c": "x"}


def test_bind_accepts_none_and_mappings():
    def f(a: int = 1) -> None: ...

    sig = analyze_function(f)
    assert sig.bind(None) == {}
    assert sig.bind({}) == {}
    assert sig.bind(types.MappingProxyType({"a": 4})) == {"a": 4}


def test_bind_converts_template_strings():
    def item(id: int, ratio: float, flag: bool, name: str, level: Level, when: date) -> None: ...

    sig = analyze_function(item)
    raw = {"id": "42", "ratio": "0.5", "flag": "true", "name": "42", "level": "3", "when": "2024-05-06"}
    assert sig.bind(raw) == {
        "id": 42,
        "ratio": 0.5,
        "flag": True,
        "name": "42",
        "level": Level.HIGH,
        "when": date(2024, 5, 6),
    }
    with pytest.raises(ArgumentError, match="'id': expected integer, got string 'abc'"):
        sig.bind({**raw, "id": "abc"})


def test_bind_decodes_json_encoded_arrays_and_objects():
    def f(tags: list[str], point: Point, name: str = "") -> None: ...

    sig = analyze_function(f)
    assert sig.bind({"tags": '["a", "b"]', "point": '{"x": 1}'}) == {"tags": ["a", "b"], "point": Point(1)}
    assert sig.bind({"tags": [], "point": {"x": 1}, "name": '["kept"]'})["name"] == '["kept"]'
    with pytest.raises(ArgumentError, match="'tags': expected array, got string 'nope'"):
        sig.bind({"tags": "nope", "point": {"x": 1}})


# ---- bind: rejections (jsonschema agrees) ---------------------------------------------------------

REJECT_CASES = [
    ("missing", int, EMPTY, "'v' is required"),
    ("string for int", int, "x", "'v': expected integer, got string 'x'"),
    ("float for int", int, 1.5, "'v': expected integer, got number 1.5"),
    ("bool for int", int, True, "'v': expected integer, got boolean true"),
    ("null for int", int, None, "'v': expected integer, got null"),
    ("int for str", str, 5, "'v': expected string, got integer 5"),
    ("object for list", list[int], {"a": 1}, "'v': expected array, got object"),
    ("bad item", list[int], [1, "a"], "'v[1]': expected integer, got string 'a'"),
    ("bad enum", Color, "pink", "'v': invalid value 'pink'; expected one of 'red', 'green', 'blue'"),
    ("bad literal", Literal["a", "b"], "c", "'v': invalid value 'c'; expected one of 'a', 'b'"),
    ("below minimum", Annotated[int, msgspec.Meta(ge=0)], -1, "'v': expected integer >= 0, got -1"),
    ("too long", Annotated[str, msgspec.Meta(max_length=3)], "abcd", "'v': expected string of length <= 3, got 'abcd'"),
    ("pattern", Annotated[str, msgspec.Meta(pattern="^a")], "b", "'v': expected string matching regex '^a', got 'b'"),
    ("tuple length", tuple[int, str], [1], "'v': expected array of length 2, got 1"),
    ("dataclass field missing", Point, {"y": 1}, "'v.x' is required"),
    ("dataclass field type", Point, {"x": "q"}, "'v.x': expected integer, got string 'q'"),
    ("nested field", Line, {"start": {"x": 1}, "end": {"x": []}}, "'v.end.x': expected integer, got array"),
    ("TypedDict field", Movie, {"title": "t"}, "'v.year' is required"),
    ("bad date", date, "yesterday", "'v': invalid RFC3339 encoded date, got 'yesterday'"),
    ("bad uuid", uuid.UUID, "nope", "'v': invalid UUID, got 'nope'"),
    (
        "pydantic nested constraint",
        User,
        {"name": "a", "inner": {"v": -1}},
        "'v.inner.v': input should be greater than or equal to 0, got -1",
    ),
    ("pydantic missing field", User, {"name": "a"}, "'v.inner' is required"),
    ("pydantic Field in Annotated", Annotated[int, pydantic.Field(le=5)], 6, "'v': expected integer <= 5, got 6"),
]


@pytest.mark.parametrize(
    ("annotation", "value", "message"), [c[1:] for c in REJECT_CASES], ids=[c[0] for c in REJECT_CASES]
)
def test_bind_rejects_what_the_schema_rejects(annotation, value, message):
    sig = sig_of(annotation)
    arguments = {} if value is EMPTY else {"v": value}
    assert not valid(sig.input_schema, arguments), "an invalid sample must fail the schema too"
    with pytest.raises(ArgumentError) as info:
        sig.bind(arguments)
    assert str(info.value) == f"Invalid arguments for f: {message}"


def test_bad_datetime_is_rejected():  # jsonschema checks date-time only with rfc3339-validator installed
    with pytest.raises(
        ArgumentError, match="^Invalid arguments for f: 'v': invalid RFC3339 encoded datetime, got 'yesterday'$"
    ):
        sig_of(datetime).bind({"v": "yesterday"})


def test_error_message_names_the_function_and_argument():
    def add(a: int, b: int) -> int:
        return a + b

    sig = analyze_function(add)
    with pytest.raises(ArgumentError, match=r"^Invalid arguments for add: 'b' is required$"):
        sig.bind({"a": 1})
    with pytest.raises(ArgumentError, match=r"^Invalid arguments for add: 'a': expected integer, got string 'x'$"):
        sig.bind({"a": "x", "b": 2})


@pytest.mark.parametrize("arguments", [[1, 2], "x", 3])
def test_arguments_must_be_an_object(arguments):
    def f(a: int = 0) -> None: ...

    with pytest.raises(ArgumentError, match="expected an object"):
        analyze_function(f).bind(arguments)


# ---- property: what the schema accepts, bind accepts --------------------------------------------


def _mixed(
    a: int,
    b: float = 0,
    c: str = "",
    d: bool = False,
    e: list[int] = [],
    f: Optional[str] = None,
    g: Literal["x", "y"] = "x",
    h: Color = Color.RED,
    i: dict[str, int] = {},
    j: Point | None = None,
    k: tuple[int, str] = (0, ""),
    m: Annotated[int, msgspec.Meta(ge=0, le=10)] = 0,
    n: Annotated[str, msgspec.Meta(max_length=3)] = "",
    o: set[int] = frozenset(),
) -> None: ...


_MIXED = analyze_function(_mixed)
_json = st.recursive(
    # Floats stay within ±2**53: beyond it an integral float (9007199254740994.0) is an "integer"
    # to JSON Schema but not a safe integer, and bind refuses it for an int parameter.
    st.none() | st.booleans() | st.integers() | st.floats(-(2**53), 2**53, allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
_typed = {
    "a": st.integers(),
    "b": st.floats(allow_nan=False, allow_infinity=False) | st.integers(),
    "c": st.text(),
    "d": st.booleans(),
    "e": st.lists(st.integers()),
    "f": st.none() | st.text(),
    "g": st.sampled_from(["x", "y"]),
    "h": st.sampled_from(["red", "green", "blue"]),
    "i": st.dictionaries(st.text(), st.integers()),
    "j": st.fixed_dictionaries({"x": st.integers()}, optional={"y": st.integers()}),
    "k": st.tuples(st.integers(), st.text()).map(list),
    "m": st.integers(-2, 12),
    "n": st.text(max_size=5),
    "o": st.lists(st.integers(), unique=True),
}


_arguments = st.fixed_dictionaries({"a": _typed["a"]}, optional={k: v for k, v in _typed.items() if k != "a"}) | (
    st.fixed_dictionaries({}, optional={k: v | _json for k, v in _typed.items()})
)


@settings(max_examples=300, deadline=None)
@given(_arguments)
def test_schema_valid_implies_bind_accepts(arguments):
    if valid(_MIXED.input_schema, arguments):
        _MIXED.bind(arguments)
    else:
        try:
            _MIXED.bind(arguments)
        except ArgumentError as exc:
            assert str(exc).startswith("Invalid arguments for _mixed: ")


# ---- output schema and structured content -----------------------------------------------------


def _wrapped(schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


OUTPUT_CASES = [
    ("int", int, 3, _wrapped({"type": "integer"}), {"result": 3}),
    ("bool", bool, False, _wrapped({"type": "boolean"}), {"result": False}),
    ("list", list[int], [1, 2], _wrapped({"type": "array", "items": {"type": "integer"}}), {"result": [1, 2]}),
    (
        "Optional int",
        Optional[int],
        None,
        _wrapped({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
        {"result": None},
    ),
    ("Enum", Color, Color.RED, _wrapped({"enum": ["red", "green", "blue"], "type": "string"}), {"result": "red"}),
    (
        "datetime",
        datetime,
        datetime(2024, 1, 2, tzinfo=UTC),
        _wrapped({"type": "string", "format": "date-time"}),
        {"result": "2024-01-02T00:00:00Z"},
    ),
    (
        "tuple",
        tuple[int, str],
        (1, "a"),
        _wrapped(
            {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "prefixItems": [{"type": "integer"}, {"type": "string"}],
                "items": False,
            }
        ),
        {"result": [1, "a"]},
    ),
    (
        "dict[str, int] is an object",
        dict[str, int],
        {"a": 1},
        {"type": "object", "additionalProperties": {"type": "integer"}},
        {"a": 1},
    ),
    (
        "dataclass is an object",
        Point,
        Point(1, 2),
        {
            "description": "A point on the plane.",
            "type": "object",
            "properties": {"x": {"type": "integer"}, "y": {"type": "integer", "default": 0}},
            "required": ["x"],
        },
        {"x": 1, "y": 2},
    ),
    (
        "TypedDict",
        Movie,
        {"title": "t", "year": 1},
        {
            "type": "object",
            "properties": {"title": {"type": "string"}, "year": {"type": "integer"}},
            "required": ["title", "year"],
        },
        {"title": "t", "year": 1},
    ),
    (
        "Struct",
        Box,
        Box(1.0, 2.0),
        {
            "type": "object",
            "properties": {"width": {"type": "number"}, "height": {"type": "number"}},
            "required": ["width", "height"],
        },
        {"width": 1.0, "height": 2.0},
    ),
    (
        "NamedTuple is an array",
        Pair,
        Pair(1, "r"),
        _wrapped({"$ref": "#/$defs/Pair"})
        | {
            "$defs": {
                "Pair": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}, {"type": "string"}],
                    "minItems": 2,
                    "maxItems": 2,
                }
            }
        },
        {"result": [1, "r"]},
    ),
    ("Optional dataclass is wrapped", Optional[Point], None, None, {"result": None}),
    ("list of dataclass", list[Point], [Point(1)], None, {"result": [{"x": 1, "y": 0}]}),
    (
        "dataclass with nested refs",
        Line,
        Line(Point(1), Point(2)),
        None,
        {"start": {"x": 1, "y": 0}, "end": {"x": 2, "y": 0}, "color": "red"},
    ),
    ("recursive dataclass", Tree, Tree(1, [Tree(2)]), None, {"value": 1, "children": [{"value": 2, "children": []}]}),
    (
        "pydantic model",
        User,
        User(name="a", inner=Inner(v=1)),
        None,
        {"name": "a", "inner": {"v": 1}, "color": "green"},
    ),
    ("pydantic in a list", list[Inner], [Inner(v=2)], None, {"result": [{"v": 2}]}),
    (
        "Annotated return",
        Annotated[int, msgspec.Meta(description="count")],
        2,
        _wrapped({"type": "integer", "description": "count"}),
        {"result": 2},
    ),
]


@pytest.mark.parametrize(
    ("annotation", "value", "schema", "structured"), [c[1:] for c in OUTPUT_CASES], ids=[c[0] for c in OUTPUT_CASES]
)
def test_output_schema_and_structured_content(annotation, value, schema, structured):
    sig = returning(annotation)
    assert sig.output_schema is not None
    if schema is not None:
        assert sig.output_schema == schema
    assert sig.output_schema["type"] == "object"
    assert sig.wrap_output == ("result" in structured and sig.output_schema.get("required") == ["result"])
    check_schema(sig.output_schema)
    assert sig.to_structured(value) == structured
    assert valid(sig.output_schema, structured)


def test_unwrapped_object_schema_carries_only_the_defs_it_needs():
    line = returning(Line).output_schema
    assert line["properties"]["start"] == {"$ref": "#/$defs/Point"}
    assert set(line["$defs"]) == {"Point"}
    tree = returning(Tree).output_schema
    assert set(tree["$defs"]) == {"Tree"}  # recursive: the root refers to itself
    user = returning(User).output_schema
    assert set(user["$defs"]) == {"Inner"} and "title" not in str(user)
    assert "$defs" not in returning(Point).output_schema


NO_OUTPUT_CASES = [
    ("str: text is its own content", str),
    ("None", None),
    ("NoneType", type(None)),
    ("Any", Any),
    ("Text", Text),
    ("Image", Image),
    ("ToolResult", ToolResult),
    ("list of content", list[Text]),
    ("content or str", Union[Text, str]),
    ("Optional content", Optional[Image]),
    ("list of content union", list[Union[Text, Image]]),
    ("Annotated content", Annotated[Text, "x"]),
    ("unrepresentable", Opaque),
    ("Path", Path),
]


@pytest.mark.parametrize("annotation", [c[1] for c in NO_OUTPUT_CASES], ids=[c[0] for c in NO_OUTPUT_CASES])
def test_no_output_schema(annotation):
    sig = returning(annotation)
    assert sig.output_schema is None and sig.wrap_output is False


def test_missing_return_annotation_has_no_output_schema():
    def f(): ...

    assert analyze_function(f).output_schema is None


def test_to_structured_rejects_a_non_object_for_an_object_schema():
    sig = returning(Point)
    with pytest.raises(TypeError, match="returned int 3, which does not match its return annotation Point"):
        sig.to_structured(3)


def test_to_structured_holds_the_value_to_the_annotation_lenient_only_where_lossless():
    with pytest.raises(OutputMismatch, match=r"f\(\) returned str '5', which does not match its return annotation int"):
        returning(int).to_structured("5")  # a -> int tool returning a string: its own bug (issue 34)
    with pytest.raises(OutputMismatch, match=r"list\[int\]"):
        returning(list[int]).to_structured([1, "2"])
    assert returning(float).to_structured(1) == {"result": 1}  # an int is a number: kept as is
    assert returning(list[int]).to_structured((1, 2)) == {"result": [1, 2]}
    when = datetime(2024, 1, 2, 3, 4, 5)
    assert returning(datetime).to_structured(when) == {"result": "2024-01-02T03:04:05"}
    assert returning(Point).to_structured(Point(1, 2)) == {"x": 1, "y": 2}


# ---- MCP Tool shape -------------------------------------------------------------------------------


def _tools():
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    def draw(line: Line, points: list[Point], user: User | None = None, when: datetime | None = None) -> Line: ...

    def nothing() -> None: ...

    def template(owner: str, repo: Annotated[str, "the repository"], n: Literal[1, 2] = 1) -> dict[str, Any]: ...

    return [add, draw, nothing, template]


@pytest.mark.parametrize("version", ["2025-06-18", "2025-11-25", "2026-07-28"])
def test_schemas_are_valid_mcp_tool_definitions(version, wire_validator):
    for fn in _tools():
        sig = analyze_function(fn, content_types=TOOL_CONTENT)
        tool = {"name": sig.name, "inputSchema": sig.input_schema}
        if sig.output_schema is not None:
            tool["outputSchema"] = sig.output_schema
        wire_validator.validate_def(tool, version, "Tool")
        check_schema(sig.input_schema)


# ---- callables ---------------------------------------------------------------------------------


class Adder:
    """Adds things."""

    async def __call__(self, a: int, b: int = 1) -> int:
        return a + b

    def method(self, a: int) -> str:
        """A method."""
        return str(a)


def test_sync_and_async_functions():
    def s(a: int) -> int:
        return a

    async def a(a: int) -> int:
        return a

    assert analyze_function(s).is_async is False
    assert analyze_function(a).is_async is True


def test_functools_partial():
    async def h(a: int, b: str, c: float = 1.0) -> int:
        """H."""
        return a

    sig = analyze_function(functools.partial(h, 1))
    assert (sig.name, sig.is_async, sig.description) == ("h", True, "H.")
    assert list(sig.input_schema["properties"]) == ["b", "c"]
    kw = analyze_function(functools.partial(h, b="x"))
    assert kw.input_schema["required"] == ["a"] and kw.input_schema["properties"]["b"]["default"] == "x"
    assert kw.bind({"a": 1}) == {"a": 1}


def test_callable_object_and_bound_method():
    sig = analyze_function(Adder())
    assert (sig.name, sig.is_async, sig.description) == ("Adder", True, "Adds things.")
    assert sig.input_schema["required"] == ["a"]
    assert sig.output_schema == _wrapped({"type": "integer"})
    method = analyze_function(Adder().method)
    assert (method.name, method.is_async, method.description) == ("method", False, "A method.")
    assert list(method.input_schema["properties"]) == ["a"]


def test_name_override_and_lambda():
    def f(a: int) -> None: ...

    assert analyze_function(f, name="renamed").name == "renamed"
    assert analyze_function(lambda x: x).input_schema == {
        "type": "object",
        "properties": {"x": {}},
        "required": ["x"],
        "additionalProperties": False,
    }


def test_future_annotations_and_forward_refs(tmp_path):
    source = textwrap.dedent('''
        from __future__ import annotations
        import dataclasses
        from typing import Annotated

        def tool(shape: Shape, count: Annotated[int, "how many"] = 1) -> Shape:
            """Make shapes.

            Args:
                shape: the shape
            """
            return shape

        def quoted(shape: "Shape") -> "list[Shape]":
            return [shape]

        @dataclasses.dataclass
        class Shape:
            sides: int
            name: str = "poly"
    ''')
    path = tmp_path / "future_tools.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("future_tools", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["future_tools"] = module
    try:
        spec.loader.exec_module(module)
        sig = analyze_function(module.tool)
        assert sig.input_schema["properties"] == {
            "shape": {"$ref": "#/$defs/Shape", "description": "the shape"},
            "count": {"type": "integer", "description": "how many", "default": 1},
        }
        assert sig.bind({"shape": {"sides": 3}}) == {"shape": module.Shape(3)}
        assert sig.output_schema["properties"]["sides"] == {"type": "integer"}
        quoted = analyze_function(module.quoted)
        assert quoted.wrap_output and quoted.output_schema["$defs"]["Shape"]["required"] == ["sides"]
    finally:
        del sys.modules["future_tools"]


# ---- rejections at registration ---------------------------------------------------------------------


def _star_args(a: int, *rest: int) -> None: ...


def _star_kwargs(a: int, **extra: int) -> None: ...


def _positional_only(a: int, /, b: int) -> None: ...


def _opaque(a: int, thing: Opaque) -> None: ...


def _two_dataclasses(a: Union[Point, Line]) -> None: ...


def _nested_path(ok: int, cb: list[Path]) -> None: ...


def _unresolvable(a: NoSuchType) -> None: ...  # noqa: F821


REJECTED = [
    ("*args", _star_args, r"_star_args\(\): \*rest is not supported"),
    ("**kwargs", _star_kwargs, r"_star_kwargs\(\): \*\*extra is not supported"),
    ("positional-only", _positional_only, r"_positional_only\(\): positional-only parameter 'a' is not supported"),
    ("unrepresentable type", _opaque, r"_opaque\(\): parameter 'thing' has type Opaque, which cannot be represented"),
    ("unsupported union", _two_dataclasses, r"_two_dataclasses\(\): parameter 'a' has type .*Point.*Line"),
    ("nested unrepresentable", _nested_path, r"_nested_path\(\): parameter 'cb' has type list\[pathlib.Path\]"),
    ("unresolvable annotation", _unresolvable, r"_unresolvable\(\): cannot resolve .*NoSuchType"),
]


@pytest.mark.parametrize(("fn", "message"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_rejected_at_registration(fn, message):
    with pytest.raises(TypeError, match=message):
        analyze_function(fn)


def test_not_callable():
    with pytest.raises(TypeError, match="not callable"):
        analyze_function(3)  # type: ignore[arg-type]


# ---- prompts, completion, import cost ----------------------------------------------------------------


def test_prompt_arguments():
    def review(code: str, language: Literal["py", "js"] = "py", ctx: Ctx | None = None) -> str:
        """Review code.

        Args:
            code: the code to review
        """
        return code

    sig = analyze_function(review, injected=(Ctx,))
    assert prompt_arguments(sig) == [
        {"name": "code", "description": "the code to review", "required": True},
        {"name": "language", "required": False},
    ]


def test_enum_and_literal_values_are_readable_for_completion():
    def f(color: Color, level: Optional[Level] = None, kind: Literal["b", "a"] = "b") -> None: ...

    sig = analyze_function(f)
    schemas = {p.name: p.schema for p in sig.parameters}
    assert schemas["color"]["enum"] == ["red", "green", "blue"]
    assert schemas["level"]["anyOf"][0]["enum"] == [3, 1, 2]
    assert schemas["kind"]["enum"] == ["b", "a"]


def test_importing_the_module_does_not_import_pydantic():
    code = "import mcpio._schema, mcpio._docstrings, sys; assert 'pydantic' not in sys.modules, 'pydantic imported'"
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_plain_functions_work_without_pydantic_loaded():
    code = textwrap.dedent("""
        import dataclasses, sys
        from mcpio._schema import analyze_function
        @dataclasses.dataclass
        class P:
            x: int
        def f(p: P, n: int = 1) -> P:
            return p
        sig = analyze_function(f)
        assert sig.bind({"p": {"x": "2"}}) == {"p": P(2)}
        assert sig.to_structured(P(1)) == {"x": 1}
        assert "pydantic" not in sys.modules
    """)
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_plain_scalar_schemas_written_out_are_msgspecs_own() -> None:
    # _generate answers str/int/float/bool/None/Any from a table (issue 17: registering many tools
    # skips msgspec's type walk); the table must say exactly what msgspec says for each.
    from mcpio._schema import _SCALARS, _generate

    for tp, written in _SCALARS.items():
        (generated,), defs = msgspec.json.schema_components([tp])
        assert generated == written and defs == {}, tp
    schemas, defs = _generate([int, str], "validation")
    assert schemas == [{"type": "integer"}, {"type": "string"}] and defs == {}
    schemas[0]["description"] = "changed"  # a caller's edit must not change the table
    assert _SCALARS[int] == {"type": "integer"}


def test_the_arguments_struct_is_built_on_the_first_bind_not_at_registration() -> None:
    # issue 17: registering hundreds of tools compiles no msgspec decoders; the first call does,
    # and behaves as before (JSON-string arguments decoded, choices named in errors)
    def f(xs: list[int], mode: Literal["a", "b"] = "a") -> int:
        return len(xs)

    sig = analyze_function(f)
    assert sig._struct is None
    assert sig.bind({"xs": "[1, 2]"}) == {"xs": [1, 2]}
    assert sig._struct is not None
    with pytest.raises(ArgumentError, match="expected one of 'a', 'b'"):
        sig.bind({"xs": [1], "mode": "c"})
    again = analyze_function(f)  # bad arguments on the very first call
    with pytest.raises(ArgumentError, match="expected one of 'a', 'b'"):
        again.bind({"xs": [1], "mode": "c"})


def _plain(a: int, b: str, c: float, d: bool) -> None: ...


def _none() -> None: ...


@pytest.mark.parametrize("fn", [_plain, _none])
@pytest.mark.parametrize(
    "arguments",
    [
        {"a": 1, "b": "x", "c": 1.5, "d": True},
        {"d": False, "c": float("inf"), "b": "", "a": -(10**40)},  # any order, any int
        {"a": True, "b": "x", "c": 1.5, "d": True},  # bool is not an int
        {"a": 1, "b": "x", "c": 1, "d": True},  # an int converts to a float
        {"a": "1", "b": "x", "c": 1.5, "d": True},  # lenient: "1" converts to 1
        {"a": 1.0, "b": "x", "c": 1.5, "d": 1},
        {"a": 1, "b": "x", "c": 1.5},  # missing
        {"a": 1, "b": "x", "c": 1.5, "d": True, "e": 5},  # unknown keys are dropped
        {"a": 1, "b": "x", "c": 1.5, "e": 5},
        {"e": None},
        {},
        None,
    ],
)
def test_bind_exact_arguments_fast_path_matches_msgspec(fn, arguments):
    """``bind`` passes arguments that are exactly the declared plain types through as they are;
    the result (or the error) must be what the general path, msgspec's conversion, gives."""
    fast = analyze_function(fn)
    general = analyze_function(fn)
    general._exact = None

    def outcome(sig):
        try:
            kwargs = sig.bind(None if arguments is None else dict(arguments))
        except ArgumentError as exc:
            return ("error", str(exc))
        return ("ok", sorted((k, type(v).__name__, repr(v)) for k, v in kwargs.items()))

    assert fast._exact is not None
    assert outcome(fast) == outcome(general)


@pytest.mark.parametrize(
    "arguments", [{"a": 1, "b": "x", "c": 1.5, "d": True}, {"a": "1", "b": "x", "c": 1.5, "d": True}, {"a": 1}, None]
)
def test_bind_without_a_copy_gives_the_same_arguments(arguments):
    """``bind(arguments, False)`` (Tool.call_sync: the result is only unpacked into the call) gives
    what ``bind`` gives; it is ``arguments`` itself only when they needed nothing done, and the
    default still gives a dict of its own (invoke adds Context parameters to it)."""
    sig = analyze_function(_plain)

    def outcome(copy):
        try:
            kwargs = sig.bind(arguments, copy)
        except ArgumentError as exc:
            return ("error", str(exc)), None
        return ("ok", sorted((k, type(v).__name__, repr(v)) for k, v in kwargs.items())), kwargs

    (shared, kept), (copied, made) = outcome(False), outcome(True)
    assert shared == copied
    exact = arguments is not None and [type(arguments.get(k)) for k in "abcd"] == [int, str, float, bool]
    if kept is not None:
        assert (kept is arguments) is exact and made is not arguments


def _signature_cases() -> list[Any]:
    def plain(a, b: int = 2, *, c, d=4): ...
    def star(a, /, b=1, *args, c=3, **kw): ...
    def only_kw(*, x: str = "x", y): ...
    def only_var(**kw): ...
    def none(): ...
    async def coro(q: str, limit: int = 10) -> str: ...
    def with_locals(a, b=None):
        c = a
        return c

    def inner(a: int, b: int = 1) -> int: ...

    @functools.wraps(inner)
    def wrapped(*args, **kwargs): ...

    def tagged(a, b=2): ...

    tagged.meta = "attribute"  # type: ignore[attr-defined]

    class Methods:
        def method(self, a, b=1): ...

    return [
        plain,
        star,
        only_kw,
        only_var,
        none,
        coro,
        with_locals,
        wrapped,
        tagged,
        lambda a, b=3, *c, d, **e: None,
        Methods().method,
        Methods.method,
        functools.partial(plain, 1),
        len,
        types.FunctionType((lambda: [x * 2 for x in ()]).__code__.co_consts[1], {}),  # a comprehension's ".0"
    ]


@pytest.mark.parametrize("fn", _signature_cases())
def test_parameters_read_from_code_are_what_inspect_signature_gives(fn):
    # in mcpio's terms: kinds as ints (inspect's are an IntEnum), no default as _callables.EMPTY
    # (inspect is not imported at start-up, issue 17)
    from mcpio._callables import EMPTY as NO_DEFAULT
    from mcpio._callables import parameters

    expected = [
        (p.name, p.kind, NO_DEFAULT if p.default is EMPTY else p.default)
        for p in inspect.signature(fn).parameters.values()
    ]
    assert parameters(fn) == expected
    assert all(type(kind) is int for _, kind, _ in parameters(fn))


@pytest.mark.parametrize("tp", [int, str, float, bool, bytes, datetime, time, date, Decimal, uuid.UUID, object, Path])
def test_plain_class_shortcuts_give_what_the_typing_walk_gives(tp):
    # _strip, injection and _normalize answer a plain class without get_origin/get_args (issue 17)
    from typing import Generic

    from mcpio._callables import EMPTY
    from mcpio._callables import injection as _injection
    from mcpio._schema import _normalize, _strip

    def _is_injected(hint: Any, injected: tuple[type, ...]) -> bool:
        return _injection(hint, EMPTY, injected) is True

    assert _strip(tp) is tp and _strip(Annotated[tp, "x"]) is tp
    assert _is_injected(tp, (int,)) is issubclass(tp, int) is _is_injected(Optional[tp], (int,))
    normalized = _normalize(tp)
    assert normalized == _normalize(Optional[tp]).__args__[0]  # the general path, on the same class inside
    assert (normalized is tp) is (tp not in (datetime, time))
    assert _strip(Generic) is Generic and _normalize(Generic) is Generic and not _is_injected(Generic, (int,))


class _Shade(enum.Enum):
    LIGHT = "light"


def _annotated_cases() -> list[Any]:
    # This module's annotations are strings (``from __future__ import annotations``): set real ones.
    def classes(a, b=1, *, c): ...
    def mixed(a, b): ...
    def enum_none(a): ...
    async def coro(a, b=2): ...
    def marked(a): ...

    classes.__annotations__ = {"a": int, "b": str, "c": list, "return": float}  # read as they are
    mixed.__annotations__ = {"a": int, "b": "str"}  # a string: evaluated
    enum_none.__annotations__ = {"a": _Shade, "return": None}  # a metaclass; None is NoneType
    coro.__annotations__ = {"a": str, "b": int, "return": str}
    marked.__annotations__ = {"a": int}
    marked._is_coroutine_marker = object()  # type: ignore[attr-defined]  # a __dict__: the general path
    return [classes, mixed, enum_none, coro, marked]


@pytest.mark.parametrize("fn", _signature_cases() + _annotated_cases())
def test_plain_function_shortcuts_give_what_inspect_and_typing_give(fn):
    # unwrap reads a plain function's async-ness from its code, type_hints takes plain-class
    # annotations as they are (issue 17): the same as inspect and typing
    import typing

    from mcpio._callables import type_hints, unwrap

    target, name, doc, is_async = unwrap(fn)
    assert is_async is inspect.iscoroutinefunction(target)
    if type(fn) is types.FunctionType:
        assert (target, name, doc) == (fn, fn.__name__, fn.__doc__)
    assert type_hints(target) == typing.get_type_hints(target, include_extras=True)
