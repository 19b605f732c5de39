"""The OAuth proxy's store on Redis (:class:`RedisProxyStore`, the :class:`._proxy_store.ProxyStore`
of a server whose state backend is a :class:`~mcpio._state.RedisState`): what one worker or
replica records, every other one sees; the deciding operations are single Lua scripts, so two
processes redeeming one code or rotating one refresh token cannot both win.

Keys, under the backend's prefix, for kind ``K`` (``client``, ``login``, ``consent``, ``code``,
``grant``, ``family``): ``oauth:K:r:ID`` a hash (the record, with its own expiry),
``oauth:K:idx`` a sorted set of live ids by expiry (the cap counts it), ``oauth:K:n:COUNTER``
a counter per source address or client (expires with its window), ``oauth:K:t:ID`` a revoked
family's tombstone. Redis errors become :class:`~mcpio._state.StateUnavailable` (503).
"""

from __future__ import annotations

from typing import Any

from .._state._redis import _caller

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# ARGV: base, id, ttl_ms, cap, unless_revoked, window_ms, nfields, fields..., (counter, max)...
_PUT = (
    _NOW
    + """
local b, id = ARGV[1], ARGV[2]
local ttl, cap, window, nf = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[6]), tonumber(ARGV[7])
if ARGV[5] == '1' and redis.call('EXISTS', b .. 't:' .. id) == 1 then return 'revoked' end
local idx = b .. 'idx'
redis.call('ZREMRANGEBYSCORE', idx, '-inf', now)
if redis.call('ZCARD', idx) >= cap then return 'all' end
local first = 8 + 2 * nf
local i = first
while ARGV[i] do
  if tonumber(redis.call('GET', b .. 'n:' .. ARGV[i]) or '0') >= tonumber(ARGV[i + 1]) then return ARGV[i] end
  i = i + 2
end
i = first
while ARGV[i] do
  local c = b .. 'n:' .. ARGV[i]
  if redis.call('INCR', c) == 1 then redis.call('PEXPIRE', c, window) end
  i = i + 2
end
local r = b .. 'r:' .. id
redis.call('DEL', r)
for j = 8, first - 1, 2 do redis.call('HSET', r, ARGV[j], ARGV[j + 1]) end
redis.call('PEXPIRE', r, ttl)
redis.call('ZADD', idx, now + ttl, id)
return 'ok'
"""
)

# ARGV: base, id -> the record's flat field list, or false
_TAKE = """
local r = ARGV[1] .. 'r:' .. ARGV[2]
local v = redis.call('HGETALL', r)
if #v == 0 then return false end
redis.call('DEL', r)
redis.call('ZREM', ARGV[1] .. 'idx', ARGV[2])
return v
"""

# ARGV: base, id, ttl_ms, expect ('' none), fields... -> 'ok' | 'reused' | 'gone'
_TOUCH = (
    _NOW
    + """
local r = ARGV[1] .. 'r:' .. ARGV[2]
if redis.call('EXISTS', r) == 0 then return 'gone' end
if ARGV[4] ~= '' and redis.call('HGET', r, 'r') ~= ARGV[4] then return 'reused' end
for j = 5, #ARGV, 2 do redis.call('HSET', r, ARGV[j], ARGV[j + 1]) end
redis.call('PEXPIRE', r, tonumber(ARGV[3]))
redis.call('ZADD', ARGV[1] .. 'idx', now + tonumber(ARGV[3]), ARGV[2])
return 'ok'
"""
)

# ARGV: base, id, field, value -> false (gone) | '' (set now) | the value set before
_CLAIM = """
local r = ARGV[1] .. 'r:' .. ARGV[2]
if redis.call('EXISTS', r) == 0 then return false end
if redis.call('HSETNX', r, ARGV[3], ARGV[4]) == 1 then return '' end
return redis.call('HGET', r, ARGV[3])
"""

