"""``mcpio run --openapi SPEC [--base-url URL]`` and ``mcpio doctor --openapi SPEC``: the
command line's side of the OpenAPI support (one-line errors, not tracebacks)."""

from __future__ import annotations

import shlex
import sys
from typing import Any

from .._openapi._build import analyze
from .._openapi._load import OpenAPIError
from .._server._server import Server
from .._shown import shown
from ._exit import UNAVAILABLE, CLIFailure, UsageError
from ._run import run_words


def openapi_server(args: Any) -> tuple[Server, str]:
    """The server ``--openapi`` describes, and how to name it to a person (``mcpio run --openapi …``)."""
    if args.openapi is None:
        raise UsageError("mcpio run needs FILE[:OBJECT] or --openapi SPEC (or $MCPIO_TARGET, $MCPIO_OPENAPI)")
    if args.app is not None:
        raise UsageError(
            f"give FILE[:OBJECT] or --openapi SPEC, not both ({shown(args.app)} and {shown(args.openapi)})"
        )
    if args.reload:
        raise UsageError("--reload works with FILE (a Python server), not --openapi")
    try:
        server = Server.from_openapi(args.openapi, base_url=args.base_url)
    except OpenAPIError as exc:
        raise CLIFailure(str(exc), UNAVAILABLE, "check --openapi and --base-url") from None
    except ImportError as exc:
        raise UsageError(f"--openapi needs {exc.name or 'httpx'}: pip install 'mcpio[openapi]'") from None
    where = f"mcpio run --openapi {shlex.quote(shown(args.openapi))}"
    if args.base_url:
        where += f" --base-url {shlex.quote(shown(args.base_url))}"
    return server, where


def doctor_target(args: Any) -> tuple[str, str, list[tuple[str, str]]]:
    """``mcpio doctor --openapi SPEC``: the command line serving SPEC (the TARGET doctor checks;
    SPEC and ``--base-url`` added to ``args.env``, the command's environment), that command line
    as a person would type it, shown (its URLs without credentials: :func:`.._shown.shown`), and
    the operations the conversion skips, with why."""
    if args.openapi is None:
        raise UsageError("mcpio doctor needs TARGET or --openapi SPEC")
    if args.target is not None:
        raise UsageError(f"give TARGET or --openapi SPEC, not both ({shown(args.target)} and {shown(args.openapi)})")
    try:
        _, _, converted, _ = analyze(args.openapi)
    except OpenAPIError as exc:
        raise CLIFailure(str(exc), UNAVAILABLE, "check --openapi") from None
    named = [sys.executable, "-m", "mcpio", "run", "--openapi", args.openapi]
    if args.base_url:
        named += ["--base-url", args.base_url]
    # SPEC and URL reach the command through its environment, never its argv (readable by every
    # local user: a URL's credentials would be): `mcpio run` reads them there (run_words).
    words, env = run_words(openapi=args.openapi, base_url=args.base_url, hidden=True)
    args.env = [*(args.env or []), *(f"{name}={value}" for name, value in env.items())]
    return shlex.join([*named[:4], *words]), shlex.join(map(shown, named)), converted.skipped
