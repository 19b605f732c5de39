"""``mcpio replay trace.jsonl -- COMMAND …``: re-send a trace's client side, compare the answers.

The client's messages (``c2s``) are sent to a fresh server in their recorded order, keeping
the order the trace shows between both sides: a client message that was recorded after some
server message (a response, or a request from the server such as ``sampling/createMessage``)
is sent only once the replayed server has sent the same one (matched by id; waiting at most
``--timeout``). Server notifications are not waited for (their timing is not a contract).

Each response to a replayed request is compared with the recorded one (``--ignore KEY`` leaves
a key out, at any depth); the report lists every request as ``same``, ``different`` (with
the paths that differ) or ``missing`` (no answer in time). Exit status 1 when any differs.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from .._errors import EndOfStream, TransportError
from .._jsonrpc import decode, encode
from .._transports._subprocess import SubprocessTransport
from ._exit import UsageError
from ._output import dump_json, table
from ._targets import stdio_command


def read_trace(path: str) -> list[tuple[str, dict[str, Any]]]:
    out = []
    try:
        f = open(path, encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"cannot read the trace {path}: {exc.strerror}") from None
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                raise UsageError(f"{path}:{n}: not a JSON line (is this a trace written by mcpio tap?)") from None
            if isinstance(rec, dict) and rec.get("dir") in ("c2s", "s2c") and isinstance(rec.get("message"), dict):
                out.append((rec["dir"], rec["message"]))
    return out


def _is_response(msg: dict[str, Any]) -> bool:
    return "method" not in msg and ("result" in msg or "error" in msg)


def _strip(value: Any, ignore: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, list):
        return [_strip(v, ignore) for v in value]
    return value


def differences(a: Any, b: Any, path: str = "", limit: int = 20) -> list[str]:
    """Where ``b`` differs from ``a`` (recorded vs replayed), as ``path: recorded → replayed``."""
    out: list[str] = []

    def walk(x: Any, y: Any, p: str) -> None:
        if len(out) >= limit:
            return
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y), key=str):
                q = f"{p}.{k}" if p else str(k)
                if k not in x:
                    out.append(f"{q}: only in the replay ({json.dumps(y[k])[:80]})")
                elif k not in y:
                    out.append(f"{q}: missing in the replay (was {json.dumps(x[k])[:80]})")
                else:
                    walk(x[k], y[k], q)
        elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
            for i, (xi, yi) in enumerate(zip(x, y, strict=True)):
                walk(xi, yi, f"{p}[{i}]")
        elif x != y or type(x) is not type(y):
            out.append(f"{p or '(message)'}: {json.dumps(x)[:80]} → {json.dumps(y)[:80]}")

    walk(a, b, path)
    return out


class _Replayer:
    def __init__(self, transport: SubprocessTransport) -> None:
        self.transport = transport
        self.responses: dict[Any, dict[str, Any]] = {}
        self.server_requests: dict[Any, dict[str, Any]] = {}
        self.arrived = asyncio.Event()

    async def read(self) -> None:
        try:
            while True:
                frame = await self.transport.receive()
                try:
                    msg = decode(frame)  # type: ignore[arg-type]
                except Exception:  # not JSON, or over the size limit: not a response to compare
                    continue
                if isinstance(msg, dict) and "id" in msg:
                    key = json.dumps(msg["id"])
                    (self.responses if _is_response(msg) else self.server_requests)[key] = msg
                    self.arrived.set()
        except EndOfStream:
            pass
        finally:
            self.arrived.set()

    async def wait_for(self, table_: dict[Any, Any], key: str, deadline: float) -> bool:
        loop = asyncio.get_running_loop()
        while key not in table_:
            left = deadline - loop.time()
            if left <= 0 or self.transport.ended:
                return key in table_
            self.arrived.clear()
            try:
                async with asyncio.timeout(left):
                    await self.arrived.wait()
            except TimeoutError:
                return key in table_
        return True


async def replay(args: Any) -> int:
    records = read_trace(args.trace)
    if not any(d == "c2s" for d, _ in records):
        raise UsageError(f"{args.trace} holds no client messages to replay")
    command, env = stdio_command(args.server_command)
    env.update(item.partition("=")[::2] for item in args.env)
    stderr_lines: list[str] = []
    transport = SubprocessTransport(
        command[0], command[1:], env=env or None, env_mode=args.env_mode, cwd=args.cwd, on_stderr=stderr_lines.append
    )
    await transport.open()
    r = _Replayer(transport)
    reader = asyncio.get_running_loop().create_task(r.read())
    loop = asyncio.get_running_loop()
    requests: list[dict[str, Any]] = []
    expected: list[tuple[dict[str, Any], str]] = []  # what the server sent so far in the trace
    done = 0
    try:
        for direction, msg in records:
            if direction == "s2c":
                if "id" in msg and (_is_response(msg) or "method" in msg):
                    expected.append((r.responses if _is_response(msg) else r.server_requests, json.dumps(msg["id"])))
                continue
            while done < len(expected):  # keep the recorded order between both sides
                table_, key = expected[done]
                done += 1
                await r.wait_for(table_, key, loop.time() + args.timeout)
            if "method" in msg and "id" in msg:
                requests.append(msg)
            try:
                await transport.send(encode(msg))
            except TransportError:
                break
        for msg in requests:
            await r.wait_for(r.responses, json.dumps(msg["id"]), loop.time() + args.timeout)
    finally:
        await transport.aclose()
        reader.cancel()
    recorded = {json.dumps(m["id"]): m for d, m in records if d == "s2c" and _is_response(m)}
    ignore = set(args.ignore)
    report = []
    for msg in requests:
        key = json.dumps(msg["id"])
        got, want = r.responses.get(key), recorded.get(key)
        entry: dict[str, Any] = {"id": msg["id"], "method": msg.get("method")}
        if got is None:
            entry["status"], entry["differences"] = "missing", ["no response from the replayed server"]
        elif want is None:
            entry["status"], entry["differences"] = "unrecorded", []
        else:
            diffs = differences(
                _strip({k: want.get(k) for k in ("result", "error") if k in want}, ignore),
                _strip({k: got.get(k) for k in ("result", "error") if k in got}, ignore),
            )
            entry["status"], entry["differences"] = ("different", diffs) if diffs else ("same", [])
        report.append(entry)
    bad = [e for e in report if e["status"] in ("different", "missing")]
    if args.json:
        dump_json({"requests": report, "different": len(bad)})
    else:
        rows = [[json.dumps(e["id"]), e["method"], e["status"], "; ".join(e["differences"])] for e in report]
        print(table(["ID", "METHOD", "RESULT", "DIFFERENCES"], rows))
        print(
            f"\n{len(report)} requests replayed, {len(bad)} differ"
            + (f" (server exit: {transport.returncode})" if bad and transport.returncode else "")
        )
    return 1 if bad else 0
