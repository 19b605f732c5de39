"""Session state on Redis (``RedisState.kv``): the :class:`~._kv.KVStore` every process of a
database shares, with the bounds and answers of :class:`~._kv.MemoryKV`.

Keys, under the backend's ``prefix`` (default ``mcpio:``): ``kv:<scope>``, a hash per scope with
``v:<key>`` (the value), ``e:<key>`` (its expiry, ms on Redis's clock), and for a handle's scope
``o`` (the owner) and ``oe`` (the owner's expiry); ``kvo:<sha1 of an owner>``, the sorted set
of that owner's live handles (their scopes, scored by expiry: ``max_handles``); for
``max_total_bytes``, ``kv:total`` (the bytes counted), ``kv:sizes`` (a hash: each scope's bytes
as counted, a handle's owner record included: ``_kv.owner_cost``) and ``kv:ends`` (a sorted
set: each counted scope by when its first key or its owner record expires); for
``max_owner_bytes``, ``kv:charged`` (a hash: each counted scope's owner, as the sha1 of it) and
``kv:owned`` (a hash: each such owner's bytes, the sum of its scopes' in ``kv:sizes``, kept
with them as they change: never summed again).
Each ``set`` counts its scope again, and sweeps ``kv:ends``: a scope where a key has expired is
counted again without it (16 of them per ``set``; all of them before one is refused), so an
expired key leaves the total and its owner's count at the next ``set`` of any scope after it
expired (until then they err high, never low). Each operation is one Lua script: atomic
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
    owner_limit,
    scope_limit,
    total_limit,
)

_NOW = """
local h = ARGV[1] .. 'kv:' .. ARGV[2]
local sizes, ends, total = ARGV[1] .. 'kv:sizes', ARGV[1] .. 'kv:ends', ARGV[1] .. 'kv:total'
local charged, owned = ARGV[1] .. 'kv:charged', ARGV[1] .. 'kv:owned'
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

# The counting of max_total_bytes and max_owner_bytes (module docstring), for _SET, _DELETE and
# _BIND: ``charge(c, by)`` counts ``by`` bytes more for owner c (its sha1; nil: a scope counted
# without one); ``recount(s)`` counts scope s again without what has expired in it (its keys,
# its owner record), ``sweep(n)`` does so for n of the scopes where something has expired (nil:
# all of them).
_CHARGE = """
local function charge(c, by)
  if c and by ~= 0 and redis.call('HINCRBY', owned, c, by) <= 0 then redis.call('HDEL', owned, c) end
end
"""
_SWEEP = (
    _CHARGE
    + """
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
  local was = tonumber(redis.call('HGET', sizes, s) or '0')
  redis.call('DECRBY', total, was - bytes)
  charge(redis.call('HGET', charged, s), bytes - was)
  if soonest then
    redis.call('HSET', sizes, s, bytes)
    redis.call('ZADD', ends, soonest, s)
  else
    redis.call('HDEL', sizes, s)
    redis.call('ZREM', ends, s)
    redis.call('HDEL', charged, s)
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
)

# ARGV: prefix, scope, key, value, ttl ms, max scope bytes, overhead, max total bytes, owner, max
# owner bytes -> false (set), {used, cost, 0} (over the scope's bound), {total, cost, 1} (over
# the total) or {the owner's bytes, cost, 2} (over its bound). The scope's bytes count against
# the owner it has, or the given one when it holds nothing live (_kv module docstring).
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
local used, latest, soonest, empty = 0, now + ttl, now + ttl, true
for f, v in pairs(fields) do
  if string.sub(f, 1, 2) == 'e:' then
    local k = string.sub(f, 3)
    if tonumber(v) <= now then
      redis.call('HDEL', h, 'v:' .. k, f)
    elseif k == key then
      empty = false
    else
      empty = false
      used = used + string.len(k) + string.len(fields['v:' .. k] or '') + overhead
      if tonumber(v) > latest then latest = tonumber(v) end
      if tonumber(v) < soonest then soonest = tonumber(v) end
    end
  end
end
if fields['oe'] then
  if tonumber(fields['oe']) <= now then redis.call('HDEL', h, 'o', 'oe')
  else
    empty = false
    used = used + string.len(fields['o'] or '') + overhead  -- the owner record (_kv.owner_cost)
    if tonumber(fields['oe']) > latest then latest = tonumber(fields['oe']) end
    if tonumber(fields['oe']) < soonest then soonest = tonumber(fields['oe']) end
  end
end
local cost = string.len(key) + string.len(value) + overhead
if used + cost > limit then return {used, cost, 0} end
local was, c0 = tonumber(redis.call('HGET', sizes, ARGV[2]) or '0'), redis.call('HGET', charged, ARGV[2])
local c = c0
if empty or not c then c = redis.sha1hex(ARGV[9]) end
local function mine()  -- the owner's bytes now, and with this set
  local held = tonumber(redis.call('HGET', owned, c) or '0')
  if c == c0 then return held, held - was + used + cost end
  return held, held + used + cost
end
local held, after = mine()
if after > held and after > tonumber(ARGV[10]) then
  sweep(nil, overhead)  -- every scope where something expired, before refusing
  held, after = mine()
  if after > held and after > tonumber(ARGV[10]) then return {after - cost, cost, 2} end
end
local delta = used + cost - was
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
if c == c0 then
  charge(c, delta)
else
  charge(c0, -was)
  charge(c, used + cost)
  redis.call('HSET', charged, ARGV[2], c)
end
return false
"""
)

