"""A real round-robin reverse proxy for tests: Debian's nginx (installed by ``scripts/test``
through ``scripts/setup-system nginx``) on a free loopback port, with a generated config:
one upstream of the given backends, round-robin with no affinity, HTTP/1.1 keep-alive to the
backends, ``proxy_buffering off`` for SSE. Run in the foreground as one process
(``master_process off``) in a temp dir; stopped with SIGQUIT (graceful), killed if it must."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.http import free_port, wait_port

CONFIG = """\
daemon off;
master_process off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    log_format upstream '$request_method $status $upstream_addr session=$http_mcp_session_id';
    access_log {dir}/access.log upstream;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    upstream mcp {{
{servers}
        keepalive 32;                   # HTTP/1.1 keep-alive to the backends
    }}
    server {{
        listen 127.0.0.1:{port};
        client_max_body_size 32m;
        location / {{
            proxy_pass http://mcp;      # round-robin (nginx's default), no affinity
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;        # SSE: every event goes out as it is written
            proxy_cache off;
            proxy_read_timeout 1h;      # long-lived SSE streams
        }}
    }}
}}
"""


def nginx_config(port: int, backends: list[int], dir: str) -> str:
    servers = "\n".join(f"        server 127.0.0.1:{b};" for b in backends)
    return CONFIG.format(port=port, servers=servers, dir=dir)


@contextlib.contextmanager
def round_robin(backends: list[int]) -> Iterator[tuple[int, Path]]:
    """nginx in front of ``backends`` (loopback ports); yields (its port, its access log: one
    line per request, ``METHOD STATUS BACKEND session=ID``)."""
    exe = shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if exe is None:
        pytest.fail("nginx is not installed: run `bash scripts/setup-system nginx` (scripts/test does)")
    work = tempfile.mkdtemp(prefix="mcpio-nginx-")
    port = free_port()
    conf = Path(work) / "nginx.conf"
    conf.write_text(nginx_config(port, backends, work))
    proc = subprocess.Popen(
        [exe, "-c", str(conf), "-p", work, "-e", f"{work}/error.log"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        try:
            wait_port(port, proc=proc)
        except AssertionError:
            log = Path(work, "error.log")
            raise AssertionError(f"nginx did not start: {log.read_text() if log.exists() else ''}") from None
        yield port, Path(work) / "access.log"
    finally:
        proc.terminate()  # nginx: SIGTERM is a fast shutdown
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)
