"""A :class:`~mcpio._client._cache.ClientCache` on Redis (or Valkey), shared by a fleet of hosts.

Each entry is one string key, ``<prefix><client key>``, holding the JSON bytes with a
millisecond expiry (``SET … PX``); Redis drops it when the TTL passes. ``clear(prefix)`` walks
the matching keys with ``SCAN`` (never ``KEYS``) and unlinks them, so a list_changed seen by one
process is seen by all. The client keys already carry the server's namespace and the credential
partition (see ``_cache``); ``prefix`` separates this cache from anything else in the database.
``redis`` is imported when a RedisCache is made (``pip install 'mcpio[redis]'``).
"""

from __future__ import annotations

from typing import Any

_GLOB = str.maketrans({c: "\\" + c for c in "*?[]\\"})


class RedisCache:
    """``RedisCache("redis://127.0.0.1:6379/0")`` (or ``client=`` an existing
    ``redis.asyncio.Redis``); ``timeout`` bounds each command, in seconds."""

    def __init__(
        self, url: str | None = None, *, client: Any = None, prefix: str = "mcpio:client-cache:", timeout: float = 2.0
    ) -> None:
        if (url is None) == (client is None):
            raise ValueError("give RedisCache a redis:// URL or client=, one of the two")
        if url is not None:
            try:
                import redis.asyncio as aioredis
            except ImportError:  # pragma: no cover - the extra is missing
                raise ImportError("RedisCache needs the redis package: pip install 'mcpio[redis]'") from None
            client = aioredis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
        self.client = client
        self.prefix = prefix

    async def get(self, key: str) -> bytes | None:
        value = await self.client.get(self.prefix + key)
        return None if value is None else bytes(value)

    async def set(self, key: str, value: bytes, ttl: float) -> None:
        await self.client.set(self.prefix + key, value, px=max(1, int(ttl * 1000)))

    async def delete(self, key: str) -> None:
        await self.client.unlink(self.prefix + key)

    async def clear(self, prefix: str = "") -> None:
        batch: list[Any] = []
        async for key in self.client.scan_iter(match=(self.prefix + prefix).translate(_GLOB) + "*", count=500):
            batch.append(key)
            if len(batch) >= 500:
                await self.client.unlink(*batch)
                batch = []
        if batch:
            await self.client.unlink(*batch)

    async def aclose(self) -> None:
        await self.client.aclose()
