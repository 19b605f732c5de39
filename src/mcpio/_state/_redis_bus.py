"""The Redis bus's messages, sealed: confidential and authenticated between the processes that
share a deployment secret, whatever else uses the same Redis server.

Redis pub/sub ignores database numbers: a client of any database on the server can
``PSUBSCRIBE *`` (read every message) and ``PUBLISH`` on any channel. So the bus of a
:class:`~._redis.RedisState` never shows a session id, a record or a client's answer in clear,
and obeys only messages made with its secret:

* the channel is ``<prefix>bus:<32 hex digits>``, derived from the secret (not guessable, and
  two deployments with different secrets never hear each other);
* each message is ``version | node (8 bytes) | counter (8) | time (ms, 8) | ciphertext | tag``:
  the body (JSON) XORed with a SHAKE-256 key stream of (encryption key, header), then an
  HMAC-SHA-256 over the header and ciphertext with the MAC key (encrypt-then-MAC). The keys are
  HMAC-SHA-256 of the secret with distinct labels. ``node`` is random per process and
  ``counter`` never repeats in it, so no two messages share a key stream;
* a message is accepted once, within :data:`WINDOW` seconds of its time stamp: a receiver keeps,
  per sending node, the highest counter seen and which of the :data:`REPLAY_SPAN` below it were
  seen. A message that fails the tag, is stale or replayed is dropped and counted
  (:attr:`BusSeal.dropped`); the first one is logged (a WARNING), later ones are not.

Where the secret comes from is :class:`~._redis.RedisState`'s business (``secret=``, or a random
key kept in the database; see docs/guides/deploying-at-scale.md).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import time

log = logging.getLogger("mcpio.state")

VERSION = 1
WINDOW = 60.0  # seconds a message is accepted after its time stamp (clocks of several hosts)
REPLAY_SPAN = 1024  # counters below a node's highest that are still told apart (reordering)
_HEADER = 1 + 8 + 8 + 8
_TAG = 32
_NODES_MAX = 4096  # senders remembered (only authenticated ones are: a forger adds none)


def _derive(secret: bytes, label: str) -> bytes:
    return hmac.new(secret, b"mcpio redis bus\x00" + label.encode(), hashlib.sha256).digest()


class BusSeal:
    """Seals and opens the bus's messages for one secret and one key prefix (see the module
    docstring). ``node``: this process (8 bytes); its own messages open to None."""

    def __init__(self, secret: bytes, prefix: str, node: bytes) -> None:
        if len(node) != 8:
            raise ValueError("node: 8 bytes")
        self.secret = secret
        self.channel = prefix + "bus:" + _derive(secret, "channel\x00" + prefix).hex()[:32]
        self._enc = _derive(secret, "encrypt\x00" + prefix)
        self._mac = _derive(secret, "authenticate\x00" + prefix)
        self.node = node
        self._counter = secrets.randbelow(1 << 32)  # any start: (node, counter) never repeats
        self._seen: dict[bytes, list[int]] = {}  # node -> [highest counter, bitmap below it, last seen (s)]
        self.dropped = 0

    def seal(self, body: bytes) -> bytes:
        self._counter += 1
        header = bytes([VERSION]) + self.node + self._counter.to_bytes(8, "big") + _now_ms().to_bytes(8, "big")
        cipher = _xor(body, hashlib.shake_256(self._enc + header).digest(len(body)))
        return header + cipher + hmac.new(self._mac, header + cipher, hashlib.sha256).digest()

    def open(self, data: bytes) -> bytes | None:
        """The body of a message another process sealed with this secret, once; None for this
        process's own messages and for anything else (dropped: counted, the first one logged)."""
        if len(data) < _HEADER + _TAG or data[0] != VERSION:
            return self._drop("not a sealed message")
        header, cipher, tag = data[:_HEADER], data[_HEADER:-_TAG], data[-_TAG:]
        if not hmac.compare_digest(tag, hmac.new(self._mac, header + cipher, hashlib.sha256).digest()):
            return self._drop("its authentication tag is wrong")
        node = header[1:9]
        if node == self.node:
            return None  # this process's own message, back from Redis
        now = time.time()
        if abs(now - int.from_bytes(header[17:25], "big") / 1000) > WINDOW:
            return self._drop(f"it is more than {WINDOW:.0f} s old (or its sender's clock is off)")
        if not self._first(node, int.from_bytes(header[9:17], "big"), now):
            return self._drop("it was received before (a replay)")
        return _xor(cipher, hashlib.shake_256(self._enc + header).digest(len(cipher)))

    def _first(self, node: bytes, counter: int, now: float) -> bool:
        """Whether ``counter`` of ``node`` is seen for the first time (and remember it)."""
        seen = self._seen.get(node)
        if seen is None:
            if len(self._seen) >= _NODES_MAX:  # forget senders silent for longer than a message lives
                self._seen = {n: s for n, s in self._seen.items() if now - s[2] < 2 * WINDOW}
            self._seen[node] = [counter, 1, int(now)]
            return True
        high, bits, _ = seen
        if counter > high:
            bits = ((bits << (counter - high)) | 1) & ((1 << REPLAY_SPAN) - 1)
            high = counter
        else:
            back = high - counter
            if back >= REPLAY_SPAN or (bits >> back) & 1:
                return False
            bits |= 1 << back
        seen[:] = [high, bits, int(now)]
        return True

    def _drop(self, why: str) -> bytes | None:
        """None, having counted the drop (the first one logged)."""
        self.dropped += 1
        if self.dropped == 1:
            log.warning(
                "a message on the Redis bus was dropped: %s. Another deployment with another secret "
                "on the same Redis server, or a forgery; further drops are counted, not logged",
                why,
            )
        return None


def _xor(data: bytes, stream: bytes) -> bytes:
    n = len(data)
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big") if n else b""


def _now_ms() -> int:
    return int(time.time() * 1000)
