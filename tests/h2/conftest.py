"""Fixtures of the HTTP/2 and TLS tests: a throwaway CA and a server certificate for 127.0.0.1
and localhost (trustme, in a temp dir, made once per test session), and ``mcpio run -t http``
in a real subprocess on a free loopback port."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.http import free_port, wait_port

SERVER = Path(__file__).with_name("server.py")


class Certs:
    def __init__(self, root: Path) -> None:
        import trustme

        ca = trustme.CA()
        cert = ca.issue_cert("127.0.0.1", "localhost")
        self.ca = root / "ca.pem"
        self.cert = root / "server-chain.pem"
        self.key = root / "server-key.pem"
        ca.cert_pem.write_to_path(str(self.ca))
        cert.private_key_pem.write_to_path(str(self.key))
        self.cert.write_bytes(b"".join(blob.bytes() for blob in cert.cert_chain_pems))
        other = trustme.CA().issue_cert("127.0.0.1")  # a key that does not belong to self.cert
        self.other_key = root / "other-key.pem"
        other.private_key_pem.write_to_path(str(self.other_key))
        self.other_ca = root / "other-ca.pem"
        trustme.CA().cert_pem.write_to_path(str(self.other_ca))


@pytest.fixture(scope="session")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return Certs(tmp_path_factory.mktemp("tls"))


class Served:
    """A running ``mcpio run``: its ``url``; ``stderr`` once it stopped."""

    def __init__(self, url: str, proc: subprocess.Popen) -> None:
        self.url = url
        self.proc = proc
        self.stderr = ""


@contextlib.contextmanager
def mcpio_http(*flags: Any, scheme: str = "http") -> Iterator[Served]:
    """``mcpio run tests/h2/server.py -t http --port P FLAGS…``; yields it once it listens,
    then stops it with SIGINT (and asserts it exited cleanly, with nothing on stdout)."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "run", str(SERVER), "-t", "http", "--port", str(port), *map(str, flags)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    served = Served(f"{scheme}://127.0.0.1:{port}/mcp", proc)
    try:
        wait_port(port, proc=proc)
        yield served
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            raise AssertionError(f"the server did not stop on SIGINT: {err}") from None
    served.stderr = err
    assert proc.returncode == 0 and "Traceback" not in err, err
    assert out == ""
