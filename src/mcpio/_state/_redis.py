"""The Redis (or Valkey) state backend: the SSE event store on Redis Streams, and the tasks
(:mod:`._redis_tasks`).

Keys, all under ``prefix`` (default ``mcpio:``), for session ``S`` and stream ``T``:

* ``ev:S:T`` — a Redis Stream, one entry per event, entry id ``0-<seq>`` (so the event id
  ``T-<seq>`` is namespaced by session and stream, and XRANGE replays in order);
* ``meta:S`` — a hash: ``seq:T`` (last seq), ``lost:T`` (highest seq discarded before it was
  delivered), ``bytes`` (what the session retains);
* ``ord:S`` and ``gord`` — sorted sets of the session's / every event by time (oldest first
  eviction); ``gbytes`` — bytes retained in all; ``evicted`` — a counter;
* ``turn:<hash>`` — the node holding a turn (:meth:`RedisState.claim`), expiring with it;
* ``bus:key`` — the bus's secret when none is given (:class:`RedisState`); the bus itself is
  the pub/sub channel ``bus:<hex>`` derived from the secret, its messages sealed
  (:mod:`._redis_bus`).

Every operation is one Lua script, so concurrent writers (several processes) keep the counts
exact, and the bounds are those of :class:`~mcpio._transports._http_events.MemoryEventStore`:
bytes per session, bytes in total, events per stream, age. One Redis (or a primary with
replicas); Redis Cluster is not supported (the scripts touch keys of several sessions).
Every Redis error becomes :class:`~._base.StateUnavailable` (the server answers 503 with
``Retry-After``), in one place (:func:`_caller`): unreachable, timed out, loading its data set,
out of memory (``maxmemory`` with ``noeviction``), a read-only replica (after a failover),
refusing writes (``MISCONF``), or any other error reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from .. import _jsonrpc as rpc
from .._shown import shown

try:
    import redis.asyncio as aioredis
    from redis.exceptions import BusyLoadingError, OutOfMemoryError, ReadOnlyError, RedisError
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError
except ImportError:  # pragma: no cover - the extra is missing
    raise ImportError("RedisState needs the redis package: pip install 'mcpio[redis]'") from None

from .._protocol._http import event_id, parse_event_id
from .._transports._http_events import (
    DEFAULT_MAX_EVENTS,
    DEFAULT_MAX_SESSION_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    DEFAULT_TTL,
    EVENT_OVERHEAD,
)
from ._base import StateUnavailable
from ._kv import DEFAULT_MAX_TOTAL_BYTES as DEFAULT_MAX_STATE_BYTES
from ._redis_bus import BusSeal
from ._redis_kv import RedisKV
from ._redis_sessions import RedisSessions
from ._redis_tasks import RedisTaskDirectory

_DOWN = (RedisConnectionError, RedisTimeoutError, OSError)  # worth one more try on a fresh connection
_FAILED = (RedisError, OSError)  # every error of a command: StateUnavailable
log = logging.getLogger("mcpio.state")

# Shared by every script: remove one event everywhere (``lose``: it was never delivered, so a
# resumption before it must be refused), and the age sweep.
_LIB = """
local p = ARGV[1]
local overhead = tonumber(ARGV[2])
local gord = p .. 'gord'
local gbytes = p .. 'gbytes'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

