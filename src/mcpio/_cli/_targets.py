"""TARGET on the command line -> a Client; ``k=v`` arguments -> JSON values by the tool's schema.

TARGET rules, in order: an ``http(s)://`` URL (Streamable HTTP); an
existing ``.py`` file (run with this Python); ``FILE.py:OBJECT`` (served by ``mcpio run``);
``CONFIG:NAME`` where CONFIG is a host alias or a JSON file; a string with spaces (a command
line); a NAME found in the known config files; otherwise a command on PATH.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

from .._client._client import Client
from .._client._target import is_url
from .._host._config import KNOWN, ServerSpec, find_server, lookup


class UsageError(ValueError):
    """A bad command-line value (exit status 2)."""


def resolve(target: str) -> ServerSpec:
    """The server a TARGET names, as a ServerSpec (``source`` says how it was found)."""
    if is_url(target):
        return ServerSpec(name=target, url=target, source="url")
    if target.endswith(".py") and os.path.isfile(target):
        return ServerSpec(name=os.path.basename(target), command=sys.executable, args=(target,), source="file")
    head, sep, tail = target.rpartition(":")
    if sep and head.endswith(".py") and os.path.isfile(head):
        return ServerSpec(name=os.path.basename(head), command=sys.executable, args=("-m", "mcpio", "run", target), source="file")
    if sep and head and tail and " " not in head and (head in KNOWN or (head.endswith((".json", ".jsonc")) and os.path.isfile(head))):
        return lookup(head, tail)
    if any(c.isspace() for c in target):
        try:
            argv = shlex.split(target)
        except ValueError as exc:
            raise UsageError(f"cannot parse the command line {target!r}: {exc}") from None
        if not argv:
            raise UsageError("TARGET is empty")
        return ServerSpec(name=os.path.basename(argv[0]), command=argv[0], args=tuple(argv[1:]), source="command line")
    if target.endswith(".py"):
        raise UsageError(f"{target}: no such file")
    found = find_server(target)
    if found is not None:
        return found
    return ServerSpec(name=target, command=target, source="command line")


def _env(args: Any) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in getattr(args, "env", None) or []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"-e wants KEY=VALUE, not {item!r}")
        env[key] = value
    return env


def _stderr(args: Any) -> Any:
    if not args.verbose:
        return lambda line: None  # kept in the transport's tail, for error messages only

    def show(line: str) -> None:
        sys.stderr.write(f"[server] {line}\n")
        sys.stderr.flush()

    return show


def _headers(args: Any) -> dict[str, str]:
    headers: dict[str, str] = {}
    for item in getattr(args, "header", None) or []:
        name, colon, value = item.partition(":")
        if not colon or not name.strip():
            raise UsageError(f"-H wants 'Name: value', not {item!r}")
        headers[name.strip()] = value.strip()
    return headers


def client_for(target: str, args: Any, **options: Any) -> Client:
    """An unconnected Client for TARGET with the common options (-e, --env-mode, --cwd, -v,
    --timeout, --era, -H)."""
    spec = resolve(target)
    options.setdefault("timeout", args.timeout)
    options.setdefault("era", getattr(args, "era", None) or "auto")
    if getattr(args, "trace", None):
        options.setdefault("trace", args.trace)
    if spec.url is not None:
        options.setdefault("headers", _headers(args) or None)
    return spec.client(env=_env(args) or None, env_mode=args.env_mode, cwd=args.cwd, on_stderr=_stderr(args), **options)


# ---------------------------------------------------------------------- k=v coercion
_TRUE = {"true", "yes", "y", "on", "1"}
_FALSE = {"false", "no", "n", "off", "0"}


def _deref(schema: Any, root: dict[str, Any]) -> Any:
    seen = 0
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#/") and seen < 32:
        node: Any = root
        for part in schema["$ref"][2:].split("/"):
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, dict) else None
        if node is None:
            return {}
        schema, seen = node, seen + 1
    return schema


def coerce(text: str, schema: Any, root: dict[str, Any] | None = None) -> Any:
    """``text`` as the JSON value ``schema`` asks for (ValueError with the reason if it cannot be)."""
    root = root if root is not None else (schema if isinstance(schema, dict) else {})
    schema = _deref(schema, root)
    if not isinstance(schema, dict) or not schema:
        return _guess(text)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            ordered = sorted(options, key=lambda s: _deref(s, root).get("type") == "string" if isinstance(_deref(s, root), dict) else True)
            for option in ordered:
                try:
                    return coerce(text, option, root)
                except ValueError:
                    continue
            raise ValueError(f"{text!r} matches none of the allowed types")
    if "const" in schema or "enum" in schema:
        allowed = [schema["const"]] if "const" in schema else list(schema["enum"])
        for value in allowed:
            if (isinstance(value, str) and value == text) or (not isinstance(value, str) and json.dumps(value) == text):
                return value
        raise ValueError(f"{text!r} is not one of {', '.join(json.dumps(v) for v in allowed)}")
    types = schema.get("type")
    if isinstance(types, str):
        types = [types]
    if not isinstance(types, list) or not types:
        if "properties" in schema:
            types = ["object"]
        elif "items" in schema:
            types = ["array"]
        else:
            return _guess(text)
    problems = []
    for t in sorted(types, key=lambda t: t == "string"):  # a string matches anything: try it last
        try:
            return _as(text, t, schema, root)
        except ValueError as exc:
            problems.append(str(exc))
    raise ValueError("; ".join(problems))


def _as(text: str, kind: str, schema: dict[str, Any], root: dict[str, Any]) -> Any:
    if kind == "string":
        return text
    if kind == "integer":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not an integer") from None
    if kind == "number":
        try:
            return int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
    if kind == "boolean":
        low = text.lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ValueError(f"{text!r} is not a boolean (true/false)")
    if kind == "null":
        if text in ("null", ""):
            return None
        raise ValueError(f"{text!r} is not null")
    if kind == "array":
        if text.lstrip().startswith("["):
            value = _json(text)
            if not isinstance(value, list):
                raise ValueError(f"{text!r} is not a JSON array")
            return value
        items = schema.get("items")
        return [coerce(part.strip(), items, root) for part in text.split(",")] if text else []
    if kind == "object":
        value = _json(text)
        if not isinstance(value, dict):
            raise ValueError(f"{text!r} is not a JSON object")
        return value
    return _guess(text)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{text!r} is not valid JSON ({exc.msg})") from None


def _guess(text: str) -> Any:
    """No schema: JSON when it parses (numbers, true, [..]), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def parse_pairs(items: list[str], schema: dict[str, Any] | None) -> dict[str, Any]:
    """``k=v`` / ``k:=json`` items -> arguments, coerced by ``schema`` (an inputSchema or None)."""
    props = (schema or {}).get("properties") or {}
    out: dict[str, Any] = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"arguments are KEY=VALUE (or KEY:=JSON), not {item!r}")
        if key.endswith(":"):
            try:
                out[key[:-1]] = json.loads(value)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{key[:-1]}: {value!r} is not valid JSON ({exc.msg})") from None
            continue
        if schema is None:
            out[key] = value
            continue
        try:
            out[key] = coerce(value, props.get(key), schema)
        except ValueError as exc:
            raise UsageError(f"argument {key}: {exc}") from None
    return out
