"""The ``mcpio`` command line (also ``python -m mcpio``).

This module holds only the argument parser, so ``mcpio --help`` imports nothing heavy; each
command's code is imported when it runs (``mcpio._cli``). Exit status: 0 on success, 1 when
the command failed (an error from the server, a tool result with ``isError``, a difference
found by ``replay``, a problem found by ``doctor``), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import sys

TARGET_HELP = (
    "the server: a .py file, a quoted command line ('npx -y some-server'), an http(s):// URL "
    "(Streamable HTTP), CONFIG:NAME (CONFIG is a host - claude, claude-code, cursor, vscode, windsurf, "
    "zed - or a JSON file), or a NAME found in those hosts' config files"
)

EPILOG = """examples:
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
  mcpio tap -o trace.jsonl -- python server.py    record a host's traffic (put this in its config)
  mcpio replay trace.jsonl -- python server.py    re-send it and report responses that differ
  mcpio doctor server.py                    check a server (latency, eras, catalog size, names, schemas)
"""


def _common(p: argparse.ArgumentParser, *, json_flag: bool = True, era_flag: bool = True, trace_flag: bool = True) -> None:
    if json_flag:
        p.add_argument("--json", action="store_true", help="print JSON instead of text")
    if era_flag:
        p.add_argument("--era", choices=("auto", "legacy", "modern"), default="auto",
                       help="the protocol era: auto (default: try 2026-07-28 server/discover, else initialize), "
                       "legacy (initialize, up to 2025-11-25) or modern (2026-07-28)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds to wait for each answer (default 60)")
    p.add_argument("-e", "--env", action="append", default=[], metavar="KEY=VALUE", help="set an environment variable for the server")
    p.add_argument("--env-mode", choices=("inherit", "safe", "exact"), default="inherit",
                   help="the server's environment: ours (inherit), a safe minimum (safe) or only -e values (exact); PATH is always kept")
    p.add_argument("--cwd", metavar="DIR", help="the server's working directory")
    p.add_argument("-v", "--verbose", action="store_true", help="show the server's stderr")
    if trace_flag:
        p.add_argument("--trace", metavar="FILE", help="append every message sent and received to FILE")
    if era_flag:
        p.add_argument("-H", "--header", action="append", default=[], metavar="'NAME: VALUE'",
                       help="an HTTP header for a URL target (e.g. 'Authorization: Bearer …')")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcpio", description="Model Context Protocol tools: serve, inspect, call, record and check MCP servers.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="store_true", help="print the mcpio version")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("run", help="serve a Server from a Python file or module over stdio or Streamable HTTP")
    p.add_argument("app", metavar="FILE[:OBJECT]", help="a .py file or module, optionally :name of the Server object")
    p.add_argument("-t", "--transport", choices=("stdio", "http"), default="stdio",
                   help="stdio (the default) or http (Streamable HTTP with uvicorn: pip install 'mcpio[http]')")
    p.add_argument("--host", default="127.0.0.1", help="http: the address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="http: the port (default 8000)")
    p.add_argument("--path", default="/mcp", help="http: the endpoint path (default /mcp)")
    p.add_argument("--allow-remote", action="store_true", help="http: allow binding an address other than loopback")
    p.add_argument("--legacy-sse", action="store_true",
                   help="http: also serve the 2024-11-05 HTTP+SSE transport at /sse and /messages")
    p.add_argument("--reload", action="store_true",
                   help="stdio: restart the server when a .py file below its folder changes (the host stays connected)")
    from ._cli._auth_flags import add_auth_flags
    from ._cli._proxy_flags import add_proxy_flags

    add_auth_flags(p)
    add_proxy_flags(p)

    p = sub.add_parser("list", help="list a server's tools, resources, templates and prompts")
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("kind", nargs="?", choices=("tools", "resources", "templates", "prompts"), help="only this kind")
    _common(p)

    p = sub.add_parser("call", help="call a tool: mcpio call TARGET TOOL k=v ...")
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("tool", metavar="TOOL")
    p.add_argument("arguments", nargs="*", metavar="KEY=VALUE",
                   help="an argument, coerced by the tool's inputSchema (KEY:=JSON for raw JSON)")
    p.add_argument("--args", dest="args_json", metavar="JSON", help="all arguments as one JSON object")
    _common(p)

    p = sub.add_parser("read", help="read a resource")
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("uri", metavar="URI")
    _common(p)

    p = sub.add_parser("prompt", help="get a prompt: mcpio prompt TARGET NAME k=v ...")
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    p.add_argument("name", metavar="NAME")
    p.add_argument("arguments", nargs="*", metavar="KEY=VALUE")
    _common(p)

    p = sub.add_parser("tap", help="a transparent stdio proxy that records every message: tap -o FILE -- COMMAND ...")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="the trace file (JSON lines; appended)")
    p.add_argument("--redact", action="append", default=[], metavar="KEY", help="replace the value of every KEY in the trace")

    p = sub.add_parser("replay", help="re-send a trace's client messages to a server: replay FILE -- COMMAND ...")
    p.add_argument("trace", metavar="FILE")
    p.add_argument("--ignore", action="append", default=[], metavar="KEY", help="ignore KEY (anywhere) when comparing")
    _common(p, era_flag=False, trace_flag=False)  # the trace's own messages are sent, in their era

    p = sub.add_parser("doctor", help="check a server: startup time, eras, capabilities, catalog size, names, schemas")
    p.add_argument("target", metavar="TARGET", help=TARGET_HELP)
    _common(p)

    p = sub.add_parser("install", help="add a Server to a host's config file (Claude, Cursor, VS Code …), checked first")
    p.add_argument("app", metavar="FILE[:OBJECT]", help="a .py file or module, optionally :name of the Server object")
    p.add_argument("--host", required=True, help="claude, claude-code, cursor, vscode, windsurf or zed")
    p.add_argument("--name", help="the server's name in the host (default: the file's name)")
    p.add_argument("--env", action="append", metavar="NAME=VALUE", help="an environment variable for the server (repeatable)")
    p.add_argument("--project", action="store_true", help="the host's project file in this folder (claude-code, cursor, vscode)")
    p.add_argument("--config", metavar="FILE", help="write this file instead of the host's own")
    p.add_argument("--force", action="store_true", help="replace an entry of the same name")
    p.add_argument("--dry-run", action="store_true", help="print the entry and where it would go; write nothing")
    p.add_argument("--no-check", dest="check", action="store_false", help="do not start the server before writing")

    p = sub.add_parser("config", help="list the servers in the known host config files (or in CONFIG)")
    p.add_argument("config", nargs="?", metavar="CONFIG", help="a host name or a JSON file")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if args_list and args_list[0] in ("tap", "replay") and "--" in args_list:
        cut = args_list.index("--")
        args_list, command = args_list[:cut], args_list[cut + 1 :]
    parser = build_parser()
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
    if args.command in ("tap", "replay") and not command:
        parser.error(f"{args.command} needs the server's command after --, e.g. mcpio {args.command} ... -- python server.py")
    args.server_command = command
    from ._cli._main import dispatch

    return dispatch(args)


if __name__ == "__main__":
    raise SystemExit(main())
