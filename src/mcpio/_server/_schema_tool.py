"""A tool defined by its JSON Schemas rather than a function's signature (:meth:`Tool.from_schema`:
one per OpenAPI operation, one per proxied upstream tool)."""

from __future__ import annotations

from typing import Any, ClassVar

from .._schema import ArgumentError


class SchemaSignature:
    """What :class:`Tool` needs of a signature, for :meth:`Tool.from_schema`: the handler is
    called as ``handler(arguments=…, ctx=…)`` (``invoke`` injects the Context), asynchronously."""

    injected = ("ctx",)
    is_async = True
    wrap_output = False
    description = None
    provided: ClassVar[dict[str, Any]] = {}  # no Depends(...): the handler takes the arguments as they came
    output_type: Any = None  # the output is checked by the handler (or the API it calls), not here

    def __init__(self, name: str, input_schema: dict[str, Any], output_schema: dict[str, Any] | None) -> None:
        self.name, self.input_schema, self.output_schema = name, input_schema, output_schema
        required = input_schema.get("required")
        self._required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []

    def bind(self, arguments: Any, copy: bool = True) -> dict[str, Any]:
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            from .._schema_errors import json_type

            raise ArgumentError(f"expected an object, got {json_type(arguments)}", self.name)
        missing = [r for r in self._required if r not in arguments]
        if missing:
            raise ArgumentError(f"missing required argument(s) {', '.join(missing)}", self.name)
        return {"arguments": arguments}

    def to_structured(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise TypeError(f"{self.name} returned {type(value).__name__}, but its output schema promises an object")
        return value
