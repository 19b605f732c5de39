"""Session state on Redis (``RedisState.kv``): the :class:`~._kv.KVStore` every process of a
database shares, with the bounds and answers of :class:`~._kv.MemoryKV`.

Keys, under the backend's ``prefix`` (default ``mcpio:``): ``kv:<scope>``, a hash per scope with
``v:<key>`` (the value), ``e:<key>`` (its expiry, ms on Redis's clock), and for a handle's scope
``o`` (the owner) and ``oe`` (the owner's expiry); ``kvo:<sha1 of an owner>``, the sorted set
of that owner's live handles (their scopes, scored by expiry: ``max_handles``); for
``max_total_bytes``, ``kv:total`` (the bytes counted), ``kv:sizes`` (a hash: each scope's bytes
as counted, a handle's owner record included: ``_kv.owner_cost``) and ``kv:ends`` (a sorted
set: each counted scope by when its first key or its owner record expires).
Each ``set`` counts its scope again, and sweeps ``kv:ends``: a scope where a key has expired is
counted again without it (16 of them per ``set``; all of them before one is refused), so an
expired key leaves the total at the next ``set`` of any scope after it expired (until then the
total errs high, never low). Each operation is one Lua script: atomic
across processes (two processes setting keys of one scope at once both count against its
bound), expired fields swept as the scope is written, and the hash's own expiry kept at its
latest field's, so an abandoned scope leaves nothing behind. Time is Redis's (``TIME``), so the
processes' clocks do not matter. Redis errors are :class:`~._base.StateUnavailable`.
"""

from __future__ import annotations

from typing import Any

from ._kv import (
    DEFAULT_MAX_SCOPE_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    ENTRY_OVERHEAD,
    StateLimitError,
    handle_limit,
    scope_limit,
    total_limit,
)

_NOW = """
local h = ARGV[1] .. 'kv:' .. ARGV[2]
local sizes, ends, total = ARGV[1] .. 'kv:sizes', ARGV[1] .. 'kv:ends', ARGV[1] .. 'kv:total'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function keep(at)
  local left = redis.call('PTTL', h)
  if left < 0 or now + left < at then redis.call('PEXPIREAT', h, at) end
end
"""

# ARGV: prefix, scope, key -> the value or false
_GET = (
    _NOW
    + """
local got = redis.call('HMGET', h, 'v:' .. ARGV[3], 'e:' .. ARGV[3])
if not got[1] then return false end
if tonumber(got[2]) <= now then
  redis.call('HDEL', h, 'v:' .. ARGV[3], 'e:' .. ARGV[3])
  return false
end
return got[1]
"""
)

# The counting of max_total_bytes (module docstring), for _SET and _BIND: ``recount(s)`` counts
# scope s again without what has expired in it (its keys, its owner record), ``sweep(n)`` does
# so for n of the scopes where something has expired (nil: all of them).
_SWEEP = """
local function recount(s, overhead)
  local k = ARGV[1] .. 'kv:' .. s
  local all = redis.call('HGETALL', k)
  local fields = {}
  for i = 1, #all, 2 do fields[all[i]] = all[i + 1] end
  local bytes, soonest = 0, nil
  for f, v in pairs(fields) do
    if string.sub(f, 1, 2) == 'e:' then
      local key = string.sub(f, 3)
      if tonumber(v) <= now then
        redis.call('HDEL', k, 'v:' .. key, f)
      else
        bytes = bytes + string.len(key) + string.len(fields['v:' .. key] or '') + overhead
        if not soonest or tonumber(v) < soonest then soonest = tonumber(v) end
      end
    end
  end
  if fields['oe'] then
    if tonumber(fields['oe']) <= now then
      redis.call('HDEL', k, 'o', 'oe')
    else
      bytes = bytes + string.len(fields['o'] or '') + overhead
      if not soonest or tonumber(fields['oe']) < soonest then soonest = tonumber(fields['oe']) end
    end
  end
  redis.call('DECRBY', total, tonumber(redis.call('HGET', sizes, s) or '0') - bytes)
  if soonest then
    redis.call('HSET', sizes, s, bytes)
    redis.call('ZADD', ends, soonest, s)
  else
    redis.call('HDEL', sizes, s)
    redis.call('ZREM', ends, s)
  end
end
local function sweep(n, overhead)
  local args = {'ZRANGEBYSCORE', ends, '-inf', now}
  if n then args = {'ZRANGEBYSCORE', ends, '-inf', now, 'LIMIT', 0, n} end
  for _, s in ipairs(redis.call(unpack(args))) do
    if s ~= ARGV[2] then recount(s, overhead) end
  end
end
"""

