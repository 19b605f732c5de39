"""Host configuration files: the ``mcpServers`` JSON of Claude Desktop / Cursor / Claude Code /
Windsurf, VS Code's ``servers`` (``.vscode/mcp.json``, or ``"mcp": {"servers": …}`` in
settings.json) and Zed's ``context_servers``; comments and trailing commas (JSONC) are allowed.

An entry becomes a :class:`ServerSpec`: ``command``, ``args``, ``env``, ``cwd`` (stdio) or
``url``, ``headers``, ``oauth`` (HTTP; ``oauth``: ``clientId``, ``clientSecret`` with its
``issuer`` (required with a secret), ``scopes``, ``callbackPort``, ``clientMetadataUrl``, for mcpio's OAuth client, which logs in when the
server asks unless the entry sends its own ``Authorization`` header). Variables are expanded when a server is used, not when the file
is read, so one bad entry does not spoil the others: ``${env:NAME}`` and
``${workspaceFolder}``/``${userHome}`` (VS Code), ``${NAME}`` and ``${NAME:-default}``
(Claude Code). ``${input:…}`` needs a host's prompt and is an error here.

:data:`KNOWN` lists where each host keeps its file (project files before user files);
``CONFIG:NAME`` names a server in one host's files (or in a JSON file given by path), and a
bare ``NAME`` is searched for in all of them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

# A gateway (`mcpio run mcp.json`) reads its file with this module before it starts its upstreams:
# paths are os.path strings here (pathlib, with urllib.parse and ipaddress, is imported by the
# functions that return Paths), and the file is decoded with msgspec (json is imported for the
# message of a file that is not valid JSON).
if TYPE_CHECKING:  # imported by client()
    import subprocess
    from pathlib import Path

    from .._client._client import Client


class ConfigError(ValueError):
    """A configuration file or entry that cannot be used (the message says which and why)."""


class ServerSpec(msgspec.Struct, frozen=True):
    """One server entry of a host configuration file. (A msgspec Struct, not a dataclass:
    dataclasses, with inspect and ast, is not imported before a gateway's first answer.)"""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = msgspec.field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = msgspec.field(default_factory=dict)
    type: str = "stdio"  # "stdio", "http" or "sse"
    env_file: str | None = None
    disabled: bool = False
    source: str | None = None  # the file it came from
    workspace: str | None = None  # the folder ${workspaceFolder} means
    oauth: dict[str, Any] = msgspec.field(default_factory=dict)  # OAuth settings of a URL entry
    # "tools": {"allow": [...], "deny": [...]}: the tools served of this entry (None: all): chooses()
    tools_allow: tuple[str, ...] | None = None
    tools_deny: tuple[str, ...] = ()
    # "roundTimeout": seconds a proxied call waits for its client's next input_required round
    # (None: the gateway's round_timeout)
    round_timeout: float | None = None
    # an entry with neither "command" nor "url": its key that looks like one misspelt ("comand")
    misspelt: tuple[str, str] | None = None

    @property
    def lacks(self) -> str:
        """What is wrong with an entry that has neither ``command`` nor ``url``, naming the key
        that looks like one of them misspelt, if any."""
        typo = f" (is {self.misspelt[0]!r} a misspelt {self.misspelt[1]!r}?)" if self.misspelt else ""
        return f"it has neither 'command' nor 'url'{typo}"

    def __repr__(self) -> str:
        """As msgspec writes it, but for what may hold a secret (a debugger, a traceback's locals,
        a printed configuration): the values of ``env``, ``headers`` and ``oauth`` are
        ``[redacted]`` (their names stay), the URL, command and arguments are shown as mcpio shows
        a URL (:func:`.._shown.shown`)."""
        from .._shown import REDACTED, shown

        def value(name: str, v: Any) -> Any:
            if name in ("env", "headers", "oauth"):
                return dict.fromkeys(v, REDACTED)
            if name in ("url", "command") and v is not None:
                return shown(v)
            return tuple(map(shown, v)) if name == "args" else v

        fields = ", ".join(f"{name}={value(name, getattr(self, name))!r}" for name in self.__struct_fields__)
        return f"ServerSpec({fields})"

    @property
    def is_remote(self) -> bool:
        return self.url is not None

    def chooses(self, tool: str) -> bool:
        """Whether the entry's ``"tools": {"allow": [...], "deny": [...]}`` lets its tool ``tool``
        be served (a proxy's, a gateway's) and called (a ``Host``'s). They name tools only: the
        entry's prompts and resources are served whatever they say."""
        return (self.tools_allow is None or tool in self.tools_allow) and tool not in self.tools_deny

    def resolved(self) -> ServerSpec:
        """A copy with every ``${…}`` variable expanded and ``envFile`` merged into ``env``."""

        def x(value: str) -> str:
            return expand(value, self)

        env = {}
        if self.env_file:
            env.update(_read_env_file(x(self.env_file), self))
        env.update({k: x(str(v)) for k, v in self.env.items()})
        return msgspec.structs.replace(
            self,
            command=x(self.command) if self.command else None,
            args=tuple(x(str(a)) for a in self.args),
            env=env,
            cwd=x(self.cwd) if self.cwd else None,
            url=x(self.url) if self.url else None,
            headers={k: x(str(v)) for k, v in self.headers.items()},
            oauth={k: x(v) if isinstance(v, str) else v for k, v in self.oauth.items()},
        )

    def client(self, *, unattended: bool = False, **options: Any) -> Client:
        """An (unconnected) :class:`~mcpio.Client` for this server; ``options`` go to ``Client``.
        ``unattended``: no user watches this process's stderr (a proxy's upstream): a login that
        cannot open a browser fails at once saying to run ``mcpio login`` instead of waiting."""
        from .._client._client import Client

        spec = self.resolved()
        if spec.url is not None:
            headers = {**spec.headers, **(options.pop("headers", None) or {})}
            if "auth" not in options and not any(k.lower() == "authorization" for k in headers):
                options["auth"] = spec.oauth_client(unattended=unattended)
            return Client(spec.url, headers=headers or None, **options)
        argv, env, cwd = spec._command_line(options)
        return Client(argv, env=env, cwd=cwd, **options)

    def start(self, **options: Any) -> subprocess.Popen[bytes] | None:
        """This server's process, started now as ``client(**options)`` would start it (None for a
        URL entry), for ``client(process=..., **options)`` to adopt: a gateway starts its upstreams
        so before it has imported asyncio. Ended at exit (and on SIGTERM) unless adopted; a
        ConfigError, ServerNotFound or TransportError when it cannot start."""
        from .._transports._spawn import spawn

        spec = self.resolved()
        if spec.url is not None:
            return None
        options = dict(options)
        argv, env, cwd = spec._command_line(options)
        return spawn(argv[0], argv[1:], env=env, env_mode=options.get("env_mode") or "inherit", cwd=cwd)

    def _command_line(self, options: dict[str, Any]) -> tuple[list[str], dict[str, str] | None, str | None]:
        """The argv, env and cwd of this resolved stdio entry: ``options``' ``env`` over the
        entry's own, ``options``' ``cwd`` before the entry's (both taken out of ``options``)."""
        if not self.command:
            raise ConfigError(f"server {self.name!r} in {self.source}: {self.lacks}")
        env = {**self.env, **(options.pop("env", None) or {})}
        return [self.command, *self.args], env or None, options.pop("cwd", None) or self.cwd

    def oauth_client(self, *, unattended: bool = False) -> Any:
        """mcpio's OAuth client with this entry's ``oauth`` settings (tokens in the default
        store); None when the HTTP extra is missing (the connection then says so itself).
        ``unattended``: see :meth:`client`."""
        try:
            from .._auth._browser import LoopbackBrowser
            from .._auth._oauth_client import OAuth
        except ImportError:
            return None
        o = self.oauth

        def get(*names: str) -> Any:
            return next((o[n] for n in names if o.get(n) is not None), None)

        try:
            port = int(get("callbackPort", "callback_port") or 0)
        except (TypeError, ValueError):
            raise ConfigError(
                f"server {self.name!r} in {self.source}: oauth.callbackPort must be a port number"
            ) from None
        try:
            return OAuth(
                client_id=get("clientId", "client_id"),
                client_secret=get("clientSecret", "client_secret"),
                issuer=get("issuer"),
                scopes=get("scopes", "scope"),
                user_agent=LoopbackBrowser(port=port, wait_for_url=not unattended),
                client_metadata_url=get("clientMetadataUrl", "client_metadata_url"),
            )
        except ValueError as exc:
            message = str(exc).replace("client_secret=", "oauth.clientSecret").replace("issuer=", "oauth.issuer")
            raise ConfigError(
                f"server {self.name!r} in {self.source}: {message.replace('client_id=', 'oauth.clientId')}"
            ) from None


_VAR = re.compile(r"\$\{([^}]*)\}")


def expand(value: str, spec: ServerSpec | None = None) -> str:
    """Expand ``${env:X}``, ``${X}``, ``${X:-default}``, ``${workspaceFolder}``, ``${userHome}``."""

    def one(m: re.Match[str]) -> str:
        expr = m.group(1)
        where = f" (server {spec.name!r} in {spec.source})" if spec else ""
        if expr in ("workspaceFolder", "workspaceRoot"):
            return spec.workspace if spec and spec.workspace else os.getcwd()
        if expr == "userHome":
            return os.path.expanduser("~")
        if expr in ("/", "pathSeparator"):
            return os.sep
        if expr.startswith("input:"):
            raise ConfigError(f"${{{expr}}}{where} asks the host to prompt for a value; put the value in env instead")
        name, _, default = expr.removeprefix("env:").partition(":-")
        if name in os.environ:
            return os.environ[name]
        if ":-" in expr:
            return default
        if expr.startswith("env:"):
            return ""  # VS Code expands an unset variable to nothing
        raise ConfigError(f"${{{expr}}}{where}: the environment variable {name!r} is not set and has no default")

    return _VAR.sub(one, value)


def _read_env_file(path: str, spec: ServerSpec) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as exc:
        raise ConfigError(
            f"server {spec.name!r} in {spec.source}: cannot read envFile {path}: {exc.strerror}"
        ) from None
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, _, v = line.removeprefix("export ").partition("=")
        out[k.strip()] = v.strip().strip("'\"")
    return out


def strip_jsonc(text: str) -> str:
    """Remove ``//`` and ``/* */`` comments and trailing commas outside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        elif c == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1  # a trailing comma
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


#: The keys of a configuration document whose object holds servers by name (and VS Code's ``mcp.servers``).
SECTIONS = ("mcpServers", "servers", "context_servers")


def holds_servers(data: Any) -> bool:
    """Whether a decoded document has a section of servers (:data:`SECTIONS`, ``mcp.servers``), if
    empty: a configuration, not some other JSON file (a ``package.json``)."""
    mcp = data.get("mcp") if isinstance(data, dict) else None
    return isinstance(data, dict) and (
        any(isinstance(data.get(k), dict) for k in SECTIONS)
        or (isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict))
    )


def parse_config(
    data: Any, source: str = "<config>", workspace: str | None = None, project: str | None = None
) -> dict[str, ServerSpec]:
    """The servers of one decoded configuration document (any of the known shapes)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a configuration file must hold a JSON object")
    entries: dict[str, Any] = {}
    for key in SECTIONS:
        section = data.get(key)
        if isinstance(section, dict):
            entries.update(section)
    mcp = data.get("mcp")
    if isinstance(mcp, dict) and isinstance(mcp.get("servers"), dict):  # VS Code settings.json
        entries.update(mcp["servers"])
    projects = data.get("projects")  # ~/.claude.json: per-project servers override the user's
    if project is not None and isinstance(projects, dict) and isinstance(projects.get(project), dict):
        section = projects[project].get("mcpServers")
        if isinstance(section, dict):
            entries.update(section)
    return {name: _entry(name, e, source, workspace) for name, e in entries.items()}


def _entry(name: str, e: Any, source: str, workspace: str | None) -> ServerSpec:
    if not isinstance(e, dict):
        raise ConfigError(f"{source}: server {name!r} must be an object")
    command = e.get("command")
    args = e.get("args") or []
    env = e.get("env") or {}
    if isinstance(command, dict):  # old Zed shape: "command": {"path", "args", "env"}
        args, env, command = command.get("args") or [], command.get("env") or env, command.get("path")
    if command is not None and not isinstance(command, str):
        raise ConfigError(f"{source}: server {name!r}: 'command' must be a string")
    if not isinstance(args, list) or not isinstance(env, dict):
        raise ConfigError(f"{source}: server {name!r}: 'args' must be a list and 'env' an object")
    url = e.get("url") or e.get("serverUrl")
    kind = str(e.get("type") or e.get("transport") or ("http" if url else "stdio")).lower()
    kind = {"streamable-http": "http", "streamablehttp": "http", "streamable_http": "http"}.get(kind, kind)
    headers = e.get("headers") or {}
    oauth = e.get("oauth")
    tools = e.get("tools") or {}
    if not isinstance(tools, dict) or any(
        not isinstance(tools.get(k, []), list) or not all(isinstance(n, str) for n in tools.get(k, []))
        for k in ("allow", "deny")
    ):
        raise ConfigError(f'{source}: server {name!r}: "tools" must be {{"allow": [names], "deny": [names]}}')
    misspelt = None
    if command is None and url is None:
        from .._suggest import close_to

        near = ((str(k), close_to(str(k), ("command", "url", "serverUrl"))) for k in e)
        misspelt = next(((k, close) for k, close in near if close is not None and k != close), None)
    round_timeout = e.get("roundTimeout")
    if round_timeout is not None:
        from .._server._mrtr import round_timeout_checked

        try:
            round_timeout = round_timeout_checked(round_timeout, '"roundTimeout"')
        except ValueError as exc:
            raise ConfigError(f"{source}: server {name!r}: {exc}") from None
    return ServerSpec(
        name=name,
        command=command,
        args=tuple(str(a) for a in args),
        env={str(k): str(v) for k, v in env.items()},
        cwd=e.get("cwd"),
        url=url,
        headers=dict(headers) if isinstance(headers, dict) else {},
        type=kind,
        env_file=e.get("envFile"),
        disabled=bool(e.get("disabled", False)),
        source=source,
        workspace=workspace,
        oauth=dict(oauth) if isinstance(oauth, dict) else {},
        tools_allow=tuple(tools["allow"]) if "allow" in tools else None,
        tools_deny=tuple(tools.get("deny", ())),
        round_timeout=round_timeout,
        misspelt=misspelt,
    )


def load_config(path: str | os.PathLike[str], *, workspace: str | None = None) -> dict[str, ServerSpec]:
    """Read one configuration file (JSON or JSONC) and return its servers by name."""
    return file_servers(*read_config(path), workspace=workspace)


def read_config(path: str | os.PathLike[str]) -> tuple[str, Any]:
    """A configuration file's path (``~`` expanded, normalized) and its decoded document
    (:func:`decode_jsonc`); ConfigError when it cannot be read or decoded."""
    p = os.path.normpath(os.path.expanduser(os.fspath(path)))
    try:
        with open(p, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise ConfigError(f"cannot read {p}: {exc.strerror or exc}") from None
    return p, decode_jsonc(raw, p)


def file_servers(p: str, data: Any, *, workspace: str | None = None) -> dict[str, ServerSpec]:
    """The servers of the document ``data`` read from file ``p`` (:func:`read_config`): its
    ``${workspaceFolder}`` is the project of a ``.vscode``/``.cursor`` file or a ``.mcp.json``,
    else the current folder (``workspace`` chooses it), and ``~/.claude.json`` adds the current
    project's servers."""
    folder = os.path.dirname(p)
    if workspace is None and os.path.basename(folder) in (".vscode", ".cursor"):
        workspace = os.path.realpath(os.path.dirname(folder) or os.curdir)
    elif workspace is None and os.path.basename(p) == ".mcp.json":
        workspace = os.path.realpath(folder or os.curdir)
    project = os.getcwd() if os.path.basename(p) == ".claude.json" else None
    return parse_config(data, p, workspace or os.getcwd(), project)


def decode_jsonc(raw: bytes, where: str) -> Any:
    """The document of a JSON or JSONC file's bytes (an empty file is ``{}``); ConfigError, with
    the line and column, when it is neither."""
    try:
        return msgspec.json.decode(raw)  # plain JSON (the usual file): no comment to strip
    except msgspec.DecodeError:
        pass
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        return {}
    text = strip_jsonc(text)
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError:
        import json  # what msgspec refuses and json reads (NaN), and the line and column of an error

        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None


def start_servers(specs: Mapping[str, ServerSpec], **options: Any) -> dict[str, subprocess.Popen[bytes]]:
    """The process of every enabled stdio entry of ``specs``, started now (:meth:`ServerSpec.start`;
    ``options`` as their clients'), by entry name, for their clients to adopt. An entry that
    cannot start now (a ``${VAR}`` not set, a command not found) is left out: its client starts
    it, and says why, as it would have."""
    started = {}
    for entry, spec in specs.items():
        try:
            process = None if spec.disabled else spec.start(**options)
        except (ValueError, OSError):  # ConfigError; ServerNotFound, TransportError
            continue
        if process is not None:
            started[entry] = process
    return started


def _app_dir() -> Path:
    """The per-user application-data folder (Claude Desktop and VS Code keep files there):
    ``%APPDATA%`` on Windows, ``~/Library/Application Support`` on macOS, ``$XDG_CONFIG_HOME``
    (``~/.config``) elsewhere."""
    from pathlib import Path

    home = Path.home()
    if sys.platform == "darwin":
        return home / "Library" / "Application Support"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    return _xdg_config()


def _xdg_config() -> Path:
    from pathlib import Path

    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def _zed_dir() -> Path:
    """Zed keeps ``settings.json`` in ``%APPDATA%\\Zed`` on Windows, ``~/.config/zed`` elsewhere
    (macOS included)."""
    return _app_dir() / "Zed" if sys.platform == "win32" else _xdg_config() / "zed"


def known_files() -> dict[str, list[Path]]:
    """Host alias -> its configuration files, project files first (computed now: HOME and cwd).

    Per OS (``~`` is ``%USERPROFILE%`` on Windows): Claude Desktop
    ``%APPDATA%\\Claude\\claude_desktop_config.json`` / ``~/Library/Application
    Support/Claude/…`` / ``~/.config/Claude/…``; VS Code's user ``mcp.json`` in the same folder
    under ``Code/User``; Cursor, Windsurf and Claude Code under ``~`` on every OS.
    """
    from pathlib import Path

    home, cwd, app = Path.home(), Path.cwd(), _app_dir()
    return {
        "claude-code": [cwd / ".mcp.json", home / ".claude.json"],
        "claude": [app / "Claude" / "claude_desktop_config.json"],
        "cursor": [cwd / ".cursor" / "mcp.json", home / ".cursor" / "mcp.json"],
        "vscode": [cwd / ".vscode" / "mcp.json", app / "Code" / "User" / "mcp.json"],
        "windsurf": [home / ".codeium" / "windsurf" / "mcp_config.json"],
        "zed": [_zed_dir() / "settings.json"],
    }


#: The host aliases CONFIG may be: the keys of known_files(), in its order (tests/client/test_host.py).
KNOWN = ("claude-code", "claude", "cursor", "vscode", "windsurf", "zed")


def section_key(host: str) -> str:
    """The top-level key under which ``host`` keeps its servers in the files of known_files()."""
    return {"vscode": "servers", "zed": "context_servers"}.get(host, "mcpServers")


def servers_of(config: str) -> dict[str, ServerSpec]:
    """The servers of a host alias (all its files merged, earlier files winning) or of a file path."""
    files = known_files().get(config)
    if files is None:
        return load_config(config)
    out: dict[str, ServerSpec] = {}
    for f in reversed(files):
        if f.is_file():
            out.update(load_config(f))
    return out


def find_server(name: str) -> ServerSpec | None:
    """The first server called ``name`` in the known configuration files (see :data:`KNOWN`)."""
    for files in known_files().values():
        for f in files:
            if f.is_file():
                try:
                    found = load_config(f).get(name)
                except ConfigError:
                    continue
                if found is not None:
                    return found
    return None


def lookup(config: str, name: str) -> ServerSpec:
    """``CONFIG:NAME``: the server ``name`` of host alias or file ``config`` (ConfigError if absent)."""
    servers = servers_of(config)
    spec = servers.get(name)
    if spec is None:
        where = config if config not in KNOWN else f"{config} ({', '.join(str(f) for f in known_files()[config])})"
        have = ", ".join(sorted(servers)) or "none"
        from .._suggest import did_you_mean

        raise ConfigError(f"no server {name!r} in {where}{did_you_mean(name, servers)}; servers there: {have}")
    return spec
