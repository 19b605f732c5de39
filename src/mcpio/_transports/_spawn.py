"""How a stdio server process is started: the one set of rules :class:`SubprocessTransport`
spawns by, and what a gateway uses to start its upstreams before it has imported asyncio.

No asyncio here (a gateway calls :func:`spawn` right after it reads its configuration file, so
its upstreams start while it imports the rest of itself).

* :func:`build_env` — the environment (``env_mode`` "inherit", "safe" or "exact"; PATH always
  present, so passing ``env`` never costs ``npx not found``).
* :func:`find_executable` — the executable ``exec`` will run, or :class:`ServerNotFound` naming
  it and the PATH searched (a relative path with a slash is looked up from ``cwd``).
* :func:`spawn_args` — the argv and keyword arguments for ``subprocess.Popen`` and for the event
  loop's ``subprocess_exec`` alike: the executable resolved, ``cwd`` checked, batch-file
  arguments checked (Windows), three pipes, unbuffered, the platform's own group or job
  (:func:`mcpio._platform.spawn_options`), no other descriptor inherited (``close_fds``).
* :func:`spawn` — a process started by those rules now, for a later
  ``SubprocessTransport(process=...)`` to adopt (:func:`adopt`). Until it is adopted its whole
  tree is ended at interpreter exit and on SIGTERM (a gateway that fails before it serves
  leaves no upstream behind).
* :func:`send_ahead` — a first message written into a spawned process's stdin now (a gateway
  writes its upstream's first request so, before it loads the client: ``_client._opening``),
  which the adopting transport does not write again.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .._errors import TransportError
from .._platform import ProcessTree, check_batch_args, spawn_options, which_path

SAFE_ENV_KEYS = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TERM",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "SYSTEMROOT",
    "SystemRoot",
    "SYSTEMDRIVE",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMDATA",
    "PROGRAMFILES",
    "USERPROFILE",
    "HOMEDRIVE",
    "HOMEPATH",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
)
ENV_MODES = ("inherit", "safe", "exact")

# Processes started by spawn() and not adopted yet, with their trees (made at the start: on
# Windows the Job Object must hold the process before it starts children of its own) and the
# frame written into their stdin already (send_ahead; b"": none).
_waiting: dict[int, tuple[subprocess.Popen[bytes], ProcessTree, bytes]] = {}


class ServerNotFound(FileNotFoundError):
    """The server's executable does not exist (on the PATH that was searched)."""


def build_env(env: Mapping[str, str] | None, mode: str = "inherit") -> dict[str, str]:
    """The environment a server is started with (see the module docstring for the modes)."""
    if mode == "inherit":
        base = dict(os.environ)
    elif mode == "safe":
        base = {k: v for k, v in os.environ.items() if k in SAFE_ENV_KEYS}
    elif mode == "exact":
        base = {}
    else:
        raise ValueError(f"env_mode must be one of {', '.join(ENV_MODES)}, not {mode!r}")
    base.update({str(k): str(v) for k, v in (env or {}).items()})
    if not base.get("PATH"):
        base["PATH"] = os.environ.get("PATH") or os.defpath
    return base


def find_executable(command: str, path: str, cwd: str | os.PathLike[str] | None = None) -> str:
    """Resolve ``command`` the way ``exec`` will, or raise :class:`ServerNotFound` saying where we looked."""
    if not command:
        raise ServerNotFound("cannot start MCP server: the command is empty")
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = command if os.path.isabs(command) or cwd is None else os.path.join(os.fspath(cwd), command)
        found = which_path(candidate)  # on Windows with the PATHEXT endings: C:\nodejs\npx -> npx.cmd
        if found is not None:
            return found
        where = f" (looked in {os.path.abspath(candidate)})" if candidate != command else ""
        raise ServerNotFound(f"cannot start MCP server: {command!r} does not exist or is not executable{where}")
    import shutil  # here: it pulls bz2, lzma and fnmatch

    exe = shutil.which(command, path=path)  # on Windows with PATHEXT: npx -> npx.cmd, uvx -> uvx.exe
    if exe is None:
        raise ServerNotFound(
            f"cannot start MCP server: executable {command!r} was not found on PATH; searched: {path}. "
            "Give its absolute path, or set PATH in the server's env"
        )
    return exe


