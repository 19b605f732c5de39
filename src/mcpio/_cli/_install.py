"""``mcpio install TARGET --host HOST``: add a server to a host's configuration file.

TARGET is your Python code (FILE[:OBJECT] or MODULE[:OBJECT]), or any other TARGET the other
commands take: a command line, a command on PATH, a URL (for hosts whose file takes one), or an
entry of another host (``claude:NAME``: copied). The entry is named after the server
(``serverInfo.name``) unless ``--name`` is given.

What it writes works from a GUI host that has no shell PATH (a host that cannot find ``uv`` or
``npx`` fails with ENOENT; each host reads its own config format and ignores a wrong key): the
command is this Python interpreter's absolute path and the arguments are
``-m mcpio run /absolute/path/server.py[:OBJECT]`` (a module name is kept, with ``PYTHONPATH``
set to the current folder so the host finds it). Before writing, the exact command is started
the way a host starts it (no shell, only the entry's ``env`` on top of a safe base
environment) and must answer ``initialize`` and ``tools/list``: a broken entry is never
written (``--no-check`` skips this).

A GUI host starts servers from ``/`` (not from the folder you ran ``install`` in), so relative
paths are resolved before anything is written: ``--env`` values that are explicit relative paths
(``./notes.db``, ``../data``, ``~/x``, or a relative name of a file that exists here) and a
copied command line's arguments that name files here become absolute (each is reported), and
the check runs the server from ``/`` too: a server that still depends on its working folder
fails the check, not the host.

A URL entry takes ``--header 'NAME: VALUE'`` (repeatable); ``${VAR}`` in a value is replaced by
``$VAR`` from this environment, so a token need not be on the command line (argv is readable
by every local user). For a host that starts commands only, the entry is ``mcpio run URL``;
a URL carrying a credential (what :func:`.._shown.shown` hides) is written into the entry's
``env`` as ``$MCPIO_TARGET`` instead, the entry being ``mcpio run`` alone (``_run.run_words``).

The file is read as JSON(C) and written back as plain JSON with two-space indents, atomically
(a temporary file created ``O_EXCL|O_NOFOLLOW``, then renamed over it), after a copy to
``FILE.bak`` made the same way. Both keep the file's mode and owner (a 0600 file holding API
keys stays 0600); a new file is created 0600. A symlink at ``FILE`` or ``FILE.bak`` is
refused, never written through. A file with comments is not rewritten (they would be lost):
the entry is printed to paste instead. An entry of the same name is replaced only with
``--force``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import stat
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._client._target import is_url
from .._host._config import ConfigError, known_files, section_key, strip_jsonc
from .._platform import interpreter
from .._pyfile import SOURCE_SUFFIXES
from .._shown import shown
from ._exit import UNAVAILABLE, CLIFailure, UsageError
from ._gateway import BRIDGE_HEADERS
from ._output import dump_json, error
from ._run import run_words, split_app
from ._targets import python_code, resolve

PROJECT_HOSTS = ("claude-code", "cursor", "vscode")  # hosts with a project file (first in known_files)


#: How each host's file names a Streamable HTTP server (hosts missing here start commands only).
URL_ENTRIES = {
    "claude-code": lambda url: {"type": "http", "url": url},
    "vscode": lambda url: {"type": "http", "url": url},
    "cursor": lambda url: {"url": url},
    "windsurf": lambda url: {"serverUrl": url},
}


def _absolute(value: str, *, existing_only: bool = False) -> str | None:
    """``value`` as an absolute path when it is a relative one a host started from ``/`` would
    misread: ``./x``, ``../x``, ``~/x`` (unless ``existing_only``), or a relative name of a file
    that exists here; None otherwise (left as it is)."""
    if not value or os.path.isabs(value) or is_url(value) or "=" in value or value.startswith("-"):
        return None
    explicit = value.startswith(("./", "../", "~/", "." + os.sep, ".." + os.sep, "~" + os.sep)) or value in (".", "..")
    if (explicit and not existing_only) or os.path.isfile(value) or (explicit and os.path.exists(value)):
        return str(Path(value).expanduser().resolve())
    return None


def _resolve_paths(entry: dict[str, Any], notes: list[str]) -> None:
    """Make the entry's relative paths absolute (see the module docstring); each change is noted."""
    for key, value in list((entry.get("env") or {}).items()):
        full = _absolute(value)
        if full is not None:
            entry["env"][key] = full
            notes.append(f"--env {key}={value}: a host starts servers from /, so it is written as {full}")
        elif _FILE_NAME.fullmatch(value):
            notes.append(
                f"--env {key}={value} looks like a file name: a host starts servers from /, where it names "
                f"/{value}; write ./{value} to have it made absolute, or give an absolute path"
            )
    if "cwd" not in entry:
        for i, arg in enumerate(entry.get("args") or []):
            full = _absolute(arg, existing_only=True)
            if full is not None:
                entry["args"][i] = full
                notes.append(f"argument {arg}: a host starts servers from /, so it is written as {full}")


