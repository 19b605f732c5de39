"""Tasks on Redis: the records of every process's tasks, so ``tasks/get``, ``tasks/update``,
``tasks/cancel`` and ``tasks/result`` are answered on any process sharing the database.

The function of a task keeps running on the process that created it (its *node*); that process
writes the task's record on every change. Keys, all under ``prefix``, for task ``I``, node ``N``
and requester ``R``:

* ``task:I`` — a hash: ``st`` status, ``msg`` statusMessage ('' for none), ``upd``
  lastUpdatedAt, ``ttl`` ttlMs, ``body`` (JSON: taskId, createdAt, pollIntervalMs, result,
  error, inputRequests, core, owner), ``node``, ``req``, ``cr``/``dl`` creation / TTL deadline
  (Redis clock, ms), ``died`` when the node died;
* ``tasks`` — a sorted set of every kept task by the time it may be forgotten (a live task:
  ``horizon`` ahead, pushed on by its node's heartbeat); ``tasks:ended`` — terminal tasks by
  end time (the cap evicts the one that ended first, as :class:`~mcpio._server._tasks.TaskStore`);
* ``tasks:node:N`` / ``tasks:req:R`` — sets of live task ids, by node / by requester;
  ``tasks:own:S`` — the core tasks (2025-11-25) of session ``S`` by creation (``tasks/list``);
* ``tasks:nodes`` — a sorted set of nodes with live tasks by lease deadline: each node refreshes
  its lease while it has live tasks or legacy HTTP requests in flight (``hold``: another process
  that follows such a request's stream asks ``alive`` to tell a dead runner; every ``lease / 3``
  s, and the beat after the last one ended gives it up). Any script that runs after a lease
  has passed marks that node's live tasks ``failed`` ("the worker process died").

Each operation is one Lua script, so the bounds (``max_tasks`` kept, ``max_tasks_per_requester``
live) hold across processes. Every key expires by itself (``PEXPIRE``) once nothing in it is
needed, so an idle database goes back to zero keys. Terminal is final: a record that is
completed, failed or cancelled is never changed again (a ``tasks/cancel`` on another process
wins over the node's late writes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from ._base import StateUnavailable

log = logging.getLogger("mcpio.state")

DIED = "The worker process running this task died (its lease expired) before the task finished; call the tool again."

# ARGV[1..4] of every script: prefix, the caller's ISO time, horizon (ms), retain-after-end (ms).
_LIB = (
    """
local p, now_iso = ARGV[1], ARGV[2]
local horizon, retain = tonumber(ARGV[3]), tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ALL, ENDED, NODES = p .. 'tasks', p .. 'tasks:ended', p .. 'tasks:nodes'
local TERMINAL = {completed = true, failed = true, cancelled = true}
local DIED = '"""
    + DIED
    + """'

local function tk(id) return p .. 'task:' .. id end

local function unlink(id, node, req)
  if node and node ~= '' then redis.call('SREM', p .. 'tasks:node:' .. node, id) end
  if req and req ~= '' then redis.call('SREM', p .. 'tasks:req:' .. req, id) end
end

-- a key lives at least `ms` more (never shortened: other members may need longer)
local function extend(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end

local function tidy()
  local top = redis.call('ZRANGE', ALL, -1, -1, 'WITHSCORES')
  if top[2] then
    local at = tonumber(top[2]) + 1000
    redis.call('PEXPIREAT', ALL, at)
    if redis.call('EXISTS', ENDED) == 1 then redis.call('PEXPIREAT', ENDED, at) end
  end
  local ntop = redis.call('ZRANGE', NODES, -1, -1, 'WITHSCORES')
  if ntop[2] then redis.call('PEXPIREAT', NODES, tonumber(ntop[2]) + horizon) end
end

-- terminal: kept until the TTL from creation ends, or `retain` from now if that has passed
local function finish(id, status, msg)
  local k = tk(id)
  local f = redis.call('HMGET', k, 'node', 'req', 'dl', 'cr', 'own')
  local keep = tonumber(f[3] or '0') - now
  if keep <= 0 then
    keep = retain
    redis.call('HSET', k, 'ttl', now - tonumber(f[4] or now) + retain)
  end
  redis.call('HSET', k, 'st', status, 'msg', msg, 'upd', now_iso)
  redis.call('PEXPIRE', k, keep)
  redis.call('ZADD', ALL, now + keep, id)
  redis.call('ZADD', ENDED, now, id)
  unlink(id, f[1], f[2])
  if f[5] and f[5] ~= '' then extend(p .. 'tasks:own:' .. f[5], keep) end
end

local function drop(id)
  local f = redis.call('HMGET', tk(id), 'node', 'req', 'own')
  unlink(id, f[1], f[2])
  if f[3] and f[3] ~= '' then redis.call('ZREM', p .. 'tasks:own:' .. f[3], id) end
  redis.call('DEL', tk(id))
  redis.call('ZREM', ALL, id)
  redis.call('ZREM', ENDED, id)
end

local function reap(node)
  local nk = p .. 'tasks:node:' .. node
  for _, id in ipairs(redis.call('SMEMBERS', nk)) do
    local st = redis.call('HGET', tk(id), 'st')
    if st and not TERMINAL[st] then
      redis.call('HSET', tk(id), 'died', '1')
      finish(id, 'failed', DIED)
    elseif not st then
      drop(id)
    end
  end
  redis.call('DEL', nk)
  redis.call('ZREM', NODES, node)
end

local function sweep()
  for _, node in ipairs(redis.call('ZRANGEBYSCORE', NODES, '-inf', '(' .. now, 'LIMIT', 0, 16)) do reap(node) end
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', ALL, '-inf', '(' .. now, 'LIMIT', 0, 256)) do drop(id) end
end

-- a live task whose node holds no lease at all (its entry expired with the whole set)
local function check(id)
  local f = redis.call('HMGET', tk(id), 'st', 'node')
  if f[1] and not TERMINAL[f[1]] and not redis.call('ZSCORE', NODES, f[2]) then reap(f[2]) end
end
"""
)