local function split(str)
  local out = {}
  for part in string.gmatch(str, '[^|]+') do out[#out + 1] = part end
  return out
end

local function kill(s, st, sq, c, lose)
  local meta = p .. 'meta:' .. s
  redis.call('XDEL', p .. 'ev:' .. s .. ':' .. st, '0-' .. sq)
  redis.call('ZREM', p .. 'ord:' .. s, st .. '|' .. sq .. '|' .. c)
  redis.call('ZREM', gord, s .. '|' .. st .. '|' .. sq .. '|' .. c)
  if redis.call('DECRBY', gbytes, c) <= 0 then redis.call('DEL', gbytes) end
  if redis.call('EXISTS', meta) == 1 then
    redis.call('HINCRBY', meta, 'bytes', -tonumber(c))
    if lose and tonumber(c) > overhead then
      local lost = tonumber(redis.call('HGET', meta, 'lost:' .. st) or '0')
      if tonumber(sq) > lost then redis.call('HSET', meta, 'lost:' .. st, sq) end
    end
  end
  if lose and tonumber(c) > overhead then redis.call('INCR', p .. 'evicted') end
end

local function sweep(ttl_ms)
  local old = redis.call('ZRANGEBYSCORE', gord, '-inf', '(' .. (now - ttl_ms), 'LIMIT', 0, 256)
  for _, m in ipairs(old) do
    local f = split(m)
    kill(f[1], f[2], f[3], f[4], true)
  end
end
"""

# ARGV: prefix, overhead, session, stream, message, max_events, ttl_ms, max_session, max_total,
# note ('' none: what the process running the stream says about it, kept with the stream)
_STORE = (
    _LIB
    + """
local s, st, msg = ARGV[3], ARGV[4], ARGV[5]
local max_events, ttl_ms = tonumber(ARGV[6]), tonumber(ARGV[7])
local max_sb, max_tb = tonumber(ARGV[8]), tonumber(ARGV[9])
local meta, ord, ev = p .. 'meta:' .. s, p .. 'ord:' .. s, p .. 'ev:' .. s .. ':' .. st
local seq = redis.call('HINCRBY', meta, 'seq:' .. st, 1)
if ARGV[10] and ARGV[10] ~= '' then redis.call('HSET', meta, 'note:' .. st, ARGV[10]) end
local cost = string.len(msg) + overhead
redis.call('XADD', ev, '0-' .. seq, 'm', msg, 'c', cost)
redis.call('ZADD', ord, now, st .. '|' .. seq .. '|' .. cost)
redis.call('ZADD', gord, now, s .. '|' .. st .. '|' .. seq .. '|' .. cost)
redis.call('HINCRBY', meta, 'bytes', cost)
redis.call('INCRBY', gbytes, cost)
while redis.call('XLEN', ev) > max_events do
  local first = redis.call('XRANGE', ev, '-', '+', 'COUNT', 1)[1]
  kill(s, st, string.sub(first[1], 3), first[2][4], true)
end
while tonumber(redis.call('HGET', meta, 'bytes') or '0') > max_sb do
  local f = split(redis.call('ZRANGE', ord, 0, 0)[1])
  kill(s, f[1], f[2], f[3], true)
end
while tonumber(redis.call('GET', gbytes) or '0') > max_tb do
  local f = split(redis.call('ZRANGE', gord, 0, 0)[1])
  kill(f[1], f[2], f[3], f[4], true)
end
sweep(ttl_ms)
for _, k in ipairs({meta, ord, ev}) do redis.call('PEXPIRE', k, 2 * ttl_ms) end
return seq
"""
)

# ARGV: prefix, overhead, session, stream, seq, ttl_ms -> false | {message, ...} pairs
_REPLAY = (
    _LIB
    + """
local s, st, seq = ARGV[3], ARGV[4], tonumber(ARGV[5])
sweep(tonumber(ARGV[6]))
local meta = p .. 'meta:' .. s
local last = redis.call('HGET', meta, 'seq:' .. st)
if not last or seq > tonumber(last) then return false end
if tonumber(redis.call('HGET', meta, 'lost:' .. st) or '0') > seq then return false end
local out = {}
for _, e in ipairs(redis.call('XRANGE', p .. 'ev:' .. s .. ':' .. st, '(0-' .. seq, '+')) do
  if string.len(e[2][2]) > 0 then
    out[#out + 1] = string.sub(e[1], 3)
    out[#out + 1] = e[2][2]
  end
end
return out
"""
)

# ARGV: prefix, overhead, session, stream ('' for every stream of the session)
_DISCARD = (
    _LIB
    + """
local s, only = ARGV[3], ARGV[4]
local ord = p .. 'ord:' .. s
for _, m in ipairs(redis.call('ZRANGE', ord, 0, -1)) do
  local f = split(m)
  if only == '' or f[1] == only then kill(s, f[1], f[2], f[3], false) end
end
if only == '' then
  for _, k in ipairs(redis.call('HKEYS', p .. 'meta:' .. s)) do
    if string.sub(k, 1, 4) == 'seq:' then redis.call('DEL', p .. 'ev:' .. s .. ':' .. string.sub(k, 5)) end
  end
  redis.call('DEL', p .. 'meta:' .. s, ord)
else
  redis.call('DEL', p .. 'ev:' .. s .. ':' .. only)
  redis.call('HDEL', p .. 'meta:' .. s, 'lost:' .. only, 'seq:' .. only, 'note:' .. only)
end
return 1
"""
)

# KEYS: the turn; ARGV: this node, ttl ms -> 1 (this node's now, for ttl) or 0 (another node's)
_CLAIM = """
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

# KEYS: the turn; ARGV: this node -> 1 if it held the turn (now free)
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

Call = Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]


def _caller(client: Any) -> Call:
    """How every Redis command of a :class:`RedisState` runs (the one place where Redis errors
    are translated): ``await call(lambda: command(...))`` returns its answer, or raises
    :class:`StateUnavailable` saying what is wrong with Redis, never a Redis exception. A command
    found on a dead connection is tried once more (after a Redis restart every pooled connection
    is stale and fails once, so service resumes by itself); a read-only reply drops the pooled
    connections and is tried once more too (after a failover the name may now lead to the new
    primary)."""

    async def call(make: Callable[[], Awaitable[Any]]) -> Any:
        try:
            return await make()
        except ReadOnlyError:
            with contextlib.suppress(*_FAILED):
                await client.connection_pool.disconnect()
        except _DOWN:
            pass
        except _FAILED as exc:
            raise StateUnavailable(_why(exc)) from None
        try:
            return await make()
        except _FAILED as exc:
            raise StateUnavailable(_why(exc)) from None

    return call


def _why(exc: BaseException) -> str:
    """What is wrong with Redis, for the 503's message and the logs (one line; the sha of a
    script and the line in it say nothing to the operator)."""
    text = str(exc).split(" script: ", 1)[0].strip().rstrip(".") or type(exc).__name__
    if isinstance(exc, BusyLoadingError):
        return f"Redis is loading its data set ({text})"
    if isinstance(exc, (RedisConnectionError, RedisTimeoutError, OSError)):
        return f"Redis is unreachable ({text})"
    if isinstance(exc, OutOfMemoryError):
        return f"Redis is out of memory and refuses writes ({text}; raise maxmemory or let it evict)"
    if isinstance(exc, ReadOnlyError):
        return f"Redis is a read-only replica ({text}; point the server at the primary)"
    if text.startswith("MISCONF"):
        return f"Redis refuses writes ({text})"
    return f"Redis answered an error ({text})"


class RedisEventStore:
    """The :class:`~mcpio._transports._http_events.EventStore` on Redis Streams (see the
    module docstring); the same bounds and answers as the in-memory store."""

    def __init__(
        self,
        client: Any,
        *,
        prefix: str,
        max_events: int,
        ttl: float,
        max_session_bytes: int,
        max_total_bytes: int,
        call: Call | None = None,
    ) -> None:
        self.client = client
        self._call = call or _caller(client)
        self.prefix = prefix
        self.max_events = max_events
        self.ttl_ms = int(ttl * 1000)
        self.max_session_bytes = max_session_bytes
        self.max_total_bytes = max_total_bytes
        self._store = client.register_script(_STORE)
        self._replay = client.register_script(_REPLAY)
        self._discard = client.register_script(_DISCARD)

    def _args(self, *more: Any) -> list[Any]:
        return [self.prefix, EVENT_OVERHEAD, *more]

    async def store(self, session_id: str, stream_id: str, message: bytes, note: str = "") -> str:
        """Store ``message`` as the next event of the stream; ``note``: kept with the stream
        (:meth:`note`), for the process that resumes it (which process runs it, its request ids)."""
        seq = await self._call(
            lambda: self._store(
                args=self._args(
                    session_id,
                    stream_id,
                    bytes(message),
                    self.max_events,
                    self.ttl_ms,
                    self.max_session_bytes,
                    self.max_total_bytes,
                    note,
                )
            )
        )
        return event_id(stream_id, int(seq))

    async def note(self, session_id: str, stream_id: str) -> str | None:
        """The note stored with the stream (see :meth:`store`), None if there is none."""
        raw = await self._call(lambda: self.client.hget(f"{self.prefix}meta:{session_id}", f"note:{stream_id}"))
        return None if raw is None else bytes(raw).decode()

    async def replay_after(self, session_id: str, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        parsed = parse_event_id(last_event_id)
        if parsed is None:
            return None
        stream_id, seq = parsed
        found = await self._call(lambda: self._replay(args=self._args(session_id, stream_id, seq, self.ttl_ms)))
        if found is None:  # the script's false: unknown id, or events after it were discarded
            return None
        pairs = [(event_id(stream_id, int(found[i])), bytes(found[i + 1])) for i in range(0, len(found), 2)]
        return stream_id, pairs

    async def discard_stream(self, session_id: str, stream_id: str) -> None:
        await self._call_discard(session_id, stream_id)

    async def read_after(self, session_id: str, stream_id: str, seq: int, block_ms: int) -> list[tuple[int, bytes]]:
        """The events of one stream after ``seq`` as they are stored (``XREAD BLOCK``): waits
        up to ``block_ms`` for the first; [] if none came. For a stream another process runs."""
        key = f"{self.prefix}ev:{session_id}:{stream_id}"
        raw = await self._call(lambda: self.client.xread({key: f"0-{seq}"}, count=256, block=block_ms))
        out: list[tuple[int, bytes]] = []
        for _key, entries in raw or ():
            for entry_id, fields in entries:
                out.append((int(entry_id.split(b"-")[1]), bytes(fields[b"m"])))
        return out

    async def forget(self, session_id: str) -> None:
        await self._call_discard(session_id, "")

    async def _call_discard(self, session_id: str, stream_id: str) -> None:
        await self._call(lambda: self._discard(args=self._args(session_id, stream_id)))

    async def stats(self) -> dict[str, int]:
        """``bytes`` retained and events ``evicted``, all processes together (tests, metrics)."""
        raw_bytes, evicted = await self._call(lambda: self.client.mget(self.prefix + "gbytes", self.prefix + "evicted"))
        return {"bytes": int(raw_bytes or 0), "evicted": int(evicted or 0)}


class RedisState:
    """State on Redis or Valkey at ``url`` (``redis://HOST:PORT/DB``, ``rediss://`` for TLS):
    processes that share the URL and ``prefix`` share the event store, the legacy sessions
    (``sessions``, :mod:`._redis_sessions`) and the tasks (``tasks``, :mod:`._redis_tasks`).
    Bounds as :class:`~mcpio._state.MemoryState` (they hold for the database as a whole).
    ``task_lease``: seconds after which the live tasks of a process that stopped refreshing its
    lease (it died) are reported failed by the others. ``fresh_for``: seconds a process serves a
    legacy session from its local copy without reading the record again (at most a quarter of
    ``session_timeout``; 0: every request reads it); a copy learns of a DELETE or a change
    elsewhere through the bus at once, so this bounds staleness only if a bus message is lost.
    ``max_state_bytes``: the session state (``ctx.session_state``, ``kv``) of the whole database,
    as ``MemoryKV(max_total_bytes=)`` bounds one process's.

    ``secret`` (at least 16 bytes; a ``str`` is UTF-8): the deployment's bus secret. Pub/sub is
    server-wide (it ignores database numbers), so the bus's channel name is derived from it and
    its messages are encrypted and authenticated with it (:mod:`._redis_bus`): a client of
    another database, or any client without the secret, can neither read a session id or
    record on the bus nor make a process obey a message. Every process sharing the database
    must be given the same one. None (the default): a random secret kept in the database itself
    (key ``<prefix>bus:key``, made by the first process, never expiring), which every process
    of the database reads; a client that can read this database can read that key too (and
    the records themselves), so give a secret when other clients of the Redis server are not
    trusted with this database (see docs/guides/deploying-at-scale.md)."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "mcpio:",
        max_session_bytes: int = DEFAULT_MAX_SESSION_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        max_events: int = DEFAULT_MAX_EVENTS,
        ttl: float = DEFAULT_TTL,
        timeout: float = 2.0,
        task_lease: float = 10.0,
        fresh_for: float = 1.0,
        secret: str | bytes | None = None,
        max_state_bytes: int = DEFAULT_MAX_STATE_BYTES,
    ) -> None:
        if fresh_for < 0:
            raise ValueError(f"fresh_for must be >= 0 seconds, not {fresh_for!r}")
        if isinstance(secret, str):
            secret = secret.encode()
        if secret is not None and len(secret) < 16:
            raise ValueError("the Redis bus secret must be at least 16 bytes (32 random hex digits will do)")
        self._secret = secret
        self._seal: BusSeal | None = None  # set by start(): the bus's channel and keys
        self.url = url
        self.fresh_for = fresh_for
        self.prefix = prefix
        self.node = secrets.token_hex(8)  # this process, on the bus
        self._handlers: list[Callable[[dict[str, Any]], Awaitable[None]]] = []
        self._listener: asyncio.Task[None] | None = None
        self._subscribed: asyncio.Event | None = None
        self._generation = 0  # how many times the bus has (re)subscribed
        self.client = aioredis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self._call = _caller(self.client)
        # The bus listens on its own connection, without a read timeout (it is idle between messages).
        self._bus_client = aioredis.Redis.from_url(url, socket_connect_timeout=timeout, socket_keepalive=True)
        self.events = RedisEventStore(
            self.client,
            prefix=prefix,
            max_events=max_events,
            ttl=ttl,
            max_session_bytes=max_session_bytes,
            max_total_bytes=max_total_bytes,
            call=self._call,
        )
        self.sessions = RedisSessions(self.client, prefix, self._call)
        # ctx.session_state, shared by every process: at most max_state_bytes in all
        self.kv = RedisKV(self.client, prefix, self._call, max_total_bytes=max_state_bytes)
        # Tasks: records on Redis, commands and wake-ups on the bus (see _redis_tasks).
        self.tasks = RedisTaskDirectory(
            self.client, prefix=prefix, node=self.node, publish=self.publish, call=self._call, lease=task_lease
        )
        self.on_message(self.tasks.on_bus)
        self._claim = self.client.register_script(_CLAIM)
        self._release = self.client.register_script(_RELEASE)

    async def check(self) -> None:
        """Raise :class:`StateUnavailable` (one line, password hidden) unless Redis answers."""
        if not await self.ready():
            raise StateUnavailable(f"cannot reach Redis at {shown(self.url)}; start it or fix --redis")

    async def start(self) -> None:
        await self.check()
        if self._seal is None:
            self._seal = await self._sealer()
        if self._listener is None:
            self._subscribed = asyncio.Event()
            self._listener = asyncio.get_running_loop().create_task(self._listen())
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await self._subscribed.wait()

    # ---------------------------------------------------------------- the bus (pub/sub)
    async def _sealer(self) -> BusSeal:
        """The bus's seal for the deployment secret: ``secret``, else the database's bus key
        (made if there is none; after Redis lost its data, this process's key is put back, so
        the running processes keep theirs, and one started meanwhile adopts it on resubscribing)."""
        secret = self._secret
        if secret is None:
            key = self.prefix + "bus:key"
            raw = await self._call(lambda: self.client.get(key))
            if raw is None:
                mine = self._seal.secret if self._seal is not None else secrets.token_hex(32).encode()
                await self._call(lambda: self.client.set(key, mine, nx=True))
                raw = await self._call(lambda: self.client.get(key))
            secret = bytes(raw or b"")
            if len(secret) < 16:
                raise StateUnavailable(f"the Redis bus key {key} holds no secret; delete it and restart the server")
        if self._seal is not None and self._seal.secret == secret:
            return self._seal
        seal = BusSeal(secret, self.prefix, bytes.fromhex(self.node))
        if self._seal is not None:
            seal.dropped = self._seal.dropped
        return seal

    @property
    def bus_dropped(self) -> int:
        """Messages on the bus's channel dropped since this process started: not sealed with its
        secret, stale or replayed (the first is logged; see :mod:`._redis_bus`)."""
        return self._seal.dropped if self._seal is not None else 0

    async def publish(self, message: dict[str, Any]) -> None:
        seal = self._seal
        if seal is None:
            raise StateUnavailable("the Redis bus is not started (RedisState.start)")
        # Encoded as the wire encodes a message (_jsonrpc.encode), so what is told on another
        # process (an extension notification's params) is what this one sends its own clients.
        body = seal.seal(rpc.encode({**message, "from": self.node}))
        await self._call(lambda: self.client.publish(seal.channel, body))

    def on_message(self, handler: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        self._handlers.append(handler)

    def bus_generation(self) -> int | None:
        """None while the bus is not listening; else a number that changes each time it
        subscribes again (after Redis restarted or the connection broke), so a caller can tell
        whether messages may have been missed since it last looked."""
        if self._subscribed is None or not self._subscribed.is_set():
            return None
        return self._generation

    async def _listen(self) -> None:
        """Deliver the bus's messages from other processes; resubscribe after Redis restarts."""
        assert self._subscribed is not None
        while True:
            try:
                self._seal = await self._sealer()  # again: Redis may have restarted empty
                async with self._bus_client.pubsub() as pubsub:
                    await pubsub.subscribe(self._seal.channel)
                    self._generation += 1
                    self._subscribed.set()
                    async for raw in pubsub.listen():
                        if raw.get("type") == "message":
                            await self._dispatch(raw["data"])
            except (*_FAILED, StateUnavailable) as exc:
                self._subscribed.clear()  # not ready until the bus listens again
                why = exc if isinstance(exc, StateUnavailable) else _why(exc)
                log.info("the Redis bus is down (%s); resubscribing", why)
                await asyncio.sleep(0.5)

    async def _dispatch(self, data: bytes) -> None:
        body = self._seal.open(data) if self._seal is not None else None
        if body is None:
            return  # this process's own, or not sealed with the secret (dropped, counted)
        try:
            message = json.loads(body)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("from") == self.node:
            return
        for handler in list(self._handlers):
            try:
                await handler(message)
            except Exception:
                log.exception("a bus message handler failed")

    # ---------------------------------------------------------------- turns (StateBackend.claim)
    def _turn(self, name: str) -> str:
        return f"{self.prefix}turn:{hashlib.sha256(name.encode()).hexdigest()[:32]}"

    async def claim(self, name: str, ttl: float) -> bool:
        args: list[str | int] = [self.node, max(1, int(ttl * 1000))]
        return bool(await self._call(lambda: self._claim(keys=[self._turn(name)], args=args)))

    async def release(self, name: str) -> None:
        await self._call(lambda: self._release(keys=[self._turn(name)], args=[self.node]))

    async def ready(self) -> bool:
        if self._subscribed is not None and not self._subscribed.is_set():
            return False  # started, but the bus is not listening (Redis restarting)
        try:
            return bool(await self._call(self.client.ping))
        except StateUnavailable:
            return False

    async def aclose(self) -> None:
        await self.tasks.aclose()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(BaseException):
                await self._listener
            self._listener = None
        await self._bus_client.aclose()
        await self.client.aclose()
