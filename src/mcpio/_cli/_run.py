"""``mcpio run FILE[:OBJECT]``: import a Python file or module and serve its Server over stdio,
or with ``-t http`` over Streamable HTTP (uvicorn, from the ``http`` extra; loopback only unless
``--allow-remote``).

Without ``:OBJECT`` the module must hold exactly one mcpio ``Server`` (variables named
``server``, ``mcp`` or ``app`` win). ``OBJECT`` may be a dotted attribute path, and may name a
function that returns the Server. While the module is imported ``sys.stdout`` points at
stderr, so a ``print`` at import time cannot corrupt the protocol stream.

A file that never imports mcpio, or one without an mcpio Server but with an
``if __name__ == "__main__":`` block (a server written with another SDK or by hand, say), is
run as a script. An exception while importing the user's
code, or raised by a script run as one, is reported as one line naming the user's file, line and message
(:class:`UserCodeError`); ``-v`` adds the full traceback. On a terminal a short banner on
stderr says what is served and how to try it; stdout stays the protocol's alone.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from .._pyfile import SOURCE_SUFFIXES, imports_mcpio
from ._exit import UNAVAILABLE, CLIFailure, UsageError

if TYPE_CHECKING:  # the served module imports it; a gateway starts its upstreams before it loads
    from .._server._server import Server

# What a failure, HTTP, a script or a module name needs is imported where it is used: `mcpio run
# server.py` over stdio, the command hosts run, imports only what serving needs.

_MCPIO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class UserCodeError(CLIFailure):
    """The user's module raised while being imported (exit status 3): ``message`` names their
    file and line; ``details`` is the full traceback (shown with ``-v``)."""

    def __init__(self, exc: BaseException) -> None:
        import traceback

        self.details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        super().__init__(
            f"{_where(exc)}{type(exc).__name__}: {_what(exc)} (in your server's code)",
            UNAVAILABLE,
            "fix it and run the command again; -v shows the full traceback",
        )


def _what(exc: BaseException) -> str:
    from .._suggest import exception_text

    if isinstance(exc, SyntaxError):
        return exc.msg
    return exception_text(exc) or "(no message)"


def _where(exc: BaseException) -> str:
    """``file:line: `` of the user's frame that raised: the SyntaxError's location, else the
    last frame outside mcpio, the import machinery and installed libraries (the standard
    library, site-packages), else the last frame outside mcpio."""
    import sysconfig
    import traceback

    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{_short(exc.filename)}:{exc.lineno}: "
    libraries = tuple(
        {
            os.path.abspath(p) + os.sep
            for k, p in sysconfig.get_paths().items()
            if k in ("stdlib", "platstdlib", "purelib", "platlib")
        }
    )
    ours = lib = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        name = frame.filename
        path = os.path.abspath(name)
        if name.startswith("<") or path.startswith(_MCPIO_DIR + os.sep):
            continue
        lib = f"{_short(name)}:{frame.lineno}: "
        if not path.startswith(libraries):
            ours = lib
    return ours or lib


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    home = os.getcwd() == os.path.abspath(os.sep)  # started from / (a GUI host): the full path says more
    return rel if not rel.startswith(".." + os.sep) and not home else path


#: Where ``mcpio run`` reads TARGET, ``--openapi SPEC`` and ``--base-url URL`` when its command
#: line names no server (docs/guides/cli.md, "A URL with credentials"): how mcpio starts a
#: ``mcpio run`` whose URL carries a credential. A process's argv is readable by every local user
#: (``ps``, ``/proc/PID/cmdline``); its environment by its owner only.
TARGET_ENV, OPENAPI_ENV, BASE_URL_ENV = "MCPIO_TARGET", "MCPIO_OPENAPI", "MCPIO_BASE_URL"


def from_environment(args: Any) -> None:
    """``mcpio run`` with neither TARGET nor ``--openapi``: take them (and ``--base-url``, unless
    given) from :data:`TARGET_ENV`, :data:`OPENAPI_ENV` and :data:`BASE_URL_ENV`. Each one read
    is removed from this process's environment: nothing the server starts inherits it."""
    if args.app is not None or args.openapi:
        return
    app, openapi, base_url = (os.environ.pop(name, None) or None for name in (TARGET_ENV, OPENAPI_ENV, BASE_URL_ENV))
    args.app, args.openapi, args.base_url = app, openapi, args.base_url or base_url