# ARGV: base, id, tomb_ms -> the record's flat field list (empty: there was none)
_REVOKE = """
local r = ARGV[1] .. 'r:' .. ARGV[2]
local v = redis.call('HGETALL', r)
redis.call('DEL', r)
redis.call('ZREM', ARGV[1] .. 'idx', ARGV[2])
redis.call('SET', ARGV[1] .. 't:' .. ARGV[2], '1', 'PX', tonumber(ARGV[3]))
return v
"""

_COUNT = (
    _NOW
    + """
redis.call('ZREMRANGEBYSCORE', ARGV[1] .. 'idx', '-inf', now)
return redis.call('ZCARD', ARGV[1] .. 'idx')
"""
)


def _record(flat: Any) -> dict[str, str] | None:
    """A record from HGETALL (a dict) or a script (a flat list of fields and values)."""
    if not flat:
        return None
    if isinstance(flat, dict):
        return {_text(k): _text(v) for k, v in flat.items()}
    items = [x.decode() if isinstance(x, bytes) else str(x) for x in flat]
    return dict(zip(items[::2], items[1::2], strict=True))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _flat(fields: dict[str, str]) -> list[str]:
    return [x for pair in fields.items() for x in pair]


class RedisProxyStore:
    """The proxy's store on a :class:`~mcpio._state.RedisState` (see the module docstring)."""

    def __init__(self, state: Any) -> None:
        from ._proxy_store import TOMB_TTL

        self.client = state.client
        self._call = _caller(self.client)  # every command through the state's one error translation
        self.prefix = state.prefix + "oauth:"
        self.tomb_ms = int(TOMB_TTL * 1000)
        self._put = self.client.register_script(_PUT)
        self._take = self.client.register_script(_TAKE)
        self._touch = self.client.register_script(_TOUCH)
        self._claim = self.client.register_script(_CLAIM)
        self._revoke = self.client.register_script(_REVOKE)
        self._count = self.client.register_script(_COUNT)

    def _base(self, kind: str) -> str:
        return f"{self.prefix}{kind}:"

    async def put(
        self,
        kind: str,
        key: str,
        record: dict[str, str],
        *,
        ttl: float,
        cap: int,
        limits: tuple[tuple[str, int], ...] = (),
        window: float = 0.0,
        unless_revoked: bool = False,
    ) -> None:
        from ._proxy_store import StoreFull

        args = [
            self._base(kind),
            key,
            max(1, int(ttl * 1000)),
            cap,
            "1" if unless_revoked else "0",
            max(1, int(window * 1000)),
            len(record),
            *_flat(record),
            *[x for counter, most in limits for x in (counter, most)],
        ]
        answer = _text(await self._call(lambda: self._put(args=args)))
        if answer != "ok":
            raise StoreFull(kind, answer)

    async def get(self, kind: str, key: str) -> dict[str, str] | None:
        return _record(await self._call(lambda: self.client.hgetall(self._base(kind) + "r:" + key)))

    async def take(self, kind: str, key: str) -> dict[str, str] | None:
        return _record(await self._call(lambda: self._take(args=[self._base(kind), key])))

    async def touch(self, kind: str, key: str, fields: dict[str, str], ttl: float) -> bool:
        args = [self._base(kind), key, max(1, int(ttl * 1000)), "", *_flat(fields)]
        return _text(await self._call(lambda: self._touch(args=args))) == "ok"

    async def claim(self, kind: str, key: str, field: str, value: str) -> str | None:
        found = await self._call(lambda: self._claim(args=[self._base(kind), key, field, value]))
        return None if found is None else _text(found)

    async def rotate(self, kind: str, key: str, expect: str, fields: dict[str, str], ttl: float) -> str:
        args = [self._base(kind), key, max(1, int(ttl * 1000)), expect, *_flat(fields)]
        return _text(await self._call(lambda: self._touch(args=args)))

    async def revoke(self, kind: str, key: str) -> dict[str, str] | None:
        return _record(await self._call(lambda: self._revoke(args=[self._base(kind), key, self.tomb_ms])))

    async def count(self, kind: str) -> int:
        return int(await self._call(lambda: self._count(args=[self._base(kind)])))

    async def aclose(self) -> None:
        return None  # the connection pool is the state backend's, closed with it
