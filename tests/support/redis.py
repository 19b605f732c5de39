"""A real ``redis-server`` for tests (Debian's package, installed by ``scripts/test`` through
``scripts/setup-system redis-server``): on a free loopback port, in a temp dir, without
persistence. ``RedisServer.restart()`` stops it and starts it again on the same port."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import pytest

from tests.support.http import free_port, wait_port


class RedisServer:
    def __init__(self) -> None:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.fail(
                "redis-server is not installed: run `bash scripts/setup-system redis-server` (scripts/test does)"
            )
        self.exe = exe
        self.dir = tempfile.mkdtemp(prefix="mcpio-redis-")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [
                self.exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                self.dir,
                "--save",
                "",
                "--appendonly",
                "no",
                "--protected-mode",
                "yes",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
        )
        wait_port(self.port, proc=self.proc)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def flush(self) -> None:
        import redis

        client = redis.Redis.from_url(self.url)
        client.flushall()
        client.close()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def redis_server():
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def redis_url(redis_server):
    """A running, empty Redis (started once per test session)."""
    if redis_server.proc is None or redis_server.proc.poll() is not None:
        redis_server.start()
    redis_server.flush()
    return redis_server.url