def run_words(
    app: str | None = None, openapi: str | None = None, base_url: str | None = None, *, hidden: bool = False
) -> tuple[list[str], dict[str, str]]:
    """The arguments after ``mcpio run`` that serve TARGET ``app`` (or ``--openapi`` with
    ``--base-url``), and the environment they need. When one of them is a URL the one rule shows
    otherwise (:func:`.._shown.shown`: it carries a credential), or with ``hidden``, all of them go
    into the environment (:func:`from_environment` reads it there); else all stay arguments."""
    from .._shown import shown

    given = {
        k: v
        for k, v in zip((TARGET_ENV, OPENAPI_ENV, BASE_URL_ENV), (app, openapi, base_url), strict=True)
        if v is not None
    }
    if hidden or any(shown(value) != value for value in given.values()):
        return [], given  # all of them: the environment is read only when the command line names no server
    return [*([app] if app else []), *(["--openapi", openapi] if openapi else [])] + (
        ["--base-url", base_url] if base_url else []
    ), {}


def split_app(app: str) -> tuple[str, str | None]:
    """``FILE[:OBJECT]`` -> (FILE, OBJECT or None); a Windows drive letter is not a separator."""
    head, sep, tail = app.rpartition(":")
    drive = len(head) == 1 and head.isalpha() and tail[:1] in ("\\", "/")  # C:\\path, C:/path
    if sep and head and tail and not drive and not os.path.exists(app):
        return head, tail
    return app, None


def load_module(where: str) -> Any:
    import importlib.machinery
    import importlib.util

    if where.endswith(SOURCE_SUFFIXES) or os.sep in where or (os.altsep and os.altsep in where):
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise UsageError(f"{where}: no such file")
        name = "__mcpio_app__"
        loader = importlib.machinery.SourceFileLoader(name, path)  # the file may lack .py (bin/server)
        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
        if spec is None or spec.loader is None:
            raise UsageError(f"{where}: cannot be imported as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, os.path.dirname(path))
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise UserCodeError(exc) from None
        return module
    sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(where)
    except ModuleNotFoundError as exc:
        if exc.name == where.split(".")[0]:
            raise UsageError(f"{where}: no such file or module") from None
        raise UserCodeError(exc) from None
    except Exception as exc:
        raise UserCodeError(exc) from None


def load_server(app: str) -> tuple[Server | None, str]:
    """The Server ``app`` (FILE[:OBJECT] or MODULE[:OBJECT]) names, imported with stdout sent to
    stderr; ``(None, path)`` for a script to run as ``__main__`` instead: a file that never
    imports mcpio (it may serve at import time, on the real stdout), or one without an mcpio
    Server that has a ``__main__`` block."""
    where, obj = split_app(app)
    if obj is None and where.endswith(SOURCE_SUFFIXES) and os.path.isfile(where) and not imports_mcpio(where):
        return None, where  # cannot hold an mcpio Server: a script, maybe serving at import time (never redirect it)
    real_stdout = sys.stdout
    sys.stdout = sys.stderr  # prints at import time must not reach the protocol stream
    try:
        module = load_module(where)
        try:
            return find_server(module, obj, where), where
        except UsageError:
            path = getattr(module, "__file__", None) or ""
            if obj is None and path and _has_main_block(path):
                return None, path
            raise
    finally:
        sys.stdout = real_stdout


def _has_main_block(path: str) -> bool:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, ValueError):  # unreadable, or not text (an extension module)
        return False
    return "__name__" in text and "__main__" in text


