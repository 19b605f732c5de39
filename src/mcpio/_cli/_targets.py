"""TARGET on the command line -> a Client; ``k=v`` arguments -> JSON values by the tool's schema.

One resolution for every command that talks to a server (list, call, read, prompt, doctor,
and whatever is added later: they all go through :func:`client_for`). TARGET rules, in order:

1. an ``http(s)://`` URL: Streamable HTTP (either era); ``HOST:PORT[/PATH]`` (a URL without
   its scheme) is a usage error naming the URL to try;
2. ``FILE.py`` or ``FILE.py:OBJECT`` (an existing file; ``.pyw`` too), or a path to a file without ``.py``
   whose code imports mcpio (:func:`python_file`): spawned as ``python -m mcpio run FILE``,
   exactly what ``mcpio run`` serves, so a file without a ``__main__`` block works and its
   import errors are reported as one line;
3. ``FILE.json`` (an existing ``mcpServers`` file, no ``:NAME``): its gateway, spawned as
   ``python -m mcpio run FILE.json`` (every entry, under its name);
4. ``CONFIG:NAME``: CONFIG is a host alias (claude, cursor …) or a JSON config file;
5. ``MODULE:OBJECT`` where MODULE is importable from the current folder: ``mcpio run MODULE:OBJECT``;
6. a string with spaces: a command line (split like a shell would, never run by one);
7. a NAME found in the known host config files;
8. a MODULE importable from the current folder: ``mcpio run MODULE``;
9. otherwise a command on PATH (``mcp-server-time``), or a path to a program that is not mcpio
   code (a console script, an npm package's bin, a binary): started as it is. A path that does
   not exist, and a ``MODULE:OBJECT`` nothing imports, are usage errors.

Rules 2, 5 and 8 are Python code (``ServerSpec.source`` is :data:`PYTHON`): ``mcpio run``
imports and serves it; ``mcpio run`` proxies every other TARGET, and ``mcpio install`` writes
it as it is.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import sys
from typing import TYPE_CHECKING, Any

from .._client._target import is_url, serve_argv
from .._host._config import KNOWN, ServerSpec, find_server, lookup
from .._pyfile import SOURCE_SUFFIXES, python_file
from .._shown import shown
from ._exit import UsageError
from ._gateway import gateway_specs
from ._signature import deref as _deref

if TYPE_CHECKING:  # made by ServerSpec.client: `mcpio run "CMD"` starts its upstream before the client loads
    from .._client._client import Client

_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: ``HOST:PORT[/PATH]``: a server's URL without its scheme (``localhost:8000/mcp``).
_SCHEMELESS = re.compile(r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\]):\d{1,5}(?:/\S*)?")


def importable(name: str) -> bool:
    """Whether ``name`` is a module importable from the current folder (its parent packages
    may be imported to find out; the module itself is not), and not one of the standard
    library's (``time`` is a host's entry or a command, never a module holding a Server)."""
    if not _MODULE.match(name) or name.partition(".")[0] in sys.stdlib_module_names:
        return False
    here = os.getcwd()
    sys.path.insert(0, here)
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False
    finally:
        sys.path.remove(here)


#: ``ServerSpec.source`` of a TARGET that is Python code ``mcpio run`` imports and serves itself.
PYTHON = "python code"


def _mcpio_run(app: str, name: str, verbose: bool = False, source: str = PYTHON) -> ServerSpec:
    argv = serve_argv(app, verbose)
    return ServerSpec(name=name, command=argv[0], args=tuple(argv[1:]), source=source)


def python_code(target: str) -> bool:
    """Whether TARGET is Python code that ``mcpio run`` imports and serves (rules 2, 5 and a bare
    MODULE), not a server it proxies; :func:`resolve` decides (UsageError as it raises it)."""
    return resolve(target).source == PYTHON


def resolve(target: str, *, verbose: bool = False) -> ServerSpec:
    """The server a TARGET names, as a ServerSpec (``source`` says how it was found).
    ``verbose``: a Python target is started with ``-v`` (full tracebacks)."""
    if not target:
        raise UsageError("TARGET is empty")
    if is_url(target):
        return ServerSpec(name=shown(target), url=target, source="url")  # named without its credentials
    if _SCHEMELESS.fullmatch(target) and not os.path.exists(target):
        url = shown(f"http://{target}")
        raise UsageError(
            f"{shown(target)}: a server's URL starts with http:// or https://: "
            f"try {url if '/' in target else url + '/mcp'}"
        )
    file = python_file(target)
    if file is not None:
        return _mcpio_run(target, os.path.basename(file), verbose)
    if gateway_specs(target) is not None:  # an mcpServers file (a usage error if it holds none)
        return _mcpio_run(target, os.path.splitext(os.path.basename(target))[0], verbose, source=target)
    head, sep, tail = target.rpartition(":")
    if sep and not tail and (head in KNOWN or (head.endswith((".json", ".jsonc")) and os.path.isfile(head))):
        raise UsageError(f"{target} names no entry: give its name, {head}:NAME (mcpio config {head} lists them)")
    if (
        sep
        and head
        and tail
        and " " not in head
        and (head in KNOWN or (head.endswith((".json", ".jsonc")) and os.path.isfile(head)))
    ):
        return lookup(head, tail)
    if sep and head and tail and _MODULE.match(tail.replace(".", "_")) and importable(head):
        return _mcpio_run(target, head, verbose)
    if any(c.isspace() for c in target):
        try:
            argv = shlex.split(target)
        except ValueError as exc:
            raise UsageError(f"cannot parse the command line {target!r}: {exc}") from None
        if not argv:
            raise UsageError("TARGET is empty")
        return ServerSpec(name=os.path.basename(argv[0]), command=argv[0], args=tuple(argv[1:]), source="command line")
    if target.endswith(SOURCE_SUFFIXES) or (sep and head.endswith(SOURCE_SUFFIXES)):
        raise UsageError(f"{head if sep and head.endswith(SOURCE_SUFFIXES) else target}: no such file")
    found = find_server(target)
    if found is not None:
        return found
    if importable(target):  # a module (mcpio run imports it), after a host's entry of that name
        return _mcpio_run(target, target, verbose)
    config = sep and head.endswith((".json", ".jsonc"))
    if config or os.sep in target or (os.altsep and os.altsep in target):  # a path: to a file
        path = head if config else target
        if not os.path.isfile(path):
            raise UsageError(f"{path}: {'a folder, not a server' if os.path.isdir(path) else 'no such file'}")
    if sep and head and tail and _MODULE.match(head) and _MODULE.match(tail.replace(".", "_")):
        raise UsageError(
            f"{target}: no module {head!r} can be imported from {os.getcwd()}, and no host has an entry of that name"
        )
    return ServerSpec(name=target, command=target, source="command line")


def stdio_command(words: list[str]) -> tuple[list[str], dict[str, str]]:
    """The argv and extra environment for ``tap``/``replay``'s ``-- COMMAND…``: one word is a
    TARGET (``server.py``, ``claude:NAME``, ``pkg.mod:server``) resolved like every other
    command's; several words are the command line itself."""
    if len(words) != 1:
        return list(words), {}
    spec = resolve(words[0])
    if spec.url is not None:
        raise UsageError(f"{shown(words[0])} is a URL; tap and replay work with a server started over stdio")
    spec = spec.resolved()
    if not spec.command:
        raise UsageError(f"{words[0]}: the entry has no command")
    return [spec.command, *spec.args], dict(spec.env)