# ARGV[5..]: id, node, requester ('' none), max_tasks, max_per_requester, lease ms, ttl ms, body,
# owner (the session of a core task, '' none)
_CREATE = (
    _LIB
    + """
local id, node, req = ARGV[5], ARGV[6], ARGV[7]
local max_tasks, max_req = tonumber(ARGV[8]), tonumber(ARGV[9])
local lease, ttl = tonumber(ARGV[10]), tonumber(ARGV[11])
sweep()
local rk = p .. 'tasks:req:' .. req
if req ~= '' and redis.call('SCARD', rk) >= max_req then
  for _, other in ipairs(redis.call('SMEMBERS', rk)) do
    if redis.call('EXISTS', tk(other)) == 0 then redis.call('SREM', rk, other) else check(other) end
  end
  local n = redis.call('SCARD', rk)
  if n >= max_req then return {'requester', n} end
end
if redis.call('ZCARD', ALL) >= max_tasks then
  local old = redis.call('ZRANGE', ENDED, 0, 0)
  if #old == 0 then return {'full', max_tasks} end
  drop(old[1])
end
local k = tk(id)
redis.call('HSET', k, 'st', 'working', 'msg', '', 'upd', now_iso, 'ttl', ttl, 'body', ARGV[12],
  'node', node, 'req', req, 'cr', now, 'dl', now + ttl, 'own', ARGV[13])
redis.call('PEXPIRE', k, horizon)
redis.call('ZADD', ALL, now + horizon, id)
redis.call('SADD', p .. 'tasks:node:' .. node, id)
redis.call('PEXPIRE', p .. 'tasks:node:' .. node, horizon)
redis.call('ZADD', NODES, now + lease, node)
if req ~= '' then
  redis.call('SADD', rk, id)
  redis.call('PEXPIRE', rk, horizon)
end
if ARGV[13] ~= '' then
  local own = p .. 'tasks:own:' .. ARGV[13]
  local top = redis.call('ZRANGE', own, -1, -1, 'WITHSCORES')
  local at = now  -- creation order, also within one millisecond
  if top[2] and tonumber(top[2]) >= now then at = tonumber(top[2]) + 1 end
  redis.call('ZADD', own, at, id)
  extend(p .. 'tasks:own:' .. ARGV[13], horizon)
end
tidy()
return {'ok', 0}
"""
)

# ARGV[5..]: id, status, message, body -> 1 written, 0 (unknown, or already terminal)
_PUT = (
    _LIB
    + """
local id, status, msg = ARGV[5], ARGV[6], ARGV[7]
local k = tk(id)
local st = redis.call('HGET', k, 'st')
if not st or TERMINAL[st] then return 0 end
redis.call('HSET', k, 'body', ARGV[8])
if TERMINAL[status] then
  finish(id, status, msg)
  tidy()
else
  redis.call('HSET', k, 'st', status, 'msg', msg, 'upd', now_iso)
end
return 1
"""
)