# notes.db, config.json (not 1.5, gpt-4.1, example.com)
_FILE_NAME = re.compile(r"[\w-]*[A-Za-z_][\w-]*\.(?!(?:com|org|net|io|dev|ai|app)$)[A-Za-z]{1,8}")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def headers_from(items: list[str]) -> dict[str, str]:
    """``--header 'NAME: VALUE'`` items, ``${VAR}`` in values replaced from the environment."""
    headers: dict[str, str] = {}
    for item in items:
        name, colon, value = item.partition(":")
        if not colon or not name.strip() or any(c.isspace() for c in name.strip()):
            raise UsageError("--header takes 'NAME: VALUE' (e.g. --header 'Authorization: Bearer ${TEAM_TOKEN}')")

        def var(m: re.Match[str], name: str = name.strip()) -> str:
            found = os.environ.get(m.group(1))
            if found is None:
                raise UsageError(f"--header {name}: ${{{m.group(1)}}} names a variable that is not set")
            return found

        headers[name.strip()] = _VAR.sub(var, value.strip())
    return headers


def entry_for(host: str, app: str, env: dict[str, str]) -> dict[str, Any]:
    """The configuration entry for ``host`` that runs ``app``: Python code (FILE[:OBJECT] or
    MODULE[:OBJECT], served by ``mcpio run``), or any other TARGET (a command line, a command
    on PATH, a URL, another host's entry ``HOST:NAME``) as it is."""
    env = dict(env)
    if python_code(app):
        where, obj = split_app(app)
        if (
            where.endswith(SOURCE_SUFFIXES)
            or os.sep in where
            or (os.altsep and os.altsep in where)
            or os.path.exists(where)
        ):
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
        if spec.url is not None and host in URL_ENTRIES:
            entry = URL_ENTRIES[host](spec.url)
            if spec.headers:
                entry["headers"] = dict(spec.headers)
            return entry
        if spec.url is not None:  # a host that starts commands only: mcpio run URL, the stdio bridge
            words, hidden = run_words(spec.url)  # a URL with a credential: in the entry's env, never its argv
            entry = {"command": interpreter(), "args": ["-m", "mcpio", "run", *words]}
            env.update(hidden)
            return {**entry, "env": env} if env else entry
        if not spec.command:
            raise UsageError(f"{app}: {spec.lacks}")
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
        raise ConfigError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a configuration file must hold a JSON object")
    try:
        plain = json.loads(text) == data
    except json.JSONDecodeError:
        plain = False
    return data, not plain


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _refuse_symlink(path: Path, what: str) -> None:
    if path.is_symlink():
        raise CLIFailure(
            f"not installed: {path} ({what}) is a symlink; mcpio does not write through one",
            UNAVAILABLE,
            f"remove it, or name the real file with --config {path.resolve()}"
            if what == "the configuration file"
            else "remove it (or move it away) and run install again",
        )


