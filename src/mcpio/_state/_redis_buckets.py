"""Token buckets on Redis (or Valkey), shared by every process of a :class:`~._redis.RedisState`:
what :class:`mcpio.middleware.RateLimit` takes its tokens from when the server's state backend is
Redis (``mcpio run --redis``, ``http_app(state=RedisState(...))``).

One bucket is one hash, ``<prefix>rl:<name>:<key>``: ``t`` the tokens left (a float), ``at`` the
time they were counted (ms, Redis's own clock: every process sees the same time). Taking a token
is one Lua script (:data:`_TAKE`), so concurrent takers on several processes never both spend
the last token. A bucket expires once it would be full again (it then reads as absent: full), so
idle callers cost nothing. One key per script: Redis Cluster works too.
"""

from __future__ import annotations

from typing import Any

from ._redis import _caller

# KEYS[1] the bucket; ARGV: rate (tokens per second), burst (capacity), cost -> ms to wait (0: taken)
_TAKE = """
local rate, burst, cost = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = redis.call('HMGET', KEYS[1], 't', 'at')
local tokens, at = tonumber(b[1]), tonumber(b[2])
if tokens == nil or at == nil then tokens, at = burst, now end
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate / 1000)
  at = now
end
local wait = 0
if tokens >= cost then
  tokens = tokens - cost
else
  wait = math.ceil((cost - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(at))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rate) + 1000)
return wait
"""


class RedisBuckets:
    """The token buckets of one :class:`~._redis.RedisState` (its client, key prefix and error
    translation: a Redis failure raises :class:`~._base.StateUnavailable`)."""

    def __init__(self, state: Any) -> None:
        self.client = state.client
        self.prefix = state.prefix
        self._call = getattr(state, "_call", None) or _caller(state.client)
        self._take = self.client.register_script(_TAKE)

    async def take(self, name: str, key: str, rate: float, burst: float, cost: float = 1.0) -> float:
        """Take ``cost`` tokens from bucket ``key`` of limit ``name`` (``rate`` per second, at most
        ``burst`` held): 0.0 when taken, else the seconds until they will be there (nothing taken)."""
        bucket = f"{self.prefix}rl:{name}:{key}"
        wait = await self._call(lambda: self._take(keys=[bucket], args=[repr(rate), repr(burst), repr(cost)]))
        return int(wait) / 1000.0
