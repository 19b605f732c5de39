"""The commands that talk to one server: list, read, prompt (call is in ``_call``), config."""

from __future__ import annotations

import base64
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypedDict

from .._client._client import Client
from .._errors import METHOD_NOT_FOUND, ConnectionClosed, MCPError, RemoteProtocolError, RequestTimeout
from .._host._config import ConfigError, known_files, load_config
from .._shown import shown
from ._dispatch import with_code
from ._exit import FAILED, USAGE, CLIFailure, UsageError
from ._output import clean, content_text, dump_json, err, error, one_line, out, resource_text, table
from ._signature import parameters, suggest
from ._targets import client_for, parse_pairs

KINDS = ("tools", "resources", "templates", "prompts")
METHODS = {
    "tools": "tools/list",
    "resources": "resources/list",
    "templates": "resources/templates/list",
    "prompts": "prompts/list",
    "skills": "skills/list",
}  # skills: only when asked for (SEP-2640)


def connect(args: Any) -> Client:
    """An unconnected Client for ``args.target`` with the command-line options (server log
    messages shown with ``-v``, cleaned)."""

    def on_log(params: dict[str, Any]) -> None:
        if args.verbose:
            err(f"[server {clean(params.get('level', 'info'), multiline=False)}] {clean(params.get('data'))}")

    return client_for(args.target, args, on_log=on_log)


async def _fetch(c: Client, kind: str) -> tuple[Sequence[dict[str, Any]], str | None, bool]:
    """(items, a note when the server could not list them, whether that is a failure)."""
    method = METHODS[kind]
    fetchers: dict[str, Callable[[], Awaitable[Sequence[dict[str, Any]]]]] = {
        "tools": c.list_tools,
        "resources": c.list_resources,
        "templates": c.list_resource_templates,
        "prompts": c.list_prompts,
        "skills": c.list_skills,
    }
    fetch = fetchers[kind]
    try:
        return await fetch(), None, False
    except (ConnectionClosed, RequestTimeout, RemoteProtocolError):
        raise
    except MCPError as exc:
        if exc.code == METHOD_NOT_FOUND:
            return (
                [],
                f"{method}: the server announced this capability but does not implement the method ({with_code(exc)})",
                False,
            )
        return [], f"{method} failed: the server answered {with_code(exc)}", True