def counts(server: Server) -> dict[str, int]:
    """How many tools, resources, resource templates and prompts ``server`` has."""
    return {kind: len(server.registry.table(kind)) for kind in ("tools", "resources", "templates", "prompts")}


def banner(server: Server, app: str, transport: str, url: str | None = None, proxied: bool = False) -> str:
    """What a person at a terminal sees on stderr: what is served and how to try it. A proxy or
    a gateway (``proxied``) is named by its TARGET: its name and its catalog are its upstreams',
    not known before they connect."""
    from .._shown import shown

    n = counts(server)
    what = ", ".join(f"{v} {k[:-1] if v == 1 else k}" for k, v in n.items() if v or k != "templates")
    name = repr(server.name)
    if proxied:
        gateway = app.endswith((".json", ".jsonc"))  # an mcpServers file (the proxy of a host entry is CONFIG:NAME)
        what = "a gateway: what its upstreams serve" if gateway else "a proxy: what its upstream serves"
        name = repr(shown(app))
    if transport == "stdio":
        import shlex

        app = shlex.quote(shown(app))  # a URL (mcpio run URL) without its credentials; a command line one word
        return (
            f"mcpio: serving {name} ({what}) over stdio: it speaks JSON-RPC on stdin/stdout, "
            "so a host starts it, not a person\n"
            f"  try it:    mcpio list {app}    |    mcpio call {app} TOOL key=value\n"
            f"  add it to a host:  mcpio install {app} --host claude   (Ctrl-C stops this one)"
        )
    return (
        f"mcpio: serving {name} ({what}) on {url} (Streamable HTTP, both protocol eras); Ctrl-C stops it\n"
        f"  try it:    mcpio list {url}"
    )


def check_port(host: str, port: int) -> None:
    """Fail with exit status 3 when ``host:port`` cannot be bound (in use, not ours)."""
    import errno
    import socket

    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        if os.name != "nt":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise CLIFailure(
                    f"port {port} on {host} is already in use (another program, or another mcpio run)",
                    UNAVAILABLE,
                    "pick another one with --port, or stop the program using it",
                ) from None
            raise CLIFailure(
                f"cannot listen on {host}:{port}: {exc.strerror or exc}", UNAVAILABLE, "check --host and --port"
            ) from None


def find_server(module: Any, obj: str | None, where: str) -> Server:
    from .._server._server import Server

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


