"""Legacy HTTP sessions on Redis: the cluster-wide directory of :class:`~._base.SessionDirectory`.

Keys, under the backend's ``prefix`` (default ``mcpio:``):

* ``s:<id>`` — a hash, the record of one session (fields: see :mod:`._base`), with a key TTL of
  ``session_timeout`` refreshed by every use (:meth:`RedisSessions.touch`), so a session idle
  everywhere for that long is gone everywhere;
* ``epoch`` — a token set once (never expires): a record missing while the epoch differs from
  the one a process knows means Redis lost its data (restarted without persistence, flushed),
  not that the session ended, so the process restores the records of its own copies;
* ``sx`` — a sorted set of live session ids scored by their expiry time (ms), which counts the
  sessions for ``max_sessions`` cluster-wide; its own TTL is refreshed with each use, so once
  the last session ends or expires nothing is left behind.

Every operation is one Lua script (one round trip, atomic across processes). A field update
touches only the fields that changed (``sub:<uri>`` per subscription), so two processes
changing different fields at once both win.
"""

from __future__ import annotations

import secrets
from typing import Any

# ARGV[1] prefix, ARGV[2] session id, ARGV[3] ttl ms (0: never expires)
_HEAD = """
local p, sid, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local key, sx, epoch = p .. 's:' .. sid, p .. 'sx', p .. 'epoch'
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function keep()
  if ttl > 0 then
    redis.call('PEXPIRE', key, ttl)
    redis.call('ZADD', sx, now + ttl, sid)
    redis.call('PEXPIRE', sx, ttl)
  else
    redis.call('ZADD', sx, '+inf', sid)
    redis.call('PERSIST', sx)
  end
end
"""

# ARGV[4] max sessions (0: no cap, a restore), ARGV[5] a new epoch token, ARGV[6..] field,
# value pairs -> false at the cap, else the epoch
_CREATE = (
    _HEAD
    + """
-- SET first: Redis out of memory refuses it before anything changed (once a script has
-- written, its later writes are let through, so the record would be made past maxmemory)
redis.call('SET', epoch, ARGV[5], 'NX')
redis.call('ZREMRANGEBYSCORE', sx, '-inf', now)
local cap = tonumber(ARGV[4])
if cap > 0 and redis.call('ZCARD', sx) >= cap then return false end
redis.call('DEL', key)
redis.call('HSET', key, 'rev', 1, unpack(ARGV, 6))
keep()
return redis.call('GET', epoch)
"""
)

# ARGV[4] the rev the caller knows, ARGV[5] the epoch it knows -> false (gone), {'lost'}
# (Redis lost its data), {epoch, rev} (unchanged) or {epoch, the whole record...}
_TOUCH = (
    _HEAD
    + """
local ep = redis.call('GET', epoch)
if redis.call('EXISTS', key) == 0 then
  redis.call('ZREM', sx, sid)
  if ep ~= ARGV[5] then return {'lost'} end
  return false
end
keep()
local rev = redis.call('HGET', key, 'rev')
if rev == ARGV[4] then return {ep, rev} end
local out = redis.call('HGETALL', key)
table.insert(out, 1, ep)
return out
"""
)

# ARGV[4] the epoch the caller knows -> 1 when the record is gone and Redis did not lose its data
_ENDED = (
    _HEAD
    + """
if redis.call('EXISTS', key) == 1 or redis.call('GET', epoch) ~= ARGV[4] then return 0 end
return 1
"""
)

# ARGV[4] how many field, value pairs follow; then the pairs; then fields to delete
_UPDATE = (
    _HEAD
    + """
if redis.call('EXISTS', key) == 0 then return false end
local n = tonumber(ARGV[4])
if n > 0 then redis.call('HSET', key, unpack(ARGV, 5, 4 + 2 * n)) end
if #ARGV > 4 + 2 * n then redis.call('HDEL', key, unpack(ARGV, 5 + 2 * n)) end
redis.call('HINCRBY', key, 'rev', 1)
keep()
return redis.call('HGETALL', key)
"""
)

# ARGV[4] field, ARGV[5] value -> 1, or 0 when the record is gone (rev unchanged)
_NOTE = (
    _HEAD
    + """
if redis.call('EXISTS', key) == 0 then return 0 end
redis.call('HSET', key, ARGV[4], ARGV[5])
keep()
return 1
"""
)