# ARGV: prefix, scope, key, overhead -> 1 it was there (live), 0 absent or expired (removed either
# way, and no longer counted)
_DELETE = (
    _NOW
    + _CHARGE
    + """
local got = redis.call('HMGET', h, 'v:' .. ARGV[3], 'e:' .. ARGV[3])
local e = got[2]
local counted = tonumber(redis.call('HGET', sizes, ARGV[2]) or '0')
if got[1] and counted > 0 then
  local cost = math.min(counted, string.len(ARGV[3]) + string.len(got[1]) + tonumber(ARGV[4]))
  redis.call('HSET', sizes, ARGV[2], counted - cost)
  redis.call('DECRBY', total, cost)
  charge(redis.call('HGET', charged, ARGV[2]), -cost)
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

# ARGV: prefix, scope, owner, ttl ms, max handles, overhead, max total bytes, max owner bytes -> 1
# recorded, 0 the scope has a live owner, -1 the owner holds max handles already, {total, cost, 1}
# over the total, {the owner's bytes, cost, 2} over its bound (the owner record counts against
# both: _kv.owner_cost; against the owner the scope has, or this one when it holds nothing)
_BIND = (
    _NOW
    + _HELD
    + _SWEEP
    + """
local overhead, most, share = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local oe = redis.call('HGET', h, 'oe')
if oe and tonumber(oe) > now then return 0 end
local o = held(ARGV[3])
if redis.call('ZCARD', o) >= tonumber(ARGV[5]) then return -1 end
sweep(16, overhead)
if redis.call('HEXISTS', sizes, ARGV[2]) == 1 then recount(ARGV[2], overhead) end
local c = redis.call('HGET', charged, ARGV[2]) or redis.sha1hex(ARGV[3])
local cost = string.len(ARGV[3]) + overhead
if tonumber(redis.call('HGET', owned, c) or '0') + cost > share then
  sweep(nil, overhead)
  local mine = tonumber(redis.call('HGET', owned, c) or '0')
  if mine + cost > share then return {mine, cost, 2} end
end
if tonumber(redis.call('GET', total) or '0') + cost > most then
  sweep(nil, overhead)
  local all = tonumber(redis.call('GET', total) or '0')
  if all + cost > most then return {all, cost, 1} end
end
local at = now + tonumber(ARGV[4])
redis.call('HSET', h, 'o', ARGV[3], 'oe', at)
keep(at)
redis.call('ZADD', o, at, ARGV[2])
redis.call('PEXPIREAT', o, at)
redis.call('HINCRBY', sizes, ARGV[2], cost)
redis.call('INCRBY', total, cost)
redis.call('HSET', charged, ARGV[2], c)
charge(c, cost)
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

    def _refused(self, answer: Any, max_owner_bytes: int) -> StateLimitError:
        """The error of a script's refusal ``{used, cost, bound}`` (bound: 0 the scope's, 1 the
        total, 2 the owner's)."""
        used, cost, bound = (int(x) for x in answer)
        if bound == 2:
            return owner_limit(used, cost, max_owner_bytes)
        if bound == 1:
            return total_limit(used, self.max_total_bytes, "RedisState(max_state_bytes=)")
        return scope_limit(used, cost, self.max_scope_bytes)

    async def set(self, scope: str, key: str, value: bytes, ttl: float, owner: str, max_owner_bytes: int) -> None:
        ms = max(1, int(ttl * 1000))
        args = [self.prefix, scope, key, value, ms, self.max_scope_bytes, ENTRY_OVERHEAD, self.max_total_bytes]
        args += [owner, max_owner_bytes]
        refused = await self._call(lambda: self._set(args=args))
        if refused:
            raise self._refused(refused, max_owner_bytes)

    async def delete(self, scope: str, key: str) -> bool:
        return bool(await self._call(lambda: self._delete(args=[self.prefix, scope, key, ENTRY_OVERHEAD])))

    async def bind(self, scope: str, owner: str, ttl: float, max_handles: int, max_owner_bytes: int) -> bool:
        args = [self.prefix, scope, owner, max(1, int(ttl * 1000)), max_handles, ENTRY_OVERHEAD]
        args += [self.max_total_bytes, max_owner_bytes]
        answer = await self._call(lambda: self._bind(args=args))
        if isinstance(answer, list):
            raise self._refused(answer, max_owner_bytes)
        recorded = int(answer)
        if recorded < 0:
            raise handle_limit(max_handles)
        return recorded == 1

    async def owner(self, scope: str, ttl: float) -> str | None:
        raw = await self._call(lambda: self._owner(args=[self.prefix, scope, max(1, int(ttl * 1000))]))
        return None if raw is None else bytes(raw).decode()


__all__ = ["RedisKV", "StateLimitError"]
