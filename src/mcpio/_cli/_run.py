"""``mcpio run FILE[:OBJECT]``: import a Python file or module and serve its Server over stdio,
or with ``-t http`` over Streamable HTTP (uvicorn, from the ``http`` extra; loopback only unless
``--allow-remote``).

Without ``:OBJECT`` the module must hold exactly one mcpio ``Server`` (variables named
``server``, ``mcp`` or ``app`` win). ``OBJECT`` may be a dotted attribute path, and may name a
function that returns the Server. While the module is imported ``sys.stdout`` points at
stderr, so a ``print`` at import time cannot corrupt the protocol stream.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

from .._server._server import Server
from ._targets import UsageError


def split_app(app: str) -> tuple[str, str | None]:
    """``FILE[:OBJECT]`` -> (FILE, OBJECT or None); a Windows drive letter is not a separator."""
    head, sep, tail = app.rpartition(":")
    if sep and head and tail and not (len(head) == 1 and head.isalpha()) and not os.path.exists(app):
        return head, tail
    return app, None


def load_module(where: str) -> Any:
    if where.endswith(".py") or os.sep in where:
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise UsageError(f"{where}: no such file")
        name = "__mcpio_app__"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"{where}: cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, os.path.dirname(path))
        spec.loader.exec_module(module)
        return module
    sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as exc:
        if exc.name == where.split(".")[0]:
            raise UsageError(f"{where}: no such file or module") from None
        raise


def find_server(module: Any, obj: str | None, where: str) -> Server:
    if obj is not None:
        value: Any = module
        for part in obj.split("."):
            try:
                value = getattr(value, part)
            except AttributeError:
                raise UsageError(f"{where} has no attribute {obj!r}") from None
        if not isinstance(value, Server) and callable(value):
            value = value()
        if not isinstance(value, Server):
            raise UsageError(f"{where}:{obj} is a {type(value).__name__}, not an mcpio Server")
        return value
    found = {name: v for name, v in vars(module).items() if isinstance(v, Server)}
    for preferred in ("server", "mcp", "app"):
        if preferred in found:
            return found[preferred]
    if len(found) == 1:
        return next(iter(found.values()))
    if not found:
        raise UsageError(f"no mcpio Server found in {where}; name it with {where}:OBJECT")
    raise UsageError(f"{where} holds several Servers ({', '.join(sorted(found))}); pick one with {where}:OBJECT")


def run_app(app: str, transport: str = "stdio", *, host: str = "127.0.0.1", port: int = 8000, path: str = "/mcp",
            allow_remote: bool = False, legacy_sse: bool = False, redis: str | None = None) -> int:
    if transport not in ("stdio", "http"):
        raise UsageError(f"--transport {transport}: use stdio or http")
    where, obj = split_app(app)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # prints at import time must not reach the protocol stream
    try:
        module = load_module(where)
        server = find_server(module, obj, where)
    finally:
        sys.stdout = real_stdout
    if transport == "stdio":
        server.run()
        return 0
    if not path.startswith("/"):
        raise UsageError(f"--path {path!r}: an endpoint path starts with /")
    from .._protocol._http import is_loopback

    if not is_loopback(host) and not allow_remote:
        raise UsageError(f"--host {host}: only loopback addresses are served by default; add --allow-remote to accept "
                         "connections from other machines (and put authentication in front of the server)")
    try:
        import uvicorn  # noqa: F401 - checked here to fail with a usage hint, not a traceback
    except ImportError:
        raise UsageError("serving HTTP needs uvicorn: pip install 'mcpio[http]'") from None
    if redis is not None:  # checked before "serving": Redis down at start is one line, exit 1
        from .._state import StateUnavailable, check_reachable

        try:
            check_reachable(redis)
        except ImportError:
            raise UsageError("--redis needs the redis package: pip install 'mcpio[redis]'") from None
        except StateUnavailable as exc:
            print(f"mcpio: {exc}", file=sys.stderr, flush=True)
            return 1
    shown = f"[{host}]" if ":" in host else host
    print(f"serving {server.name} on http://{shown}:{port}{path} (both protocol eras); Ctrl-C stops it",
          file=sys.stderr, flush=True)
    server.run("http", host=host, port=port, path=path, allow_remote=allow_remote, legacy_sse=legacy_sse, redis=redis)
    return 0