# ARGV[1] prefix, ARGV[2] ttl ms, ARGV[3] the epoch the caller knows, then (session id, rev)
# pairs -> one answer per pair, as _TOUCH's (0 for gone): the batched background touch
_TOUCH_MANY = """
local p, ttl, known = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local sx, ep = p .. 'sx', redis.call('GET', p .. 'epoch')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 4, #ARGV, 2 do
  local sid = ARGV[i]
  local key = p .. 's:' .. sid
  if redis.call('EXISTS', key) == 0 then
    redis.call('ZREM', sx, sid)
    if ep ~= known then out[#out + 1] = {'lost'} else out[#out + 1] = 0 end
  else
    if ttl > 0 then
      redis.call('PEXPIRE', key, ttl)
      redis.call('ZADD', sx, now + ttl, sid)
    else
      redis.call('ZADD', sx, '+inf', sid)
    end
    local rev = redis.call('HGET', key, 'rev')
    if rev == ARGV[i + 1] then
      out[#out + 1] = {ep, rev}
    else
      local all = redis.call('HGETALL', key)
      table.insert(all, 1, ep)
      out[#out + 1] = all
    end
  end
end
if ttl > 0 then redis.call('PEXPIRE', sx, ttl) else redis.call('PERSIST', sx) end
return out
"""

_DELETE = (
    _HEAD
    + """
redis.call('ZREM', sx, sid)
return redis.call('DEL', key)
"""
)


LOST = "lost"  # touch(): the record is missing because Redis lost its data (see the module docstring)


def _str(x: Any) -> str:
    return x.decode() if isinstance(x, bytes) else str(x)


def _record(raw: Any) -> dict[str, str] | None:
    """A script's answer as a record: None when gone; a flat HGETALL list as a dict."""
    if raw is None:
        return None
    it = iter(_str(x) for x in raw)
    return dict(zip(it, it, strict=True))


class RedisSessions:
    """The :class:`~._base.SessionDirectory` on Redis (see the module docstring)."""

    def __init__(self, client: Any, prefix: str, call: Any) -> None:
        self.client = client
        self.prefix = prefix
        self._call = call  # _redis._call: one retry after a reconnect, else StateUnavailable
        self._create = client.register_script(_CREATE)
        self._touch = client.register_script(_TOUCH)
        self._touch_many = client.register_script(_TOUCH_MANY)
        self._update = client.register_script(_UPDATE)
        self._note = client.register_script(_NOTE)
        self._delete = client.register_script(_DELETE)
        self._ended = client.register_script(_ENDED)
        self.epoch = ""  # Redis's epoch as this process last saw it

    def _args(self, sid: str, ttl: float, *more: Any) -> list[Any]:
        return [self.prefix, sid, max(0, int(ttl * 1000)), *more]

    async def create(self, sid: str, fields: dict[str, str], *, ttl: float, max_sessions: int) -> bool:
        flat = [x for kv in fields.items() for x in kv]
        token = secrets.token_hex(8)
        args = self._args(sid, ttl, max(0, max_sessions), token, *flat)
        epoch = await self._call(lambda: self._create(args=args))
        if epoch is None:
            return False
        self.epoch = _str(epoch)
        return True

    async def restore(self, sid: str, fields: dict[str, str], *, ttl: float) -> dict[str, str] | None:
        """Record again a session whose record Redis lost (after :data:`LOST`), from this
        process's copy; outside the cap (it was counted before)."""
        await self.create(sid, fields, ttl=ttl, max_sessions=0)
        return {**fields, "rev": "1"}

    async def touch(self, sid: str, rev: int, *, ttl: float) -> int | str | dict[str, str] | None:
        raw = await self._call(lambda: self._touch(args=self._args(sid, ttl, rev, self.epoch)))
        return self._touched(raw)

    async def touch_many(self, revs: dict[str, int], *, ttl: float) -> dict[str, int | str | dict[str, str] | None]:
        """:meth:`touch` for many sessions in one round trip (one script): ``revs`` maps each
        session id to the rev the caller knows; the answers by session id."""
        sids = list(revs)
        flat = [x for sid in sids for x in (sid, revs[sid])]
        args = [self.prefix, max(0, int(ttl * 1000)), self.epoch, *flat]
        raw = await self._call(lambda: self._touch_many(args=args))
        return {sid: self._touched(one or None) for sid, one in zip(sids, raw, strict=True)}

    def _touched(self, raw: Any) -> int | str | dict[str, str] | None:
        if raw is None:
            return None
        if len(raw) == 1:
            return LOST
        self.epoch = _str(raw[0])
        return int(raw[1]) if len(raw) == 2 else _record(raw[1:])

    async def update(
        self, sid: str, changed: dict[str, str], removed: list[str], *, ttl: float
    ) -> dict[str, str] | None:
        flat = [x for kv in changed.items() for x in kv]
        args = self._args(sid, ttl, len(changed), *flat, *removed)
        return _record(await self._call(lambda: self._update(args=args)))

    async def note(self, sid: str, field: str, value: str, *, ttl: float) -> bool:
        return bool(await self._call(lambda: self._note(args=self._args(sid, ttl, field, value))))

    async def delete(self, sid: str) -> bool:
        return bool(await self._call(lambda: self._delete(args=self._args(sid, 0))))

    async def ended(self, sid: str) -> bool:
        return bool(await self._call(lambda: self._ended(args=self._args(sid, 0, self.epoch))))

    async def count(self) -> int:
        """Sessions alive now, all processes together (tests, metrics)."""
        return int(await self._call(lambda: self.client.zcard(self.prefix + "sx")))