def _env(args: Any) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in getattr(args, "env", None) or []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"-e wants KEY=VALUE, not {item!r}")
        env[key] = value
    return env


def _stderr(args: Any, gateway: bool) -> Any:
    """What becomes of a spawned server's stderr lines: all shown with -v; otherwise kept in the
    transport's tail, for error messages only, but for a gateway's (rule 3) errors: they name an
    upstream that did not start or went away, which its listing alone would silently leave out.
    Each such error once per command (``mcpio doctor`` starts the gateway once per era it probes)."""
    if not args.verbose and not gateway:
        return lambda line: None

    from ._output import clean

    def show(line: str) -> None:
        if args.verbose or (line.startswith(_GATEWAY_ERROR) and line not in _SHOWN):
            _SHOWN.add(line)
            sys.stderr.write(f"[server] {clean(line, multiline=False)}\n")
            sys.stderr.flush()

    return show


_GATEWAY_ERROR = "mcpio: error: "  # a gateway's error line (``_logs``: a gateway runs no tools of its own)
_SHOWN: set[str] = set()  # the gateway error lines shown by this command (one command per process)


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
    spec = resolve(target, verbose=bool(getattr(args, "verbose", False)))
    options.setdefault("timeout", args.timeout)
    options.setdefault("era", getattr(args, "era", None) or "auto")
    if getattr(args, "trace", None):
        options.setdefault("trace", args.trace)
    if spec.url is not None:
        options.setdefault("headers", _headers(args) or None)
    gateway = spec.source == target and target.endswith((".json", ".jsonc"))  # rule 3: resolve's source is the file
    on_stderr = _stderr(args, gateway)
    return spec.client(env=_env(args) or None, env_mode=args.env_mode, cwd=args.cwd, on_stderr=on_stderr, **options)


# ---------------------------------------------------------------------- k=v coercion
_TRUE = {"true", "yes", "y", "on", "1"}
_FALSE = {"false", "no", "n", "off", "0"}


def coerce(text: str, schema: Any, root: dict[str, Any] | None = None) -> Any:
    """``text`` as the JSON value ``schema`` asks for (ValueError with the reason if it cannot be)."""
    root = root if root is not None else (schema if isinstance(schema, dict) else {})
    schema = _deref(schema, root)
    if not isinstance(schema, dict) or not schema:
        return _guess(text)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            ordered = sorted(
                options,
                key=lambda s: _deref(s, root).get("type") == "string" if isinstance(_deref(s, root), dict) else True,
            )
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


def parse_pairs(items: list[str], schema: dict[str, Any] | None, tool: str | None = None) -> dict[str, Any]:
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
            raise UsageError(f"{tool + ': ' if tool else ''}argument {key!r}: {exc}") from None
    return out
