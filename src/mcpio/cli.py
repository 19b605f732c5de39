"""The ``mcpio`` command line (also ``python -m mcpio``).

This module holds only the argument parser, so ``mcpio --help`` imports nothing heavy; each
command's code is imported when it runs (``mcpio._cli``). Exit statuses: ``mcpio._cli._exit``
(its table ends ``mcpio --help``).

Adding a command: write ``def _my_args(p: argparse.ArgumentParser) -> None`` that declares
its arguments (call ``_common(p)`` for the TARGET options), and append
``Command("name", "one-line help", _my_args, "mcpio._cli._module:function")`` to
:data:`COMMANDS`. The function receives the parsed ``args`` and returns the exit status; it may
be ``async`` (run with ``asyncio.run``). It reaches a server with
``mcpio._cli._targets.client_for(args.target, args)`` (every target kind, the same way) and
raises ``CLIFailure``/``UsageError`` for one-line errors; other exceptions are mapped to exit
statuses in ``mcpio._cli._dispatch.report``. Adding flags to an existing command: extend its
``_*_args`` function here.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._cli._exit import TABLE as EXIT_TABLE

if TYPE_CHECKING:
    import argparse  # imported by build_parser: `mcpio run server.py` serves without it (parse_plain_run)

TARGET_HELP = (
    "the server: a .py file (optionally FILE:OBJECT) or MODULE:OBJECT, a quoted command line ('npx -y some-server'), an http(s):// URL "
    "(Streamable HTTP), CONFIG:NAME (CONFIG is a host - claude, claude-code, cursor, vscode, windsurf, "
    "zed - or a JSON file), or a NAME found in those hosts' config files"
)

EPILOG = (
    """examples:
  mcpio run server.py                       serve a module's Server over stdio
  mcpio run server.py -t http --port 8000   ... or over Streamable HTTP at http://127.0.0.1:8000/mcp
  mcpio run server.py --reload              restart it on every save, behind one stdio connection
  mcpio install server.py --host claude     add it to Claude Desktop's config (absolute paths, checked first)
  mcpio list server.py tools                list a server's tools
  mcpio call server.py add a=1 b=2          call a tool (values follow its inputSchema)
  mcpio call "npx -y some-server" echo message=hi
  mcpio call claude:filesystem read_file path=README.md
  mcpio list http://127.0.0.1:8000/mcp      a Streamable HTTP server (either era)
  mcpio read server.py greeting://Ada       read a resource
  mcpio prompt server.py review_code code='x = 1'
  mcpio tap -o trace.jsonl -- server.py     record a host's traffic (put this in its config)
  mcpio replay trace.jsonl -- server.py     re-send it and report responses that differ
  mcpio doctor server.py                    check a server (latency, eras, catalog size, names, schemas)
  mcpio inspect server.py                   explore and call a server in the browser (no Node needed)
  mcpio login https://example.com/mcp       log in to an OAuth-protected server (browser); later commands use the token
  mcpio auth https://example.com/mcp        explain its authorization set-up step by step

TARGET (every command that talks to a server accepts all of these, the same way):
  server.py  server.py:OBJECT  package.module:OBJECT   a Python Server (started with `mcpio run`)
  'npx -y @modelcontextprotocol/server-everything'     a command line (no shell)
  http://127.0.0.1:8000/mcp                            Streamable HTTP (either era)
  claude:NAME  cursor:NAME  ./mcp.json:NAME  NAME      an entry of a host's config file
  mcp-server-time  ./bin/some-server                   a command on PATH, a program by its path
  mcp.json                                             every entry of an mcpServers file, one gateway