# ARGV[5]: id -> the hash (flat), empty when unknown
_GET = (
    _LIB
    + """
sweep()
check(ARGV[5])
tidy()
return redis.call('HGETALL', tk(ARGV[5]))
"""
)

# ARGV[5..]: id, message -> {1 cancelled now | 0 already terminal | -1 unknown, node}
_CANCEL = (
    _LIB
    + """
local id = ARGV[5]
sweep()
check(id)
local f = redis.call('HMGET', tk(id), 'st', 'node')
if not f[1] then return {-1, ''} end
if TERMINAL[f[1]] then return {0, f[2]} end
finish(id, 'cancelled', ARGV[6])
tidy()
return {1, f[2]}
"""
)

# ARGV[5]: owner -> the hashes (flat) of the owner's tasks, oldest first
_LIST = (
    _LIB
    + """
sweep()
local out = {}
for _, id in ipairs(redis.call('ZRANGE', p .. 'tasks:own:' .. ARGV[5], 0, -1)) do
  check(id)
  local h = redis.call('HGETALL', tk(id))
  if #h > 0 then out[#out + 1] = h end
end
tidy()
return out
"""
)

# ARGV[5..]: node, lease ms, held ('1': requests in flight hold the lease even without live tasks):
# keep this node's lease and its live tasks' keys
_BEAT = (
    _LIB
    + """
local node, lease, held = ARGV[5], tonumber(ARGV[6]), ARGV[7] == '1'

sweep()
local nk = p .. 'tasks:node:' .. node
local live = 0
for _, id in ipairs(redis.call('SMEMBERS', nk)) do
  local f = redis.call('HMGET', tk(id), 'st', 'req', 'own')
  if f[1] and not TERMINAL[f[1]] then
    live = live + 1
    redis.call('PEXPIRE', tk(id), horizon)
    redis.call('ZADD', ALL, 'XX', now + horizon, id)
    if f[2] and f[2] ~= '' then redis.call('PEXPIRE', p .. 'tasks:req:' .. f[2], horizon) end
    if f[3] and f[3] ~= '' then extend(p .. 'tasks:own:' .. f[3], horizon) end
  else
    redis.call('SREM', nk, id)
  end
end
if live > 0 or held then
  redis.call('ZADD', NODES, now + lease, node)
  if live > 0 then redis.call('PEXPIRE', nk, horizon) end
else
  redis.call('ZREM', NODES, node)
end
tidy()
return live
"""
)


# ARGV[5..]: node -> 1 while its lease holds, 0 once it has passed (or it holds none)
_ALIVE = (
    _LIB
    + """
local s = redis.call('ZSCORE', NODES, ARGV[5])
if s and tonumber(s) >= now then return 1 end
return 0
"""
)