def spawn_args(
    command: str, args: Sequence[str], env: dict[str, str], cwd: str | None
) -> tuple[list[str], dict[str, Any]]:
    """The argv and the keyword arguments that start ``command args…`` as a server (the rules of
    the module docstring), for ``subprocess.Popen(argv, **kwargs)`` or the event loop's
    ``subprocess_exec(factory, *argv, **kwargs)``. ``env`` is complete (:func:`build_env`).
    :class:`ServerNotFound` or :class:`TransportError` when it cannot be started."""
    exe = find_executable(command, env["PATH"], cwd)
    if cwd is not None and not os.path.isdir(cwd):
        raise TransportError(f"cannot start MCP server {command!r}: working directory {cwd!r} does not exist")
    argv = [exe, *args]
    try:
        check_batch_args(exe, argv[1:])
    except ValueError as exc:
        raise TransportError(str(exc)) from None
    pipe = subprocess.PIPE
    options = {"bufsize": 0, "env": env, "cwd": cwd, "stdin": pipe, "stdout": pipe, "stderr": pipe, "close_fds": True}
    return argv, {**options, **spawn_options()}


def not_started(exe: str, exc: OSError) -> TransportError:
    """The error for ``exe`` failing to start (``exec`` refused it)."""
    return TransportError(f"cannot start MCP server {exe!r}: {exc.strerror or exc}")


def spawn(
    command: str,
    args: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
    env_mode: str = "inherit",
    cwd: str | os.PathLike[str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``command args…`` now, as ``SubprocessTransport(command, args, env=env,
    env_mode=env_mode, cwd=cwd)`` would, for that transport to adopt (``process=``). Until then
    the process's tree is ended at interpreter exit and on SIGTERM (:func:`adopt` takes it over)."""
    folder = os.fspath(cwd) if cwd is not None else None
    argv, options = spawn_args(command, [os.fspath(a) for a in args], build_env(env, env_mode), folder)
    try:
        proc = subprocess.Popen(argv, **options)
    except OSError as exc:
        raise not_started(argv[0], exc) from exc
    if not _waiting:
        _guard()
    _waiting[proc.pid] = (proc, ProcessTree(proc.pid), b"")
    return proc


def send_ahead(proc: subprocess.Popen[bytes], frame: bytes) -> None:
    """Write ``frame`` (one message, stdio-framed: a line) into the stdin of ``proc`` (from
    :func:`spawn`, not adopted yet), for the transport that adopts it not to write it again
    (:func:`adopt`). One frame per process; nothing is written (and nothing recorded) when the
    process cannot take it now (it exited: its adopter finds out)."""
    waiting = _waiting.get(proc.pid)
    if waiting is None or waiting[0] is not proc or waiting[2] or proc.stdin is None:
        return
    line, written = frame + b"\n", 0
    try:
        while written < len(line):  # bufsize=0: a raw pipe, which may take part of a long line
            written += proc.stdin.write(line[written:]) or 0
    except OSError:  # it exited already (EPIPE: nobody reads): its adopter reports how
        return
    _waiting[proc.pid] = (proc, waiting[1], frame)


def adopt(proc: subprocess.Popen[bytes]) -> tuple[ProcessTree, bytes]:
    """Take over ``proc`` (from :func:`spawn`): it is no longer ended at exit. Its tree, to end
    it by, and the frame :func:`send_ahead` wrote into its stdin (b"": none)."""
    waiting = _waiting.pop(proc.pid, None)
    if not _waiting:
        _unguard()
    if waiting is None or waiting[0] is not proc:
        return ProcessTree(proc.pid), b""
    return waiting[1], waiting[2]


def end_waiting() -> None:
    """End the tree of every process :func:`spawn` started that was never adopted."""
    while _waiting:
        proc, tree, _ = _waiting.popitem()[1]
        tree.kill()
        tree.close()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()


def _on_sigterm(signum: int, frame: Any) -> None:
    end_waiting()
    raise SystemExit(0)  # as a server stopped with SIGTERM exits


def _guard() -> None:
    """End the waiting processes at interpreter exit, and on SIGTERM while no one else handles
    it (a server installs its own handler when it starts serving)."""
    import atexit

    atexit.register(end_waiting)
    if sys.platform == "win32":  # CTRL_BREAK_EVENT: the Job Objects end with this process
        return
    import signal

    try:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: atexit only
        pass


def _unguard() -> None:
    """Nothing is waiting: SIGTERM's default action again, unless someone else's handler took over."""
    import atexit

    atexit.unregister(end_waiting)
    if sys.platform == "win32":
        return
    import signal

    try:
        if signal.getsignal(signal.SIGTERM) is _on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except ValueError:  # not the main thread
        pass