# ARGV: prefix, scope, key, value, ttl ms, max scope bytes, overhead, max total bytes -> false
# (set), {used, cost, 0} (over the scope's bound) or {total, cost, 1} (over the total)
_SET = (
    _NOW
    + _SWEEP
    + """
local key, value, ttl = ARGV[3], ARGV[4], tonumber(ARGV[5])
local limit, overhead, most = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
sweep(16, overhead)
local all = redis.call('HGETALL', h)
local fields = {}
for i = 1, #all, 2 do fields[all[i]] = all[i + 1] end
local used, latest, soonest = 0, now + ttl, now + ttl
for f, v in pairs(fields) do
  if string.sub(f, 1, 2) == 'e:' then
    local k = string.sub(f, 3)
    if tonumber(v) <= now then
      redis.call('HDEL', h, 'v:' .. k, f)
    elseif k ~= key then
      used = used + string.len(k) + string.len(fields['v:' .. k] or '') + overhead
      if tonumber(v) > latest then latest = tonumber(v) end
      if tonumber(v) < soonest then soonest = tonumber(v) end
    end
  end
end
if fields['oe'] then
  if tonumber(fields['oe']) <= now then redis.call('HDEL', h, 'o', 'oe')
  else
    used = used + string.len(fields['o'] or '') + overhead  -- the owner record (_kv.owner_cost)
    if tonumber(fields['oe']) > latest then latest = tonumber(fields['oe']) end
    if tonumber(fields['oe']) < soonest then soonest = tonumber(fields['oe']) end
  end
end
local cost = string.len(key) + string.len(value) + overhead
if used + cost > limit then return {used, cost, 0} end
local delta = used + cost - tonumber(redis.call('HGET', sizes, ARGV[2]) or '0')
if delta > 0 and tonumber(redis.call('GET', total) or '0') + delta > most then
  sweep(nil, overhead)  -- every scope where something expired, before refusing
  delta = used + cost - tonumber(redis.call('HGET', sizes, ARGV[2]) or '0')
  local all = tonumber(redis.call('GET', total) or '0')
  if delta > 0 and all + delta > most then return {all, cost, 1} end
end
redis.call('HSET', h, 'v:' .. key, value, 'e:' .. key, now + ttl)
redis.call('PEXPIREAT', h, latest)
redis.call('HSET', sizes, ARGV[2], used + cost)
redis.call('ZADD', ends, soonest, ARGV[2])
redis.call('INCRBY', total, delta)
return false
"""
)

# ARGV: prefix, scope, key, overhead -> 1 it was there (live), 0 absent or expired (removed either
# way, and no longer counted)
_DELETE = (
    _NOW
    + """
local got = redis.call('HMGET', h, 'v:' .. ARGV[3], 'e:' .. ARGV[3])
local e = got[2]
local counted = tonumber(redis.call('HGET', sizes, ARGV[2]) or '0')
if got[1] and counted > 0 then
  local cost = math.min(counted, string.len(ARGV[3]) + string.len(got[1]) + tonumber(ARGV[4]))
  redis.call('HSET', sizes, ARGV[2], counted - cost)
  redis.call('DECRBY', total, cost)
end
redis.call('HDEL', h, 'v:' .. ARGV[3], 'e:' .. ARGV[3])
if e and tonumber(e) > now then return 1 end
return 0
"""
)

# The live handles of an owner: ``kvo:<sha1 of the owner>``, a sorted set of their scopes scored
# by expiry, the owner's count for max_handles (bind) and renewed with each handle (owner).
_HELD = """
local function held(owner)
  local o = ARGV[1] .. 'kvo:' .. redis.sha1hex(owner)
  redis.call('ZREMRANGEBYSCORE', o, '-inf', now)
  return o
end
"""