def _rows(kind: str, items: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    if kind == "tools":
        return ["NAME", "ARGUMENTS", "DESCRIPTION"], [
            [t.get("name"), parameters(t.get("inputSchema")), t.get("description") or t.get("title") or ""]
            for t in items
        ]
    if kind == "resources":
        return ["URI", "NAME", "MIME TYPE", "DESCRIPTION"], [
            [r.get("uri"), r.get("name"), r.get("mimeType", ""), r.get("description")] for r in items
        ]
    if kind == "templates":
        return ["URI TEMPLATE", "NAME", "DESCRIPTION"], [
            [r.get("uriTemplate"), r.get("name"), r.get("description")] for r in items
        ]
    if kind == "skills":
        return ["URI", "NAME", "DESCRIPTION"], [
            [s.get("uri"), (s.get("frontmatter") or {}).get("name"), (s.get("frontmatter") or {}).get("description")]
            for s in items
        ]
    return ["NAME", "ARGUMENTS", "DESCRIPTION"], [
        [
            p.get("name"),
            ", ".join(
                str(a.get("name", "")) + ("" if a.get("required") else "?")
                for a in p.get("arguments") or []
                if isinstance(a, dict)
            ),
            p.get("description"),
        ]
        for p in items
    ]


async def cmd_list(args: Any) -> int:
    kinds = [args.kind] if args.kind else list(KINDS)
    data: dict[str, Sequence[dict[str, Any]]] = {}
    notes: dict[str, str] = {}
    failed = False
    async with connect(args) as c:
        for kind in kinds:
            items, note, bad = await _fetch(c, kind)
            data[kind] = items
            failed = failed or bad
            if note:
                notes[kind] = note
    if args.json:
        body: Any = data[args.kind] if args.kind else data
        if notes:  # the shape changes only when a list failed: {"items": [...], "notes": {...}}
            body = {"items": body, "notes": notes} if args.kind else {**data, "notes": notes}
        dump_json(body)
        return FAILED if failed else 0
    blocks = []
    for kind in kinds:
        items = data[kind]
        head, rows = _rows(kind, items)
        title = f"{kind} ({len(items)})" if len(kinds) > 1 else ""
        if kind in notes:
            body_text = f"(not listed: {notes[kind]})"
        else:
            body_text = table(head, rows) if rows else f"(no {kind})"
        blocks.append(f"{title}\n{body_text}" if title else body_text)
    out("\n\n".join(blocks))
    for note in notes.values():
        err(f"mcpio: note: {note}")
    return FAILED if failed else 0


async def cmd_read(args: Any) -> int:
    from .._errors import ResourceNotFound

    async with connect(args) as c:
        try:
            contents = await c.read_resource(args.uri)
        except ResourceNotFound as exc:
            meant = await _namespaced(c, args.uri)
            if meant:  # report() shows it as the hint, the error's code and data kept for --json
                hint = f"its resources are served under a namespace: did you mean {' or '.join(map(repr, meant))}?"
                setattr(exc, "hint", hint)  # noqa: B010 - MCPError declares no hint: report() reads it with getattr
            raise
    if args.json:
        dump_json({"contents": contents})
        return 0
    for item in contents:
        if "blob" in item and not sys.stdout.isatty():
            sys.stdout.flush()
            sys.stdout.buffer.write(base64.b64decode(item["blob"]))  # raw bytes for a pipe or a file
            continue
        out(resource_text(item))
    return 0


async def _namespaced(client: Client, uri: str) -> list[str]:
    """``uri`` under each namespace where the server serves it (a mount's, a gateway entry's:
    ``greeting://Ada`` read where ``greeting://math/{name}`` is served): the naming rule,
    :mod:`mcpio._naming`. Empty when the server lists nothing that fits (or cannot list)."""
    from .._naming import join_uri, strip_uri
    from .._uritemplate import UriTemplate, UriTemplateError

    try:
        served = [r.uri for r in await client.list_resources()]
        served += [t.uri_template for t in await client.list_resource_templates()]
    except MCPError:
        return []
    meant: list[str] = []
    for namespaced in served:
        _, sep, rest = namespaced.partition("://")
        namespace = (rest if sep else namespaced).partition("/")[0]
        original = strip_uri(namespaced, namespace)
        try:
            fits = original is not None and (original == uri or UriTemplate(original).match(uri) is not None)
        except UriTemplateError:
            fits = False
        if fits and join_uri(namespace, uri) not in meant:
            meant.append(join_uri(namespace, uri))
    return meant


async def cmd_prompt(args: Any) -> int:
    arguments = parse_pairs(args.arguments, None)
    async with connect(args) as c:
        prompts, _, _ = await _fetch(c, "prompts")
        if prompts:  # checked like a tool call: the name, then the argument names
            names = [str(p.get("name")) for p in prompts]
            prompt = next((p for p in prompts if p.get("name") == args.name), None)
            if prompt is None:
                raise CLIFailure(
                    f"the server has no prompt {one_line(args.name)!r}{suggest(args.name, names)}",
                    USAGE,
                    "its prompts: " + ", ".join(one_line(n) for n in names[:30]),
                )
            declared = [a for a in prompt.get("arguments") or [] if isinstance(a, dict)]
            known = [str(a.get("name")) for a in declared]
            usage = f"usage: {one_line(args.name)} " + " ".join(
                f"{one_line(n)}=…" if a.get("required") else f"[{one_line(n)}=…]"
                for n, a in zip(known, declared, strict=True)
            )
            problems = [f"unknown argument {k!r}{suggest(k, known)}" for k in arguments if k not in known]
            missing = [str(a.get("name")) for a in declared if a.get("required") and a.get("name") not in arguments]
            if missing:
                problems.append(
                    "missing required argument" + ("s " if len(missing) > 1 else " ") + ", ".join(map(repr, missing))
                )
            if problems:
                raise CLIFailure(
                    f"{one_line(args.name)}: " + "; ".join(problems), USAGE, usage.rstrip() + "   (nothing was sent)"
                )
        result = await c.get_prompt(args.name, arguments)
    if args.json:
        dump_json(result)
        return 0
    parts = []
    if result.get("description"):
        parts.append(f"# {one_line(result['description'])}")
    for m in result.get("messages") or []:
        content = m.get("content")
        blocks = content if isinstance(content, list) else [content]
        parts.append(
            f"[{one_line(m.get('role'))}]\n" + "\n".join(content_text(b) for b in blocks if isinstance(b, dict))
        )
    out("\n\n".join(parts))
    return 0


class _ConfigRow(TypedDict):
    """One server of ``mcpio config`` (a row of the table, an object of ``--json``)."""

    host: str
    name: str
    target: str
    run: str
    file: str
    disabled: bool


def show_config(args: Any) -> int:
    rows: list[_ConfigRow] = []
    broken = 0
    if args.config and args.config not in known_files() and not os.path.isfile(args.config):
        raise UsageError(f"{args.config} is neither a host ({', '.join(known_files())}) nor a file")
    sources = (
        {args.config: [args.config]}
        if args.config and args.config not in known_files()
        else {k: v for k, v in known_files().items() if not args.config or k == args.config}
    )
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
                # a command's URL arguments too (`mcpio run URL`, the stdio bridge of a host's entry)
                how = (
                    shown(spec.url)
                    if spec.url
                    else " ".join(map(shown, [spec.command, *spec.args]))
                    if spec.command
                    else f"({spec.lacks})"  # its args alone would read as a command
                )
                rows.append(
                    {
                        "host": host,
                        "name": name,
                        "target": f"{host}:{name}",
                        "run": how,
                        "file": str(f),
                        "disabled": spec.disabled,
                    }
                )
    if args.json:
        dump_json(rows)
    elif rows:
        out(
            table(
                ["TARGET", "COMMAND OR URL", "FILE"],
                [[r["target"] + (" (disabled)" if r["disabled"] else ""), r["run"], r["file"]] for r in rows],
            )
        )
    else:
        out("no MCP servers found in " + ("the known host config files" if not args.config else args.config))
    return 1 if broken else 0
