"""``mcpio install FILE[:OBJECT] --host HOST``: add a server to a host's configuration file.

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
import sys
from pathlib import Path
from typing import Any

from .._host._config import ConfigError, known_files, section_key, strip_jsonc
from .._platform import interpreter
from ._output import error
from ._run import split_app
from ._targets import UsageError

PROJECT_HOSTS = ("claude-code", "cursor", "vscode")  # hosts with a project file (first in known_files)


def entry_for(host: str, app: str, env: dict[str, str]) -> dict[str, Any]:
    """The configuration entry that runs ``app`` (FILE[:OBJECT] or a module) for ``host``."""
    where, obj = split_app(app)
    env = dict(env)
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
        raise UsageError(f"--project: {host} has no project configuration file (hosts with one: {', '.join(PROJECT_HOSTS)})")
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


async def check(name: str, entry: dict[str, Any]) -> int:
    """Start the entry's command as a host would and list its tools; returns how many."""
    from .._client._client import Client

    async with Client([entry["command"], *entry["args"]], env=entry.get("env"), env_mode="safe", timeout=30,
                      name="mcpio-install", era="legacy") as client:
        return len(await client.list_tools())


def install(args: Any) -> int:
    host = args.host
    if host not in known_files():
        raise UsageError(f"--host {host}: use one of {', '.join(known_files())}")
    name = args.name or Path(split_app(args.app)[0]).stem.replace("_", "-")
    if not name:
        raise UsageError("give the server a name with --name")
    env: dict[str, str] = {}
    for item in args.env or []:
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise UsageError(f"--env takes NAME=VALUE, not {item!r}")
        env[key] = value
    entry = entry_for(host, args.app, env)
    path = config_file(host, args.project, args.config)
    data, has_comments = read_document(path)
    key = section_key(host)
    section = data.get(key)
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{path}: {key!r} is not an object; fix it first")
    if section and name in section and not args.force:
        raise UsageError(f"{path} already has a server {name!r}; add --force to replace it, or pick --name")
    if args.check:
        try:
            tools = asyncio.run(check(name, entry))
        except Exception as exc:  # the entry does not work: say why, write nothing
            error(f"not installed: the command does not start a working server ({exc}); "
                  "run it with 'mcpio doctor' to see more, or add --no-check")
            return 1
        print(f"checked: the server starts and lists {tools} tool{'s' if tools != 1 else ''}", file=sys.stderr)
    snippet = json.dumps({key: {name: entry}}, indent=2)
    if args.dry_run:
        print(f"would add to {path}:\n{snippet}")
        return 0
    if has_comments:
        error(f"{path} has comments or trailing commas, which rewriting it would lose; add this entry by hand:\n{snippet}")
        return 1
    data.setdefault(key, {})[name] = entry
    backup = write_document(path, data)
    print(f"added {name!r} to {path}" + (f" (previous version: {backup})" if backup else "")
          + f"; restart {host} to load it")
    return 0
