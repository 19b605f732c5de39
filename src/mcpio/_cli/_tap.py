"""``mcpio tap -o trace.jsonl [--redact KEY]… -- COMMAND …``: a transparent stdio proxy.

Put it in a host's configuration in place of the server's command. It starts COMMAND (in its
own process group), copies bytes host→server and server→host unchanged and as soon as they
arrive, and appends one JSON line per message to the trace::

    {"time": "2026-11-22T10:00:00.123456Z", "ts": 1763805600.123456, "dir": "c2s", "message": {…}}

``dir`` is ``c2s`` (client to server) or ``s2c``; a line that is not JSON is kept as
``"raw"``. Values of the ``--redact`` keys (at any depth, case-insensitive) are replaced by
``"[REDACTED]"`` in the trace only, never on the wire. The first and last lines have
``"dir": "meta"`` (the command; the exit code). The server's stderr passes through.

When the host closes our stdin, the server's stdin is closed and it gets ``grace`` seconds to
exit, then SIGTERM, then SIGKILL (its whole group); SIGTERM/SIGINT to the tap do the same.
The tap exits with the server's exit code.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any

from .._platform import ProcessTree, spawn_options
from .._transports._spawn import find_executable
from .._transports._trace import open_private
from ._exit import UsageError
from ._targets import stdio_command

REDACTED = "[REDACTED]"


def redact(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: (REDACTED if k.lower() in keys else redact(v, keys)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, keys) for v in value]
    return value


class Trace:
    """Appends records to the trace file; thread-safe."""

    def __init__(self, path: str, redact_keys: list[str]) -> None:
        try:
            self.file: IO[str] = open_private(path)  # 0600, never through a symbolic link
        except OSError as exc:
            raise UsageError(f"cannot write the trace {path}: {exc.strerror or exc}") from None
        self.keys = {k.lower() for k in redact_keys}
        self.lock = threading.Lock()

    def write(self, record: dict[str, Any]) -> None:
        now = time.time()
        stamp = datetime.datetime.fromtimestamp(now, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        line = json.dumps({"time": stamp, "ts": round(now, 6), **record}, ensure_ascii=False)
        with self.lock:
            self.file.write(line + "\n")
            self.file.flush()

    def message(self, direction: str, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        if not text.strip():
            return
        try:
            msg = json.loads(text)
        except json.JSONDecodeError:
            self.write({"dir": direction, "raw": text})
            return
        self.write({"dir": direction, "message": redact(msg, self.keys) if self.keys else msg})


def _pump(src: int, dst: int | None, trace: Trace, direction: str, on_eof: Any) -> None:
    """Copy ``src`` to ``dst`` chunk by chunk, recording each complete line."""
    pending = bytearray()
    try:
        while True:
            try:
                chunk = os.read(src, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            # Record first, then forward: the peer cannot answer a message before it is in the
            # trace, so the trace's order is the causal order of the conversation.
            pending += chunk
            while (nl := pending.find(b"\n")) >= 0:
                trace.message(direction, bytes(pending[:nl]))
                del pending[: nl + 1]
            if dst is not None:
                view = memoryview(chunk)
                try:
                    while view:
                        view = view[os.write(dst, view) :]
                except OSError:
                    dst = None  # the reader is gone; keep recording what arrives
        if pending:
            trace.message(direction, bytes(pending))
    finally:
        on_eof()


def tap(output: str, redact_keys: list[str], command: list[str], grace: float = 2.0) -> int:
    command, env = stdio_command(command)
    exe = find_executable(command[0], os.environ.get("PATH", os.defpath))
    trace = Trace(output, redact_keys)
    proc = subprocess.Popen(
        [exe, *command[1:]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, **env} if env else None,
        **spawn_options(),
    )
    tree = ProcessTree(proc.pid)  # its own group (Windows: a job): ended whole
    assert proc.stdin is not None and proc.stdout is not None
    trace.write({"dir": "meta", "command": command, "pid": proc.pid})
    stdin_fd = proc.stdin.fileno()
    stopping = threading.Event()

    def shutdown() -> None:
        """The spec's sequence: stdin closed (already), wait, SIGTERM, wait, SIGKILL."""
        if stopping.is_set():
            return
        stopping.set()
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            tree.terminate()
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                tree.kill()

    def client_gone() -> None:
        try:
            proc.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass
        threading.Thread(target=shutdown, daemon=True).start()

    def on_signal(signum: int, frame: Any) -> None:
        client_gone()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    up = threading.Thread(target=_pump, args=(0, stdin_fd, trace, "c2s", client_gone), daemon=True)
    down = threading.Thread(target=_pump, args=(proc.stdout.fileno(), 1, trace, "s2c", lambda: None), daemon=True)
    up.start()
    down.start()
    code = proc.wait()
    down.join(grace)  # what the server wrote before exiting still reaches the host
    tree.kill()  # nothing of its group outlives it
    tree.close()
    trace.write({"dir": "meta", "exit": code})
    sys.stdout.flush()
    return code if code >= 0 else 128 - code


def command(args: Any) -> int:
    """``mcpio tap``: the entry point the command table names."""
    return tap(args.output, args.redact, args.server_command)
