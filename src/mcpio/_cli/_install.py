"""``mcpio install TARGET --host HOST``: add a server to a host's configuration file.

TARGET is your Python code (FILE[:OBJECT] or MODULE[:OBJECT]), or any other TARGET the other
commands take: a command line, a command on PATH, a URL (for hosts whose file takes one), or an
entry of another host (``claude:NAME``: copied). The entry is named after the server
(``serverInfo.name``) unless ``--name`` is given.

What it writes works from a GUI host that has no shell PATH (pain points #11, #50, #51): the
command is this Python interpreter's absolute path and the arguments are
``-m mcpio run /absolute/path/server.py[:OBJECT]`` (a module name is kept, with ``PYTHONPATH``
set to the current folder so the host finds it). Before writing, the exact command is started
the way a host starts it (no shell, only the entry's ``env`` on top of a safe base
environment) and must answer ``initialize`` and ``tools/list``: a broken entry is never
written (``--no-check`` skips this).

The file is read as JSON(C) and written back as plain JSON with two-space indents, atomically
(a temporary file renamed over it), after a copy to ``FILE.bak``. A file with comments is not
rewritten (they would be lost): the entry is printed to paste instead. An entry of the same
name is replaced only with ``--force``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._client._target import is_url
from .._host._config import KNOWN, ConfigError, known_files, section_key, strip_jsonc
from .._platform import interpreter
from ._exit import UNAVAILABLE, CLIFailure, UsageError
from ._output import dump_json, error
from ._run import split_app
from ._targets import importable, resolve

PROJECT_HOSTS = ("claude-code", "cursor", "vscode")  # hosts with a project file (first in known_files)


#: How each host's file names a Streamable HTTP server (hosts missing here start commands only).
URL_ENTRIES = {
    "claude-code": lambda url: {"type": "http", "url": url},
    "vscode": lambda url: {"type": "http", "url": url},
    "cursor": lambda url: {"url": url},
    "windsurf": lambda url: {"serverUrl": url},
}


def _is_python(app: str) -> bool:
    """Whether ``app`` names Python code for ``mcpio run`` (a file or ``module[:OBJECT]``)."""
    if is_url(app) or any(c.isspace() for c in app):
        return False
    head, sep, _tail = app.rpartition(":")
    if sep and head.endswith((".json", ".jsonc")):
        return False  # CONFIG.json:NAME
    where, _ = split_app(app)
    if where.endswith(".py") or os.path.exists(where):
        return True
    return (not sep or head not in KNOWN) and importable(where)


def entry_for(host: str, app: str, env: dict[str, str]) -> dict[str, Any]:
    """The configuration entry for ``host`` that runs ``app``: Python code (FILE[:OBJECT] or
    MODULE[:OBJECT], served by ``mcpio run``), or any other TARGET (a command line, a command
    on PATH, a URL, another host's entry ``HOST:NAME``) as it is."""
    env = dict(env)
    if _is_python(app):
        where, obj = split_app(app)
        if where.endswith(".py") or os.sep in where or (os.altsep and os.altsep in where) or os.path.exists(where):
            path = Path(where).expanduser().resolve()
            if not path.is_file():
                raise UsageError(f"{where}: no such file")
            target = str(path) + (f":{obj}" if obj else "")
        else:  # a module: found from the folder install ran in
            target = app
            env.setdefault("PYTHONPATH", os.getcwd())
        # Absolute, and on Windows python.exe (never pythonw.exe, which has no stdio).
        entry: dict[str, Any] = {"command": interpreter(), "args": ["-m", "mcpio", "run", target]}
    else:
        spec = resolve(app)
        if spec.url is not None:
            if host not in URL_ENTRIES:
                raise UsageError(
                    f"{host}'s configuration starts commands only, so it cannot name {spec.url}; "
                    f"hosts that take a URL: {', '.join(URL_ENTRIES)}"
                )
            entry = URL_ENTRIES[host](spec.url)
            if spec.headers:
                entry["headers"] = dict(spec.headers)
            return entry
        if not spec.command:
            raise UsageError(f"{app}: the entry has no command")
        command = spec.command
        if os.sep not in command and spec.source == "command line":  # hosts have no shell PATH: pin it
            command = shutil.which(command) or command
        entry = {"command": command, "args": list(spec.args)}
        env = {**spec.env, **env}
        if spec.cwd:
            entry["cwd"] = spec.cwd
    if env:
        entry["env"] = env
    if host == "vscode":
        entry = {"type": "stdio", **entry}
    elif host == "zed":
        entry = {"source": "custom", **entry}
    return entry


def config_file(host: str, project: bool, path: str | None) -> Path:
    if path is not None:
        return Path(path).expanduser()
    files = known_files()[host]
    if project and host not in PROJECT_HOSTS:
        raise UsageError(
            f"--project: {host} has no project configuration file (hosts with one: {', '.join(PROJECT_HOSTS)})"
        )
    return files[0] if project or len(files) == 1 else files[-1]


def read_document(path: Path) -> tuple[dict[str, Any], bool]:
    """(the decoded document, whether it has comments or trailing commas that a rewrite would lose)."""
    if not path.exists():
        return {}, False
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not text.strip():
        return {}, False
    stripped = strip_jsonc(text)
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); fix it first") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a configuration file must hold a JSON object")
    try:
        plain = json.loads(text) == data
    except json.JSONDecodeError:
        plain = False
    return data, not plain