def run_app(
    app: str,
    transport: str = "stdio",
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    path: str = "/mcp",
    allow_remote: bool = False,
    legacy_sse: bool = False,
    auth: Any = None,
    redis: str | None = None,
    redis_secret_env: str | None = None,
    tls: dict[str, Any] | None = None,
    workers: int = 1,
    grace: float = 10.0,
    server: Server | None = None,
    proxied: bool = False,
) -> int:
    if transport not in ("stdio", "http"):
        raise UsageError(f"--transport {transport}: use stdio or http")
    if workers != 1 and transport != "http":
        raise UsageError("--workers works with -t http (a stdio server has one client: its host)")
    if workers < 1 or grace < 0:
        raise UsageError(f"--workers {workers} --grace {grace:g}: at least 1 worker and a grace of 0 s or more")
    if workers > 1 and redis is None:  # each worker would know only its own sessions and events
        raise UsageError(
            f"--workers {workers} needs --redis redis://HOST:PORT/DB: legacy sessions and SSE events must be "
            "shared by the workers (any of them may receive a session's next request)"
        )
    server, where = (server, app) if server is not None else load_server(app)  # given: --openapi, a proxy
    redis_secret = _redis_secret(redis, redis_secret_env)  # after: Server() may read the same variable
    if server is None:  # a script with its own main block (another SDK, say): run it as one
        if transport != "stdio":
            raise UsageError(f"no mcpio Server found in {where}, so it can only be run as a script (stdio)")
        import runpy

        from .. import _collector

        _collector.resume()  # the script serves in its own way (mcpio._collector)
        sys.argv = [where]
        try:
            runpy.run_path(where, run_name="__main__")
        except Exception as exc:  # raised by the script (at import or while it served): its code's
            raise UserCodeError(exc) from None
        return 0
    if transport == "stdio":
        if sys.stderr.isatty() and sys.stdin.isatty():
            print(banner(server, app, "stdio", proxied=proxied), file=sys.stderr, flush=True)
        server.run()
        return 1 if server.unavailable() is not None else 0  # a proxy whose upstream never started
    if not path.startswith("/"):
        raise UsageError(f"--path {path!r}: an endpoint path starts with /")
    from .._protocol._http import is_loopback

    if not is_loopback(host) and not allow_remote and auth is None:
        raise UsageError(
            f"--host {host}: only loopback addresses are served by default; add --auth-issuer (see "
            "--help) or --allow-remote to accept connections from other machines"
        )
    try:
        import uvicorn  # noqa: F401 - checked here to fail with a usage hint, not a traceback
    except ImportError:
        raise UsageError("serving HTTP needs uvicorn: pip install 'mcpio[http]'") from None
    check_port(host, port)  # before the banner: a busy port is one clear line, not a banner and a traceback
    if redis is not None:  # checked before "serving": Redis down at start is one line, exit 1
        from .._state import StateUnavailable, check_reachable

        try:
            check_reachable(redis)
        except ImportError:
            raise UsageError("--redis needs the redis package: pip install 'mcpio[redis]'") from None
        except StateUnavailable as exc:
            print(f"mcpio: {exc}", file=sys.stderr, flush=True)
            return 1
    if auth is not None:
        _check_issuer(auth)
    tls = tls or {}  # _tls_flags.tls_options: http2, certfile, keyfile (checked)
    shown = f"[{host}]" if ":" in host else host
    url = f"{'https' if tls.get('certfile') else 'http'}://{shown}:{port}{path}"
    if sys.stderr.isatty():
        print(banner(server, app, "http", url, proxied=proxied), file=sys.stderr, flush=True)
    else:
        from .._shown import shown as shown_target

        h2 = ", HTTP/2" if tls.get("http2") else ""
        named = shown_target(app) if proxied else server.name
        print(f"serving {named} on {url} (both protocol eras{h2}); Ctrl-C stops it", file=sys.stderr, flush=True)
    from ._auth_flags import serve_options

    server.run(
        "http",
        host=host,
        port=port,
        path=path,
        allow_remote=allow_remote,
        legacy_sse=legacy_sse,
        redis=redis,
        **({"redis_secret": redis_secret} if redis_secret is not None else {}),
        grace=grace,
        **({"workers": workers} if workers > 1 else {}),
        **serve_options(auth),
        **tls,
    )
    return 0


def _redis_secret(redis: str | None, env: str | None) -> str | None:
    """The Redis bus secret named by ``--redis-secret-env VAR``: read from the environment once
    and removed from it (the tools' subprocesses do not inherit it; forked ``--workers`` get it
    from this process's memory), never on a command line."""
    if env is None:
        return None
    if redis is None:
        raise UsageError("--redis-secret-env needs --redis (it is the secret of the Redis bus)")
    secret = os.environ.pop(env, None)
    if secret is None or len(secret.encode()) < 16:
        raise UsageError(
            f"--redis-secret-env {env}: the environment variable {env} must hold the bus secret, at least 16 "
            "bytes, the same for every process of the deployment (e.g. 32 random hex digits)"
        )
    return secret


def _python_file(app: str) -> bool:
    """Whether ``app`` names a .py file (FILE.py[:OBJECT], or .pyw), not a command line ending in one."""
    where = split_app(app)[0]
    return where.endswith(SOURCE_SUFFIXES) and (os.path.isfile(where) or not any(c.isspace() for c in where))


