"""A test-side MCP peer that drives a real server subprocess over its pipes.

Everything the server writes to stdout is read by a thread, parsed (a line that is not JSON
fails the test: stdout carries protocol bytes only) and validated against the official schema
of the negotiated version; so is everything the test sends as a message. Waiting is
event-driven (queue gets with a deadline), never a sleep.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import Any

from . import wire

DEFAULT_TIMEOUT = 20.0


class StdioPeer:
    def __init__(self, proc: subprocess.Popen, *, validate: bool = True) -> None:
        self.proc = proc
        self.validate = validate
        self.version: str | None = None
        self.modern_meta: dict[str, Any] | None = None
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.received: list[Any] = []  # every message, in order
        self.stderr_lines: list[str] = []
        self._stderr_seen = threading.Condition()
        self.stdout_garbage: list[bytes] = []
        self._methods: dict[Any, str] = {}  # our request id -> method
        self._their_methods: dict[Any, str] = {}  # server request id -> method
        self._next_id = 0
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for t in self._threads:
            t.start()

    # ------------------------------------------------------------------ lifecycle
    @classmethod
    def spawn(
        cls, argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | None = None, validate: bool = True
    ) -> StdioPeer:
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env.setdefault("PYTHONUNBUFFERED", "1")
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=cwd,
            bufsize=0,
        )
        return cls(proc, validate=validate)

    def __enter__(self) -> StdioPeer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self, timeout: float = 10.0) -> int:
        """Close stdin and wait for the server to exit; returns its exit code."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            code = self.proc.wait(timeout)
            for t in self._threads:
                t.join(timeout)
            return code
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise AssertionError(f"server did not exit within {timeout}s of stdin EOF; stderr:\n{self.stderr()}")

    def stderr(self) -> str:
        return "\n".join(self.stderr_lines[-60:])

    # ------------------------------------------------------------------ reading
    def _read_stdout(self) -> None:
        out = self.proc.stdout
        buf = bytearray()  # linear in the stream: each byte is scanned for a newline once
        while True:
            chunk = out.read(1 << 20)
            if not chunk:
                break
            scan = len(buf)
            buf += chunk
            start = 0
            while (nl := buf.find(b"\n", scan)) >= 0:
                line = bytes(buf[start:nl])
                start = scan = nl + 1
                try:
                    msg = json.loads(line)
                except ValueError:
                    self.stdout_garbage.append(line)
                    self.inbox.put(AssertionError(f"server wrote a non-JSON line to stdout: {line[:300]!r}"))
                    continue
                self.inbox.put(msg)
            del buf[:start]
        if buf:
            self.stdout_garbage.append(bytes(buf))
            self.inbox.put(AssertionError(f"server left an unterminated line on stdout: {buf[:300]!r}"))
        self.inbox.put(EOFError("server closed stdout"))

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            with self._stderr_seen:
                self.stderr_lines.append(line.decode("utf-8", "replace").rstrip("\n"))
                self._stderr_seen.notify_all()

    def wait_stderr(self, text: str, timeout: float = DEFAULT_TIMEOUT) -> str:
        """The first stderr line containing ``text``, waiting for it (event-driven)."""
        with self._stderr_seen:
            found = self._stderr_seen.wait_for(lambda: next((x for x in self.stderr_lines if text in x), None), timeout)
        if found is None:
            raise AssertionError(f"no stderr line with {text!r} within {timeout}s; stderr:\n{self.stderr()}")
        return found

    def recv(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """The next message the server wrote (validated), or AssertionError on timeout/garbage."""
        try:
            item = self.inbox.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout}s; stderr:\n{self.stderr()}") from None
        if isinstance(item, BaseException):
            raise item
        self.received.append(item)
        self._check_incoming(item)
        return item

    def _check_incoming(self, msg: Any) -> None:
        if isinstance(msg, dict) and "method" in msg and "id" in msg:
            self._their_methods[msg["id"]] = msg["method"]
        if not self.validate or self.version is None:
            return
        items = msg if isinstance(msg, list) else [msg]
        for m in items:
            method = self._methods.get(m.get("id")) if isinstance(m, dict) and "method" not in m else None
            wire.check(m, self.version, method)

    # ------------------------------------------------------------------ writing
    def send_raw(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg: Any) -> None:
        if self.validate and self.version is not None:
            items = msg if isinstance(msg, list) else [msg]
            for m in items:
                method = self._their_methods.get(m.get("id")) if "method" not in m else None
                wire.check(m, self.version, method)
        self.send_raw(json.dumps(msg, separators=(",", ":")).encode() + b"\n")

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def request_msg(
        self, method: str, params: dict[str, Any] | None = None, id_: Any = None, *, meta: bool = True
    ) -> dict[str, Any]:
        """A request; in modern mode (``self.modern()``) its params carry the per-request _meta
        (merged under any ``_meta`` given) unless ``meta=False``."""
        id_ = self.new_id() if id_ is None else id_
        if self.modern_meta is not None and meta:
            params = dict(params or {})
            params["_meta"] = {**self.modern_meta, **(params.get("_meta") or {})}
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
        if params is not None:
            msg["params"] = params
        self._methods[id_] = method
        return msg

    def modern(
        self,
        version: str = "2026-07-28",
        capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
        log_level: str | None = None,
    ) -> None:
        """Speak the stateless era: no initialize, every request carries _meta."""
        self.version = version
        self.modern_meta = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": capabilities or {},
            "io.modelcontextprotocol/clientInfo": client_info or {"name": "mcpio-tests", "version": "1.0.0"},
        }
        if log_level is not None:
            self.modern_meta["io.modelcontextprotocol/logLevel"] = log_level

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def wait_for(self, pred, timeout: float = DEFAULT_TIMEOUT, *, others: list | None = None) -> Any:
        """Receive until ``pred(msg)``; other messages go to ``others`` (or are dropped)."""
        while True:
            msg = self.recv(timeout)
            if pred(msg):
                return msg
            if others is not None:
                others.append(msg)

    def response(self, id_: Any, timeout: float = DEFAULT_TIMEOUT, *, others: list | None = None) -> dict[str, Any]:
        return self.wait_for(
            lambda m: isinstance(m, dict) and m.get("id") == id_ and "method" not in m, timeout, others=others
        )

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        others: list | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> dict[str, Any]:
        """Send a request and return the whole response message (result or error)."""
        msg = self.request_msg(method, params)
        self.send(msg)
        return self.response(msg["id"], timeout, others=others)

    def call(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        """Send a request and return its result; an error response fails the test."""
        resp = self.request(method, params, **kw)
        assert "result" in resp, f"{method} failed: {resp}"
        return resp["result"]

    def initialize(
        self,
        version: str = "2025-11-25",
        capabilities: dict[str, Any] | None = None,
        client_info: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        self.version = version
        result = self.call(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": capabilities or {},
                "clientInfo": client_info or {"name": "mcpio-tests", "version": "1.0.0"},
            },
        )
        self.notify("notifications/initialized")
        return result

    def ping(self) -> None:
        assert self.call("ping") == {}


def python_argv(path: str, *args: str) -> list[str]:
    return [sys.executable, path, *args]