def write_document(path: Path, data: dict[str, Any]) -> Path | None:
    """Write ``data`` atomically; returns the backup made of the previous file, if any."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        backup.write_bytes(path.read_bytes())
    tmp = path.with_name(f".{path.name}.mcpio-{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return backup


async def check(entry: dict[str, Any]) -> tuple[int, str | None]:
    """Start the entry's command as a host would and list its tools; returns how many, and the
    name the server gives itself (``serverInfo.name``)."""
    from .._client._client import Client

    url = entry.get("url") or entry.get("serverUrl")
    client = (
        Client(url, headers=entry.get("headers"), timeout=30, name="mcpio-install")
        if url
        else Client(
            [entry["command"], *entry["args"]],
            env=entry.get("env"),
            cwd=entry.get("cwd"),
            env_mode="safe",
            timeout=30,
            name="mcpio-install",
            era="legacy",
        )
    )
    async with client:
        name = client.server_info.get("name")
        return len(await client.list_tools()), name if isinstance(name, str) else None


def entry_name(server_name: str | None, app: str) -> str:
    """The entry's name: the server's own name (``Server("weather")``, ``serverInfo.name``), else
    the file's stem (or the entry's, command's or host's name); lower case, with spaces and
    underscores as dashes (what hosts show and accept)."""
    if server_name is None and not _is_python(app):
        spec = resolve(app)
        server_name = urlsplit(spec.url).hostname or "server" if spec.url else os.path.basename(spec.name.split()[0])
    raw = server_name or Path(split_app(app)[0]).stem
    name = "-".join(raw.replace("_", " ").split()).lower()
    return "".join(c for c in name if c.isalnum() or c in "-.") or Path(split_app(app)[0]).stem


def install(args: Any) -> int:
    host = args.host
    if host not in known_files():
        raise UsageError(f"--host {host}: use one of {', '.join(known_files())}")
    env: dict[str, str] = {}
    for item in args.env or []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"--env takes NAME=VALUE, not {item!r}")
        env[key] = value
    entry = entry_for(host, args.app, env)
    tools: int | None = None
    server_name: str | None = None
    if args.check:
        try:
            tools, server_name = asyncio.run(check(entry))
        except Exception as exc:  # the entry does not work: say why, write nothing
            from ._dispatch import _child_failure

            child = _child_failure(getattr(exc, "message", str(exc)))
            if child is not None:
                raise CLIFailure(
                    f"not installed: the server did not start: {child[0]}", UNAVAILABLE, child[1]
                ) from None
            raise CLIFailure(
                f"not installed: the command does not start a working server ({exc})",
                UNAVAILABLE,
                f"run 'mcpio doctor {args.app}' to see more, or add --no-check",
            ) from None
    elif not args.name and _is_python(args.app):
        from ._run import load_server

        server, _ = load_server(args.app)
        server_name = server.name if server is not None else None
    name = args.name or entry_name(server_name, args.app)
    if not name:
        raise UsageError("give the server a name with --name")
    path = config_file(host, args.project, args.config)
    data, has_comments = read_document(path)
    key = section_key(host)
    section = data.get(key)
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{path}: {key!r} is not an object; fix it first")
    if section and name in section and not args.force:
        raise UsageError(f"{path} already has a server {name!r}; add --force to replace it, or pick --name")
    if tools is not None:
        print(f"checked: the server starts and lists {tools} tool{'s' if tools != 1 else ''}", file=sys.stderr)
    snippet = json.dumps({key: {name: entry}}, indent=2)
    if args.dry_run:
        if args.json:
            dump_json({"name": name, "file": str(path), "entry": entry, "written": False})
        else:
            print(f"would add to {path}:\n{snippet}")
        return 0
    if has_comments:
        error(
            f"{path} has comments or trailing commas, which rewriting it would lose; add this entry by hand:\n{snippet}"
        )
        return 1
    data.setdefault(key, {})[name] = entry
    backup = write_document(path, data)
    if args.json:
        dump_json(
            {
                "name": name,
                "file": str(path),
                "entry": entry,
                "written": True,
                "backup": str(backup) if backup else None,
            }
        )
        return 0
    print(
        f"added {name!r} to {path}"
        + (f" (previous version: {backup})" if backup else "")
        + f"; restart {host} to load it"
    )
    return 0
