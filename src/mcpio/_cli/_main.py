"""The commands that talk to one server (list, call, read, prompt), config, and dispatch."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import sys
from typing import Any

from .._client._client import Client
from .._client._target import UnsupportedTarget
from .._errors import MCPError, TransportError
from .._host._config import ConfigError, known_files, load_config
from ._output import content_text, dump_json, error, resource_text, table
from ._targets import UsageError, client_for, parse_pairs

KINDS = ("tools", "resources", "templates", "prompts")


def dispatch(args: Any) -> int:
    """Run the command ``args.command``; returns the exit status."""
    try:
        if args.command == "run":
            from ._run import run_app

            if args.reload:
                if args.transport != "stdio":
                    raise UsageError("--reload works with stdio (for HTTP, restart the server yourself)")
                from ._reload import run_with_reload
                from ._run import split_app

                return run_with_reload(args.app, split_app(args.app)[0])
            from ._auth_flags import resource_server_from
            from ._proxy_flags import proxy_from

            return run_app(args.app, args.transport, host=args.host, port=args.port, path=args.path,
                           allow_remote=args.allow_remote, legacy_sse=args.legacy_sse,
                           auth=proxy_from(args) or resource_server_from(args))
        if args.command == "install":
            from ._install import install

            return install(args)
        if args.command == "tap":
            from ._tap import tap

            return tap(args.output, args.redact, args.server_command)
        if args.command == "config":
            return show_config(args)
        if args.command == "replay":
            from ._replay import replay

            return asyncio.run(replay(args))
        if args.command == "doctor":
            from ._doctor import doctor

            return asyncio.run(doctor(args))
        return asyncio.run(COMMANDS[args.command](args))
    except UsageError as exc:
        error(str(exc))
        return 2
    except MCPError as exc:
        if getattr(args, "json", False):
            dump_json({"error": exc.to_error_object()})
        error(f"{exc.message} (error {exc.code})")
        return 1
    except (ConfigError, UnsupportedTarget, TransportError, OSError, NotImplementedError) as exc:
        if getattr(args, "json", False):
            dump_json({"error": {"message": str(exc)}})
        error(str(exc))
        return 1
    except KeyboardInterrupt:
        return 130


def _client(args: Any) -> Client:
    def on_log(params: dict[str, Any]) -> None:
        if args.verbose:
            sys.stderr.write(f"[server {params.get('level', 'info')}] {params.get('data')}\n")

    return client_for(args.target, args, on_log=on_log)


def _signature(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ""
    props = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    parts = []
    for name, prop in props.items():
        kind = prop.get("type", "any") if isinstance(prop, dict) else "any"
        if isinstance(kind, list):
            kind = "|".join(map(str, kind))
        parts.append(f"{name}:{kind}" + ("" if name in required else "?"))
    return " ".join(parts)


async def cmd_list(args: Any) -> int:
    kinds = [args.kind] if args.kind else list(KINDS)
    data: dict[str, list[dict[str, Any]]] = {}
    async with _client(args) as c:
        fetch = {
            "tools": c.list_tools, "resources": c.list_resources,
            "templates": c.list_resource_templates, "prompts": c.list_prompts,
        }
        for kind in kinds:
            data[kind] = await fetch[kind]()
    if args.json:
        dump_json(data[args.kind] if args.kind else data)
        return 0
    blocks = []
    for kind in kinds:
        items = data[kind]
        if kind == "tools":
            rows = [[t.get("name"), _signature(t.get("inputSchema")), t.get("title") or t.get("description")] for t in items]
            head = ["NAME", "ARGUMENTS", "DESCRIPTION"]
        elif kind == "resources":
            rows = [[r.get("uri"), r.get("name"), r.get("mimeType", ""), r.get("description")] for r in items]
            head = ["URI", "NAME", "MIME TYPE", "DESCRIPTION"]
        elif kind == "templates":
            rows = [[r.get("uriTemplate"), r.get("name"), r.get("description")] for r in items]
            head = ["URI TEMPLATE", "NAME", "DESCRIPTION"]
        else:
            rows = [[p.get("name"), " ".join(a.get("name", "") + ("" if a.get("required") else "?") for a in p.get("arguments") or []),
                     p.get("description")] for p in items]
            head = ["NAME", "ARGUMENTS", "DESCRIPTION"]
        title = f"{kind} ({len(items)})" if len(kinds) > 1 else ""
        body = table(head, rows) if rows else f"(no {kind})"
        blocks.append(f"{title}\n{body}" if title else body)
    print("\n\n".join(blocks))
    return 0


def _progress(args: Any) -> Any:
    if not (args.verbose or sys.stderr.isatty()):
        return None

    def show(progress: float, total: float | None, message: str | None) -> None:
        of = f"/{total:g}" if isinstance(total, (int, float)) else ""
        sys.stderr.write(f"progress {progress:g}{of}" + (f" {message}" if message else "") + "\n")

    return show


async def cmd_call(args: Any) -> int:
    arguments: dict[str, Any] = {}
    if args.args_json is not None:
        try:
            arguments = json.loads(args.args_json)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--args is not valid JSON ({exc.msg})") from None
        if not isinstance(arguments, dict):
            raise UsageError("--args must be a JSON object")
    async with _client(args) as c:
        if args.arguments:
            tool = next((t for t in await c.list_tools() if t.get("name") == args.tool), None)
            schema = tool.get("inputSchema") if tool else {}
            arguments.update(parse_pairs(args.arguments, schema if isinstance(schema, dict) else {}))
        result = await c.call_tool(args.tool, arguments, on_progress=_progress(args))
    failed = bool(result.get("isError"))
    if args.json:
        dump_json(result)
    else:
        blocks = result.get("content") or []
        texts = [content_text(b) for b in blocks if isinstance(b, dict)]
        if not texts and "structuredContent" in result:
            texts = [json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)]
        out = "\n".join(texts)
        (sys.stderr if failed else sys.stdout).write(out + ("\n" if out else ""))
        if failed:
            error(f"the tool {args.tool!r} reported an error")
    return 1 if failed else 0


async def cmd_read(args: Any) -> int:
    async with _client(args) as c:
        contents = await c.read_resource(args.uri)
    if args.json:
        dump_json({"contents": contents})
        return 0
    for item in contents:
        if "blob" in item and not sys.stdout.isatty():
            sys.stdout.flush()
            sys.stdout.buffer.write(base64.b64decode(item["blob"]))  # raw bytes for a pipe or a file
            continue
        text = resource_text(item)
        sys.stdout.write(text + ("" if text.endswith("\n") else "\n"))
    return 0


async def cmd_prompt(args: Any) -> int:
    arguments = parse_pairs(args.arguments, None)
    async with _client(args) as c:
        result = await c.get_prompt(args.name, arguments)
    if args.json:
        dump_json(result)
        return 0
    parts = []
    if result.get("description"):
        parts.append(f"# {result['description']}")
    for m in result.get("messages") or []:
        content = m.get("content")
        blocks = content if isinstance(content, list) else [content]
        parts.append(f"[{m.get('role')}]\n" + "\n".join(content_text(b) for b in blocks if isinstance(b, dict)))
    print("\n\n".join(parts))
    return 0


def show_config(args: Any) -> int:
    rows = []
    broken = 0
    if args.config and args.config not in known_files() and not os.path.isfile(args.config):
        error(f"{args.config} is neither a host ({', '.join(known_files())}) nor a file")
        return 1
    sources = {args.config: [args.config]} if args.config and args.config not in known_files() else {
        k: v for k, v in known_files().items() if not args.config or k == args.config}
    for host, files in sources.items():
        for f in files:
            if not os.path.isfile(f):
                continue
            try:
                servers = load_config(f)
            except ConfigError as exc:  # one broken file does not hide the others
                error(str(exc))
                broken += 1
                continue
            for name, spec in servers.items():
                how = spec.url or " ".join([spec.command or "", *spec.args])
                rows.append({"host": host, "name": name, "target": f"{host}:{name}", "run": how, "file": str(f),
                             "disabled": spec.disabled})
    if args.json:
        dump_json(rows)
    elif rows:
        print(table(["TARGET", "COMMAND OR URL", "FILE"], [[r["target"] + (" (disabled)" if r["disabled"] else ""), r["run"], r["file"]] for r in rows]))
    else:
        print("no MCP servers found in " + ("the known host config files" if not args.config else args.config))
    return 1 if broken else 0


COMMANDS = {"list": cmd_list, "call": cmd_call, "read": cmd_read, "prompt": cmd_prompt}