# ARGV: prefix, scope, owner, ttl ms, max handles, overhead, max total bytes -> 1 recorded, 0 the
# scope has a live owner, -1 the owner holds max handles already, {total} over the total (the
# owner record counts against it: _kv.owner_cost)
_BIND = (
    _NOW
    + _HELD
    + _SWEEP
    + """
local overhead, most = tonumber(ARGV[6]), tonumber(ARGV[7])
local oe = redis.call('HGET', h, 'oe')
if oe and tonumber(oe) > now then return 0 end
local o = held(ARGV[3])
if redis.call('ZCARD', o) >= tonumber(ARGV[5]) then return -1 end
sweep(16, overhead)
local cost = string.len(ARGV[3]) + overhead
if tonumber(redis.call('GET', total) or '0') + cost > most then
  sweep(nil, overhead)
  local all = tonumber(redis.call('GET', total) or '0')
  if all + cost > most then return {all} end
end
local at = now + tonumber(ARGV[4])
redis.call('HSET', h, 'o', ARGV[3], 'oe', at)
keep(at)
redis.call('ZADD', o, at, ARGV[2])
redis.call('PEXPIREAT', o, at)
redis.call('HINCRBY', sizes, ARGV[2], cost)
redis.call('INCRBY', total, cost)
local first = redis.call('ZSCORE', ends, ARGV[2])
if not first or tonumber(first) > at then redis.call('ZADD', ends, at, ARGV[2]) end
return 1
"""
)

# ARGV: prefix, scope, ttl ms -> the owner (its life renewed) or false
_OWNER = (
    _NOW
    + _HELD
    + """
local got = redis.call('HMGET', h, 'o', 'oe')
if not got[1] or tonumber(got[2]) <= now then return false end
local at = now + tonumber(ARGV[3])
redis.call('HSET', h, 'oe', at)
keep(at)
local o = held(got[1])
redis.call('ZADD', o, at, ARGV[2])
if redis.call('PTTL', o) < tonumber(ARGV[3]) then redis.call('PEXPIREAT', o, at) end
return got[1]
"""
)


class RedisKV:
    """The session-state store on Redis (see the module docstring)."""

    def __init__(
        self,
        client: Any,
        prefix: str,
        call: Any,
        *,
        max_scope_bytes: int = DEFAULT_MAX_SCOPE_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    ) -> None:
        self.client, self.prefix, self._call = client, prefix, call
        self.max_scope_bytes = max_scope_bytes
        self.max_total_bytes = max_total_bytes
        self._get = client.register_script(_GET)
        self._set = client.register_script(_SET)
        self._delete = client.register_script(_DELETE)
        self._bind = client.register_script(_BIND)
        self._owner = client.register_script(_OWNER)

    async def get(self, scope: str, key: str) -> bytes | None:
        raw = await self._call(lambda: self._get(args=[self.prefix, scope, key]))
        return None if raw is None else bytes(raw)

    async def set(self, scope: str, key: str, value: bytes, ttl: float) -> None:
        ms = max(1, int(ttl * 1000))
        args = [self.prefix, scope, key, value, ms, self.max_scope_bytes, ENTRY_OVERHEAD, self.max_total_bytes]
        refused = await self._call(lambda: self._set(args=args))
        if refused:
            used, cost, whole = (int(x) for x in refused)
            if whole:
                raise total_limit(used, self.max_total_bytes, "RedisState(max_state_bytes=)")
            raise scope_limit(used, cost, self.max_scope_bytes)

    async def delete(self, scope: str, key: str) -> bool:
        return bool(await self._call(lambda: self._delete(args=[self.prefix, scope, key, ENTRY_OVERHEAD])))

    async def bind(self, scope: str, owner: str, ttl: float, max_handles: int) -> bool:
        args = [self.prefix, scope, owner, max(1, int(ttl * 1000)), max_handles, ENTRY_OVERHEAD]
        args.append(self.max_total_bytes)
        answer = await self._call(lambda: self._bind(args=args))
        if isinstance(answer, list):
            raise total_limit(int(answer[0]), self.max_total_bytes, "RedisState(max_state_bytes=)")
        recorded = int(answer)
        if recorded < 0:
            raise handle_limit(max_handles)
        return recorded == 1

    async def owner(self, scope: str, ttl: float) -> str | None:
        raw = await self._call(lambda: self._owner(args=[self.prefix, scope, max(1, int(ttl * 1000))]))
        return None if raw is None else bytes(raw).decode()


__all__ = ["RedisKV", "StateLimitError"]