"""
    + EXIT_TABLE
)


def _common(
    p: argparse.ArgumentParser,
    *,
    json_flag: bool = True,
    era_flag: bool = True,
    trace_flag: bool = True,
    timeout: float | None = 60.0,
) -> None:
    if json_flag:
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
    if era_flag:
        p.add_argument(
            "--era",
            choices=("auto", "legacy", "modern"),
            default="auto",
            help="the protocol era: auto (default: try 2026-07-28 server/discover, else initialize), "
            "legacy (initialize, up to 2025-11-25) or modern (2026-07-28)",
        )
    p.add_argument(
        "--timeout",
        type=float,
        default=timeout,
        metavar="S",
        help=f"seconds to wait for each answer (default {timeout:g})"
        if timeout is not None
        else "seconds to wait for each answer (default: no limit; the page has a Cancel button)",
    )
    p.add_argument(
        "-e",
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="set an environment variable for the server",
    )
    p.add_argument(
        "--env-mode",
        choices=("inherit", "safe", "exact"),
        default="inherit",
        help="the server's environment: ours (inherit), a safe minimum (safe) or only -e values (exact); PATH is always kept",
    )
    p.add_argument("--cwd", metavar="DIR", help="the server's working directory")
    p.add_argument("-v", "--verbose", action="store_true", help="show the server's stderr")
    if trace_flag:
        p.add_argument("--trace", metavar="FILE", help="append every message sent and received to FILE")
    if era_flag:
        p.add_argument(
            "-H",
            "--header",
            action="append",
            default=[],
            metavar="'NAME: VALUE'",
            help="an HTTP header for a URL target (e.g. 'Authorization: Bearer …')",
        )


class Command:
    """One subcommand: its name, its help line, the function declaring its arguments, and the
    ``module:function`` that runs it (imported only when the command runs).

    A plain class, not a ``typing.NamedTuple``: under ``from __future__ import annotations`` a
    NamedTuple checks its string annotations with ``compile()``, whose first call in a process
    builds the ast module's node classes (~9.4 M instructions, an eighth of a stdio server's
    start-up) for ``mcpio run`` that never uses them (tests/cli/test_run_cold.py)."""

    __slots__ = ("arguments", "handler", "help", "name")

    def __init__(
        self, name: str, help: str, arguments: Callable[[argparse.ArgumentParser], None], handler: str
    ) -> None:
        self.name = name
        self.help = help
        self.arguments = arguments
        self.handler = handler


def _http_option() -> type[argparse.Action]:
    """The action of ``mcpio run``'s options that only HTTP uses: it stores the value (``const``
    for a flag) and notes the option in ``http_options``, which ``mcpio run`` refuses without
    ``-t http`` (not ignored: ``--port 8000`` alone would serve stdio without a word)."""
    import argparse

    class HTTPOption(argparse.Action):
        def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
            setattr(namespace, self.dest, self.const if self.nargs == 0 else values)
            namespace.http_options = (*getattr(namespace, "http_options", ()), option_string)

    return HTTPOption


def _run_args(p: argparse.ArgumentParser) -> None:
    http = _http_option()
    p.add_argument(
        "app",
        nargs="?",
        metavar="TARGET",
        help="a .py file or module (optionally :name of the Server object); or a server to proxy: a URL, a "
        "command line in quotes, CONFIG:NAME, a command or program path, or an mcpServers JSON file (every "
        "entry, one gateway)",
    )
    p.add_argument(
        "--openapi",
        metavar="SPEC",
        help="serve the HTTP API an OpenAPI 3.0/3.1 document describes (a file or URL, JSON or YAML) instead of FILE",
    )
    p.add_argument("--base-url", metavar="URL", help="--openapi: the API's root URL (default: the document's servers)")
    p.add_argument(
        "-t",
        "--transport",
        choices=("stdio", "http"),
        help="stdio (the default) or http (Streamable HTTP with uvicorn: pip install 'mcpio[http]')",
    )
    p.add_argument("--host", action=http, help="http: the address to bind (default %(default)s)")
    p.add_argument("--port", action=http, type=int, help="http: the port (default %(default)s)")
    p.add_argument("--path", action=http, help="http: the endpoint path (default %(default)s)")
    p.add_argument(
        "--allow-remote", action=http, nargs=0, const=True, help="http: allow binding an address other than loopback"
    )
    p.add_argument(
        "--legacy-sse",
        action=http,
        nargs=0,
        const=True,
        help="http: also serve the 2024-11-05 HTTP+SSE transport at /sse and /messages",
    )
    p.add_argument(
        "--redis",
        action=http,
        metavar="URL",
        help="http: keep the server's state (the SSE event store) on Redis, redis://HOST:PORT/DB",
    )
    p.add_argument(
        "--redis-secret-env",
        action=http,
        metavar="VAR",
        help="http: the environment variable holding the Redis bus secret (at least 16 bytes; the same "
        "for every process of the deployment); read once and removed from the environment. Without "
        "it, a random secret kept in the Redis database",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="http: serve the port from N processes (N > 1 needs --redis); a dead one is restarted",
    )
    p.add_argument(
        "--grace",
        action=http,
        type=float,
        metavar="SECONDS",
        help="http: on SIGTERM/Ctrl-C, how long requests in flight may finish (default %(default)g)",
    )
    p.add_argument(
        "--round-timeout",
        type=float,
        metavar="SECONDS",
        help="a proxied target: how long a call its upstream asked something during waits for a 2026-07-28 "
        "client's next input_required round (default 600)",  # _mrtr.ROUND_TIMEOUT: --help loads no server code
    )
    p.add_argument(
        "--reload",
        action="store_true",
        help="stdio: restart the server when a .py file below its folder changes (the host stays connected)",
    )
    p.add_argument(
        "--otel",
        action="store_true",
        help="OpenTelemetry spans and metrics for every request (sets MCPIO_OTEL=1; pip install 'mcpio[otel]'; "
        "the SDK and exporter come from your code or opentelemetry-instrument)",
    )
    p.add_argument("-v", "--verbose", action="store_true", help="full tracebacks for errors in the server's code")
    from ._cli._auth_flags import add_auth_flags
    from ._cli._proxy_flags import add_proxy_flags
    from ._cli._tls_flags import add_tls_flags

    add_auth_flags(p)
    add_proxy_flags(p)
    add_tls_flags(p)
    p.set_defaults(**RUN_DEFAULTS)  # the one statement of each default (parse_plain_run gives the same)


#: The run command's defaults: what its parser gives for ``run TARGET`` alone, besides ``command``,
#: ``version`` and ``app``. The parser takes them from here (``set_defaults``), and so does
#: :func:`parse_plain_run` (tests/cli/test_plain_run.py compares the two results).
RUN_DEFAULTS: dict[str, Any] = {
    **dict.fromkeys(("openapi", "base_url", "redis", "redis_secret_env", "round_timeout")),
    **dict.fromkeys(("allow_remote", "legacy_sse", "reload", "otel", "verbose", "http2"), False),
    "transport": "stdio",
    "host": "127.0.0.1",
    "port": 8000,
    "path": "/mcp",
    "workers": 1,
    "grace": 10.0,
    **dict.fromkeys(
        ("auth_issuer", "auth_audience", "auth_scopes", "auth_jwks", "auth_introspect", "auth_client_id")
        + ("auth_token_env", "auth_proxy_upstream", "auth_proxy_authorize_url", "auth_proxy_token_url")
        + ("auth_proxy_client_id", "auth_proxy_issuer", "auth_proxy_scopes", "auth_proxy_upstream_scopes")
        + ("auth_proxy_userinfo", "certfile", "keyfile")
    ),
    "auth_proxy_client_secret_env": "MCPIO_AUTH_PROXY_CLIENT_SECRET",
    "auth_proxy_subject_claim": "sub",
}


def parse_plain_run(args_list: list[str]) -> Any:
    """``run TARGET`` and nothing else (the command ``mcpio install`` writes into host configs)
    parsed without argparse, which with its parser costs a fifth of a stdio server's start-up;
    None for any other command line."""
    # Invariant: for each list accepted here the result equals argparse's; all else goes to argparse.
    if len(args_list) != 2 or args_list[0] != "run" or args_list[1][:1] == "-":
        return None
    from types import SimpleNamespace

    return SimpleNamespace(version=False, command="run", app=args_list[1], **RUN_DEFAULTS)


def _inspect_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "target", nargs="?", default="", metavar="TARGET", help=TARGET_HELP + " (optional: or choose in the page)"
    )
    p.add_argument("--port", type=int, default=0, help="the inspector's port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", dest="browser", action="store_false", help="print the URL; do not open a browser")
    _common(p, json_flag=False, trace_flag=False, timeout=None)  # no timeout unless --timeout: Cancel instead


_STORE_HELP = "the token store file (default: $MCPIO_TOKEN_STORE, else ~/.local/state/mcpio/tokens.json)"


def _login_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", metavar="URL", help="the server's Streamable HTTP URL")
    p.add_argument("--client-id", help="a client id registered with the authorization server (else CIMD or DCR)")
    p.add_argument("--client-secret-env", metavar="VAR", help="the environment variable holding the client secret")
    p.add_argument(
        "--issuer",
        metavar="URL",
        help="the authorization server --client-id is registered with (required with --client-secret-env; "
        "its credentials are never sent to another)",
    )
    p.add_argument("--scopes", help="scopes to ask for, comma- or space-separated (default: what the server asks)")
    p.add_argument("--callback-port", type=int, default=0, help="the loopback redirect port (default: any free port)")
    p.add_argument("--no-browser", action="store_true", help="print the login URL instead of opening a browser")
    p.add_argument("--store", metavar="FILE", help=_STORE_HELP)
    p.add_argument(
        "--timeout", type=float, default=300.0, metavar="S", help="seconds to wait for the login (default 300)"
    )


def _logout_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", metavar="URL", help="the server's Streamable HTTP URL")
    p.add_argument("--store", metavar="FILE", help=_STORE_HELP)


def _auth_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("url", metavar="URL", help="the server's Streamable HTTP URL")
    p.add_argument("--store", metavar="FILE", help=_STORE_HELP)
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def _list_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument(
        "kind", nargs="?", choices=("tools", "resources", "templates", "prompts", "skills"), help="only this kind"
    )
    _common(p)


def _call_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("tool", metavar="TOOL")
    p.add_argument(
        "arguments",
        nargs="*",
        default=[],  # not listed as required when TOOL is missing (argparse lists a '*' without a default)
        metavar="KEY=VALUE",
        help="an argument, coerced by the tool's inputSchema (KEY:=JSON for raw JSON)",
    )
    p.add_argument("--args", dest="args_json", metavar="JSON", help="all arguments as one JSON object")
    p.add_argument(
        "--no-validate",
        dest="validate",
        action="store_false",
        help="send the arguments even if they do not match the tool's inputSchema",
    )
    _common(p)


def _read_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("uri", metavar="URI")
    _common(p)


def _prompt_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("name", metavar="NAME")
    p.add_argument("arguments", nargs="*", default=[], metavar="KEY=VALUE")  # optional, as for call
    _common(p)


def _tap_args(p: argparse.ArgumentParser) -> None:
    p.usage = "mcpio tap -o FILE [--redact KEY] [--] COMMAND ..."
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the trace file (JSON lines; appended)")
    p.add_argument(
        "--redact", action="append", default=[], metavar="KEY", help="replace the value of every KEY in the trace"
    )


def _replay_args(p: argparse.ArgumentParser) -> None:
    p.usage = "mcpio replay FILE [--ignore KEY] [options] [--] COMMAND ..."
    p.add_argument("trace", metavar="FILE")
    p.add_argument("--ignore", action="append", default=[], metavar="KEY", help="ignore KEY (anywhere) when comparing")
    _common(p, era_flag=False, trace_flag=False)  # the trace's own messages are sent, in their era


def _doctor_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("target", nargs="?", metavar="TARGET", help=TARGET_HELP)
    p.add_argument(
        "--openapi",
        metavar="SPEC",
        help="check the server `mcpio run --openapi SPEC` makes, and list the operations it skips and why",
    )
    p.add_argument("--base-url", metavar="URL", help="--openapi: the API's root URL (default: the document's servers)")
    _common(p)


def _install_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "app",
        metavar="TARGET",
        help="your server: a .py file or MODULE, optionally :OBJECT (served by "
        "mcpio run); or any other TARGET: a command line, a command on PATH, a URL, HOST:NAME (copied)",
    )
    p.add_argument("--host", required=True, help="claude, claude-code, cursor, vscode, windsurf or zed")
    p.add_argument("--name", help="the server's name in the host (default: the name the server gives itself)")
    p.add_argument(
        "--env", action="append", metavar="NAME=VALUE", help="an environment variable for the server (repeatable)"
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="a URL entry's HTTP header (repeatable); ${VAR} is replaced by $VAR, e.g. 'Authorization: Bearer ${TOKEN}'",
    )
    p.add_argument(
        "--project", action="store_true", help="the host's project file in this folder (claude-code, cursor, vscode)"
    )
    p.add_argument("--config", metavar="FILE", help="write this file instead of the host's own")
    p.add_argument("--force", action="store_true", help="replace an entry of the same name")
    p.add_argument("--dry-run", action="store_true", help="print the entry and where it would go; write nothing")
    p.add_argument("--no-check", dest="check", action="store_false", help="do not start the server before writing")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="full tracebacks for errors in the server's code")


def _config_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", metavar="CONFIG", help="a host name or a JSON file")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


#: Every subcommand, in the order ``mcpio --help`` lists them. Add new ones here.
COMMANDS: list[Command] = [
    Command(
        "run",
        "serve a Server (a Python file or module), or proxy a URL, a command or an mcpServers file, over stdio or HTTP",
        _run_args,
        "mcpio._cli._run:command",
    ),
    Command("list", "list a server's tools, resources, templates and prompts", _list_args, "mcpio._cli._main:cmd_list"),
    Command("call", "call a tool: mcpio call TARGET TOOL k=v ...", _call_args, "mcpio._cli._call:cmd_call"),
    Command("read", "read a resource", _read_args, "mcpio._cli._main:cmd_read"),
    Command("prompt", "get a prompt: mcpio prompt TARGET NAME k=v ...", _prompt_args, "mcpio._cli._main:cmd_prompt"),
    Command(
        "tap",
        "a transparent stdio proxy that records every message: tap -o FILE -- COMMAND ...",
        _tap_args,
        "mcpio._cli._tap:command",
    ),
    Command(
        "replay",
        "re-send a trace's client messages to a server: replay FILE -- COMMAND ...",
        _replay_args,
        "mcpio._cli._replay:replay",
    ),
    Command(
        "doctor",
        "check a server: startup time, eras, capabilities, catalog size, names, schemas",
        _doctor_args,
        "mcpio._cli._doctor:doctor",
    ),
    Command(
        "install",
        "add a Server to a host's config file (Claude, Cursor, VS Code …), checked first",
        _install_args,
        "mcpio._cli._install:install",
    ),
    Command(
        "config",
        "list the servers in the known host config files (or in CONFIG)",
        _config_args,
        "mcpio._cli._main:show_config",
    ),
    Command(
        "inspect",
        "a web inspector for a server, in the browser (127.0.0.1, token-protected)",
        _inspect_args,
        "mcpio._cli._inspect:inspect",
    ),
    Command(
        "login",
        "log in to an OAuth-protected MCP server (browser) and keep the token",
        _login_args,
        "mcpio._cli._login:run",
    ),
    Command("logout", "forget the stored OAuth tokens of an MCP server", _logout_args, "mcpio._cli._login:run"),
    Command(
        "auth",
        "explain an MCP server's authorization set-up, step by step (no login)",
        _auth_args,
        "mcpio._cli._login:run",
    ),
]
NAMES = frozenset(c.name for c in COMMANDS)
PASSTHROUGH = ("tap", "replay")  # commands that take the server's command after --


def _formatters() -> tuple[type[argparse.HelpFormatter], type[argparse.HelpFormatter]]:
    """argparse's formatter sized to the terminal as ``shutil.get_terminal_size`` sizes it (without
    importing shutil, and with it bz2, lzma and zlib, for a command that prints no help), and the
    same keeping descriptions as written."""
    import argparse

    class Formatter(argparse.HelpFormatter):
        def __init__(
            self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
        ) -> None:
            if width is None:
                try:
                    width = int(os.environ["COLUMNS"])
                except (KeyError, ValueError):
                    try:
                        width = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
                    except (AttributeError, ValueError, OSError):
                        width = 80
                width -= 2
            super().__init__(prog, indent_increment, max_help_position, width)

    class RawDescriptionFormatter(argparse.RawDescriptionHelpFormatter, Formatter):
        pass

    return Formatter, RawDescriptionFormatter


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; with ``only``, the arguments of that command alone (the
    others keep their names and help lines): what ``mcpio run`` imports stays what serving needs."""
    import argparse

    formatter, raw_description_formatter = _formatters()
    parser = argparse.ArgumentParser(
        prog="mcpio",
        description="Model Context Protocol tools: serve, inspect, call, record and check MCP servers.",
        epilog=EPILOG,
        formatter_class=raw_description_formatter,
    )
    parser.add_argument("--version", action="store_true", help="print the mcpio version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        subparser = sub.add_parser(command.name, help=command.help, description=command.help, formatter_class=formatter)
        if only is None or command.name == only:
            command.arguments(subparser)
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if args_list and args_list[0] in PASSTHROUGH:  # the server's command: after -- or the options
        from ._cli._passthrough import split_passthrough

        args_list, command = split_passthrough(args_list, next(c.arguments for c in COMMANDS if c.name == args_list[0]))
    named = args_list[0] if args_list and args_list[0] in NAMES else None
    args = parse_plain_run(args_list)
    from . import _collector

    if named == "run" and args is not None:  # `run TARGET`, the command hosts run: paused until it serves
        _collector.pause()
    else:  # (python -m mcpio paused it for its imports)
        _collector.resume()
    if named == "run":  # this process serves: msgspec loads before the server's imports
        from ._coldstart import import_msgspec

        import_msgspec()
    if args is None:
        parser = build_parser(named)
        args, extra = parser.parse_known_args(args_list)
        if extra and getattr(args, "arguments", None) is not None:  # k=v after an option: `call T t --args {} b=5`
            args.arguments += [e for e in extra if not e.startswith("-")]
            extra = [e for e in extra if e.startswith("-")]
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        if args.version:
            from ._version import __version__

            print(f"mcpio {__version__}")
            return 0
        if args.command is None:
            parser.print_help()
            return 2
    args.end_of_options = "--" in args_list  # `mcpio call -- TARGET TOOL …`: what follows is data
    if args.command in PASSTHROUGH and not command:
        import argparse

        example = "-o trace.jsonl" if args.command == "tap" else "trace.jsonl"
        sub = argparse.ArgumentParser(prog=f"mcpio {args.command}")
        next(c for c in COMMANDS if c.name == args.command).arguments(sub)
        sub.error(f"the server's command goes after the options, e.g. mcpio {args.command} {example} python server.py")
    args.server_command = command
    try:
        from ._cli._dispatch import dispatch

        return dispatch(args, next(c.handler for c in COMMANDS if c.name == args.command))
    finally:
        _collector.resume()  # the command ended before serving (a failure): collection is on again


if __name__ == "__main__":
    raise SystemExit(main())