def _check_issuer(auth: Any, timeout: float = 5.0) -> None:
    """Fetch the signing keys of ``auth``'s authorization server once at start-up (its metadata,
    then its JWKS): one warning when they cannot be had (a typo in --auth-issuer, the issuer
    down), instead of a first client's 503. A warning, not a failure: an issuer that is down for
    a moment must not keep the server from starting (tokens are checked once it answers)."""
    jwks = getattr(getattr(auth, "verifier", None), "jwks", None)
    if jwks is None:  # introspection, a verifier of the application's, the OAuth proxy
        return
    import asyncio

    from .._auth._jwks import AuthUnavailable

    async def fetch() -> None:
        try:
            async with asyncio.timeout(timeout):
                await jwks.get(None)
        finally:
            await jwks.aclose()

    try:
        asyncio.run(fetch())
    except (AuthUnavailable, TimeoutError) as exc:
        issuer = getattr(auth, "issuer", None) or "the authorization server"
        print(
            f"mcpio: warning: cannot fetch the signing keys of {issuer} now ({str(exc) or f'no answer within {timeout:g} s'}): "
            "every token is refused with 503 until it can be reached; check --auth-issuer (and --auth-jwks)",
            file=sys.stderr,
            flush=True,
        )


def command(args: Any) -> int:
    """``mcpio run``: the entry point the command table names."""
    given = ", ".join(dict.fromkeys(getattr(args, "http_options", ())))  # cli._http_option notes them
    if given and args.transport != "http":  # refused before any upstream starts
        raise UsageError(
            f"{given} {'is' if ',' not in given else 'are'} for Streamable HTTP: add -t http "
            "(without it mcpio run serves stdio, to the host that starts it)"
        )
    if getattr(args, "otel", False):  # before the server is built: Server(telemetry=None) reads it
        import importlib.util

        from .._otel import ENV

        if importlib.util.find_spec("opentelemetry") is None:
            raise UsageError("--otel needs the OpenTelemetry API: pip install 'mcpio[otel]'")
        os.environ[ENV] = "1"  # inherited by --reload's server process too
    from_environment(args)
    server = None
    if args.openapi or args.app is None:
        from ._openapi import openapi_server  # --openapi SPEC [--base-url URL]

        server, args.app = openapi_server(args)
    elif not _python_file(args.app):  # (a .py file is served as ever, importing nothing more)
        if args.round_timeout is not None:  # refused before any upstream starts
            from .._server._mrtr import round_timeout_checked

            try:
                round_timeout_checked(args.round_timeout, "--round-timeout")
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        from ._gateway import gateway_server  # a URL, a command line, an mcpServers file: proxied

        server = gateway_server(
            args.app, start_now=args.workers == 1, round_timeout=args.round_timeout, must_start=args.transport == "http"
        )
    if args.round_timeout is not None and (server is None or args.openapi):
        raise UsageError("--round-timeout is for a proxied target: a URL, a command line or an mcpServers file")
    if args.reload:
        if server is not None:
            raise UsageError("--reload works with Python code (a server.py); a proxied server reloads nothing")
        if args.transport != "stdio":
            raise UsageError("--reload works with stdio (for HTTP, restart the server yourself)")
        from ._reload import run_with_reload

        return run_with_reload(args.app, split_app(args.app)[0], verbose=args.verbose)
    from ..cli import RUN_DEFAULTS

    auth, tls = None, {}
    if any(getattr(args, k, v) != v for k, v in RUN_DEFAULTS.items()):  # else `run TARGET` alone: nothing to check
        from ._auth_flags import resource_server_from
        from ._proxy_flags import proxy_from
        from ._tls_flags import tls_options

        auth, tls = proxy_from(args) or resource_server_from(args), tls_options(args)
    return run_app(
        args.app,
        args.transport,
        host=args.host,
        port=args.port,
        path=args.path,
        allow_remote=args.allow_remote,
        legacy_sse=args.legacy_sse,
        auth=auth,
        redis=args.redis,
        redis_secret_env=getattr(args, "redis_secret_env", None),
        tls=tls,
        workers=args.workers,
        grace=args.grace,
        server=server,
        proxied=server is not None and not args.openapi,
    )
