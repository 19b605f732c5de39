"""``mcpio run --openapi SPEC [--base-url URL]`` and ``mcpio doctor --openapi SPEC``: the
command line's side of the OpenAPI support (one-line errors, not tracebacks)."""

from __future__ import annotations

import shlex
from typing import Any

from .._openapi._load import OpenAPIError
from .._server._server import Server
from ._exit import UNAVAILABLE, CLIFailure, UsageError


def openapi_server(args: Any) -> tuple[Server, str]:
    """The server ``--openapi`` describes, and how to name it to a person (``mcpio run --openapi …``)."""
    if args.openapi is None:
        raise UsageError("mcpio run needs FILE[:OBJECT] or --openapi SPEC")
    if args.app is not None:
        raise UsageError(f"give FILE[:OBJECT] or --openapi SPEC, not both ({args.app} and {args.openapi})")
    if args.reload:
        raise UsageError("--reload works with FILE (a Python server), not --openapi")
    if args.workers != 1:
        raise UsageError("--workers works with FILE (each worker imports it), not --openapi")
    try:
        server = Server.from_openapi(args.openapi, base_url=args.base_url)
    except OpenAPIError as exc:
        raise CLIFailure(str(exc), UNAVAILABLE, "check --openapi and --base-url") from None
    except ImportError as exc:
        raise UsageError(f"--openapi needs httpx: pip install 'mcpio[http]' ({exc})") from None
    where = f"mcpio run --openapi {shlex.quote(args.openapi)}"
    if args.base_url:
        where += f" --base-url {shlex.quote(args.base_url)}"
    return server, shlex.quote(where)