def _replace(path: Path, content: bytes, like: os.stat_result | None) -> None:
    """Write ``content`` to ``path`` atomically: a new temporary file in the same folder (created
    ``O_EXCL|O_NOFOLLOW``: never an existing file or a link's target) with ``like``'s mode and
    owner (0600 for a new file), renamed over ``path`` (which replaces a name, never follows it)."""
    mode = stat.S_IMODE(like.st_mode) if like is not None else 0o600
    tmp = path.with_name(f".{path.name}.mcpio-{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
            if sys.platform == "win32":  # pragma: no cover - only the read-only bit exists
                os.chmod(tmp, mode)
            else:
                if like is not None and (like.st_uid, like.st_gid) != (os.getuid(), os.getgid()):
                    with contextlib.suppress(PermissionError):  # only root can give a file away
                        os.fchown(f.fileno(), like.st_uid, like.st_gid)
                os.fchmod(f.fileno(), mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_document(path: Path, data: dict[str, Any]) -> Path | None:
    """Write ``data`` atomically, keeping the file's mode and owner; returns the backup made of
    the previous file, if any. A symlink at the file or at its backup is refused (CLIFailure)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _refuse_symlink(path, "the configuration file")
    backup = None
    like: os.stat_result | None = None
    if path.exists():
        backup = path.with_name(path.name + ".bak")
        _refuse_symlink(backup, "the backup of the configuration file")
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            like = os.fstat(f.fileno())
            previous = f.read()
        _replace(backup, previous, like)
    _replace(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"), like)
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
            cwd=entry.get("cwd") or os.path.abspath(os.sep),  # where a GUI host starts it: / (not here)
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
    if server_name is None and not python_code(app):
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
    if args.header:
        headers = headers_from(args.header)
        if "url" in entry or "serverUrl" in entry:
            entry["headers"] = {**entry.get("headers", {}), **headers}
        elif is_url(args.app):  # the stdio bridge (mcpio run URL): in the entry's env, never its argv
            lines = "\n".join(f"{name}: {value}" for name, value in headers.items())
            entry["env"] = {**entry.get("env", {}), BRIDGE_HEADERS: lines}
        else:
            raise UsageError(
                "--header is for a URL entry (mcpio install https://…/mcp --header …); "
                "a command's server takes --env instead"
            )
    notes: list[str] = []
    _resolve_paths(entry, notes)
    for note in notes:
        print(f"mcpio: note: {note}", file=sys.stderr)
    tools: int | None = None
    server_name: str | None = None
    if args.check:
        try:
            tools, server_name = asyncio.run(check(entry))
        except Exception as exc:  # the entry does not work: say why, write nothing
            from ._dispatch import _child_failure

            if isinstance(getattr(exc, "data", None), dict) and exc.data.get("status") == 401:  # type: ignore[attr-defined]
                raise CLIFailure(
                    "not installed: this server wants a bearer token"
                    + (" (the one given was refused)" if args.header else ""),
                    UNAVAILABLE,
                    "add --header 'Authorization: Bearer ${TOKEN}' with the token in $TOKEN (not on the "
                    "command line); or --no-check if the host logs in to it with OAuth",
                ) from None
            child = _child_failure(getattr(exc, "message", str(exc)))
            if child is not None:
                raise CLIFailure(
                    f"not installed: the server did not start: {child[0]}", UNAVAILABLE, child[1]
                ) from None
            raise CLIFailure(
                f"not installed: the command does not start a working server ({exc})",
                UNAVAILABLE,
                f"run 'mcpio doctor {shown(args.app)}' to see more, or add --no-check",
            ) from None
    elif not args.name and python_code(args.app):
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
        raise ConfigError(f"{path}: {key!r} is not an object")
    if section and name in section and not args.force:
        raise UsageError(f"{path} already has a server {name!r}; add --force to replace it, or pick --name")
    if tools is not None:
        print(f"checked: the server starts and lists {tools} tool{'s' if tools != 1 else ''}", file=sys.stderr)
    snippet = json.dumps({key: {name: entry}}, indent=2)
    if args.dry_run:
        if args.json:
            dump_json({"name": name, "file": str(path), "entry": _printed(entry), "written": False})
        else:
            print(f"would add to {path}:\n{json.dumps({key: {name: _printed(entry)}}, indent=2)}")
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
                "entry": _printed(entry),
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


def _printed(entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` as ``--dry-run`` and ``--json`` print it (stdout is often kept: a CI log, a
    script's capture): the values of its ``env`` and ``headers`` (a token ``${VAR}`` expanded
    to) are ``[redacted]``, its URL and arguments shown as mcpio shows a URL; the host's file
    gets them as they are."""
    from .._shown import REDACTED

    printed: dict[str, Any] = {}
    for k, v in entry.items():
        if k in ("env", "headers") and isinstance(v, dict):
            v = dict.fromkeys(v, REDACTED)
        elif k == "url" and isinstance(v, str):
            v = shown(v)
        elif k == "args" and isinstance(v, list):
            v = [shown(a) if isinstance(a, str) else a for a in v]
        printed[k] = v
    return printed