class RedisTaskDirectory:
    """The task records of every process on one Redis (see the module docstring).

    ``create`` reserves a slot within the cluster-wide bounds (returns None, or the reason it
    cannot: ``("requester", n)`` / ``("full", max_tasks)``); ``put`` writes the node's change;
    ``get`` reads a record (None when unknown or expired), marking it failed first when its node
    died; ``cancel`` makes a live task cancelled wherever it runs; ``send`` carries an
    ``update``/``cancel`` to the node that runs a task; every change written is announced on the
    bus; ``attach`` names who hears of both on this process (the commands meant for it, the ids
    of the tasks the other processes changed); ``wait_ended`` sleeps until some task ends
    somewhere (or ``timeout``).
    Connection errors raise :class:`StateUnavailable`.
    """

    def __init__(
        self,
        client: Any,
        *,
        prefix: str,
        node: str,
        publish: Callable[[dict[str, Any]], Awaitable[None]],
        call: Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]],
        lease: float = 10.0,
        retain: float = 60.0,
    ) -> None:
        if lease <= 0:
            raise ValueError(f"task_lease must be > 0 seconds, not {lease!r}")
        self.prefix = prefix
        self.node = node
        self.lease = lease
        self.lease_ms = max(1, int(lease * 1000))
        self.horizon_ms = self.lease_ms * 6  # a live record outlives a missed heartbeat or two
        self.retain_ms = int(retain * 1000)
        self._publish = publish
        self._call = call
        self._scripts = {
            name: client.register_script(src)
            for name, src in (
                ("create", _CREATE),
                ("put", _PUT),
                ("get", _GET),
                ("cancel", _CANCEL),
                ("beat", _BEAT),
                ("list", _LIST),
                ("alive", _ALIVE),
            )
        }
        self._on_command: Callable[[dict[str, Any]], Any] | None = None  # ``attach``
        self._acks: dict[str, asyncio.Future[None]] = {}  # commands sent, by ref, until acknowledged
        self._on_changed: Callable[[str], Awaitable[None]] | None = None  # ``attach``
        self._live: set[str] = set()  # this node's live tasks (the heartbeat runs while any)
        self._held: set[Any] = set()  # requests in flight here that hold the lease too (``hold``)
        self._beat: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()  # set by aclose
        self._waiters: set[asyncio.Event] = set()

    def attach(
        self, on_command: Callable[[dict[str, Any]], Any], on_changed: Callable[[str], Awaitable[None]] | None = None
    ) -> None:
        """Serve this process's task store (``TaskStore.share``): ``on_command`` runs each command
        meant for this node (an ``update``/``cancel`` of a task it runs) and returns the write to wait
        for before acknowledging it, or None; ``on_changed`` is told the id of each task another
        process changed (None: nobody here listens). A later call replaces both."""
        self._on_command, self._on_changed = on_command, on_changed

    async def _run(self, name: str, *args: Any, when: str | None = None) -> Any:
        argv = [self.prefix, when or _now_iso(), self.horizon_ms, self.retain_ms, *args]
        script = self._scripts[name]
        return await self._call(lambda: script(args=argv))

    # ---------------------------------------------------------------- the node's side
    async def create(
        self,
        task_id: str,
        requester: str | None,
        max_tasks: int,
        max_per_requester: int,
        ttl: float,
        body: dict[str, Any],
        owner: str | None = None,
    ) -> tuple[str, int] | None:
        reason, n = await self._run(
            "create",
            task_id,
            self.node,
            requester or "",
            max_tasks,
            max_per_requester,
            self.lease_ms,
            max(1, round(ttl * 1000)),
            _dumps(body),
            owner or "",
        )
        if reason != b"ok":
            return reason.decode(), int(n)
        self._live.add(task_id)
        self._start_beat()
        return None

    def _start_beat(self) -> None:
        if self._beat is None or self._beat.done():
            self._stop.clear()  # used again after aclose (an app's lifespan entered again)
            self._beat = asyncio.get_running_loop().create_task(self._heartbeat())

    def hold(self, key: Any) -> None:
        """Hold this node's lease while ``key`` (a legacy HTTP request in flight here) runs, so
        that another process resuming its stream can tell this process died (:meth:`alive`).
        No round trip of its own: the heartbeat, started if it is not running, refreshes it."""
        self._held.add(key)
        self._start_beat()

    def release(self, key: Any) -> None:
        """``key`` ended (answered, cancelled, its session gone); the lease goes at the next beat
        if nothing else holds it."""
        self._held.discard(key)

    async def alive(self, node: str) -> bool:
        """Whether ``node`` holds its lease now (False once it has passed: the process died,
        or it holds no lease because it runs nothing)."""
        return bool(await self._run("alive", node))

    async def put(
        self, task_id: str, status: str, message: str | None, body: dict[str, Any], terminal: bool, updated: str
    ) -> None:
        """Write the node's change (``updated``: the task's lastUpdatedAt, so every process shows
        the same); a record already terminal is left as it is."""
        try:
            await self._run("put", task_id, status, message or "", _dumps(body), when=updated)
        finally:
            if terminal:
                self._live.discard(task_id)
        await self._publish({"type": "tasks/changed", "id": task_id, "ended": terminal})

    async def _heartbeat(self) -> None:
        """Refresh this node's lease while it runs live tasks or holds requests (one script per
        ``lease / 3``); the beat after the last one ended gives the lease up."""
        again = False
        while not self._stop.is_set():
            held, live = bool(self._held), 0
            try:
                live = int(await self._run("beat", self.node, self.lease_ms, "1" if held else "0"))
            except StateUnavailable as exc:
                log.warning("task lease not refreshed: %s", exc)
            if not (self._live or self._held):
                if (held or live) and not again:
                    # What held the lease when that beat left ended while it ran (a request
                    # answered, a task's end written): the beat kept the lease, so one more,
                    # now, gives it up (else it stays until it expires).
                    again = True
                    continue
                return  # that beat dropped the lease (a hold() since then starts a new loop)
            again = False
            # an event, not a plain sleep: a cancel that lands inside a Redis command may be
            # absorbed by the client library, and closing must not wait for the next beat
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.lease / 3):
                    await self._stop.wait()

    # ---------------------------------------------------------------- any process
    async def get(self, task_id: str) -> dict[str, Any] | None:
        flat = await self._run("get", task_id)
        return _record(flat) if flat else None

    async def owned_by(self, owner: str) -> list[dict[str, Any]]:
        """The records of the core tasks of session ``owner`` (every process's), oldest first."""
        return [_record(flat) for flat in await self._run("list", owner)]

    async def cancel(self, task_id: str, message: str) -> int:
        """1: cancelled now (its node is told); 0: it had already ended; -1: unknown."""
        done, node = await self._run("cancel", task_id, message)
        if int(done) == 1:
            await self.send(node.decode(), {"op": "cancel", "id": task_id})
        return int(done)

    async def send(self, node: str, command: dict[str, Any]) -> None:
        """Carry ``command`` to ``node`` and return once it acknowledged (it recorded the effect),
        or after one lease (a node that does not answer may have died: the next read tells)."""
        message = {"type": "tasks/command", "node": node, "ref": secrets.token_hex(8), **command}
        if node == self.node:  # the bus does not echo a process's own messages
            await self._apply(message)
            return
        acked: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._acks[message["ref"]] = acked
        try:
            await self._publish(message)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.lease):
                    await acked
        finally:
            self._acks.pop(message["ref"], None)

    async def _apply(self, message: dict[str, Any]) -> None:
        """A command for this node: run it, wait for its write, and acknowledge it."""
        writer = self._on_command(message) if self._on_command is not None else None
        if writer is not None and not writer.done():
            await asyncio.shield(writer)
        if message.get("from") is not None:  # it came over the bus: the sender waits for this
            await self._publish({"type": "tasks/ack", "to": message["from"], "ref": message.get("ref")})

    def watch(self) -> asyncio.Event:
        """An event set when a task ends on another process (``tasks/changed`` on the bus); made
        before reading a record, so an end between the read and the wait is not missed."""
        event = asyncio.Event()
        self._waiters.add(event)
        return event

    def unwatch(self, event: asyncio.Event) -> None:
        self._waiters.discard(event)

    async def wait_ended(self, event: asyncio.Event, timeout: float) -> None:
        """Return once ``event`` is set, or after ``timeout`` seconds (the caller then reads the
        record again: a process that died never says so)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await event.wait()

    async def on_bus(self, message: dict[str, Any]) -> None:
        """The state backend's bus: wake ``wait_ended``; tell ``attach``'s ``on_changed``; run the
        commands meant for this node."""
        kind = message.get("type")
        if kind == "tasks/changed" and isinstance(message.get("id"), str):
            if message.get("ended"):
                for event in list(self._waiters):
                    event.set()
            if self._on_changed is not None:
                await self._on_changed(message["id"])
        elif kind == "tasks/command" and message.get("node") == self.node:
            await self._apply(message)
        elif kind == "tasks/ack" and message.get("to") == self.node:
            acked = self._acks.get(message.get("ref"))  # type: ignore[arg-type]
            if acked is not None and not acked.done():
                acked.set_result(None)

    async def aclose(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.cancel()
            with contextlib.suppress(BaseException):
                await self._beat
            self._beat = None


def _record(flat: list[bytes]) -> dict[str, Any]:
    """A task's hash (HGETALL's flat list) as the fields ``RemoteTask`` reads."""
    raw = {flat[i].decode(): flat[i + 1] for i in range(0, len(flat), 2)}
    return {
        "body": json.loads(raw["body"]),
        "status": raw["st"].decode(),
        "message": raw["msg"].decode() or None,
        "updated": raw["upd"].decode(),
        "ttl_ms": int(raw["ttl"]),
        "node": raw["node"].decode(),
        "died": "died" in raw,
    }


def _now_iso() -> str:
    """lastUpdatedAt as the tasks write it (``2026-07-28T12:00:00.000Z``)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
