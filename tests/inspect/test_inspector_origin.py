"""The inspector's Host and Origin checks on the wire (a real ``mcpio inspect``, httpx, no
browser): the one rule of every mcpio HTTP app (``_protocol._http_checks.RequestChecks``),
given the inspector's own address as the only allowed host and origin. Its own origin, by
either loopback name, is served; any other origin or Host is refused with 403 and no CORS
header, before the session cookie and page key are even looked at."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.inspect.test_inspector_browser import Inspector, sign_in

EMPTY_SERVER = Path(__file__).resolve().parent / "empty_server.py"


@pytest.fixture
def inspector() -> Iterator[Inspector]:
    insp = Inspector(str(EMPTY_SERVER))
    try:
        yield insp
    finally:
        insp.close()


def test_its_own_origin_is_served_and_any_other_is_refused(inspector: Inspector) -> None:
    port = inspector.port
    with httpx.Client() as http:
        good = sign_in(http, inspector)
        api = inspector.base + "/api/initial"
        for origin in (None, f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"HTTP://LOCALHOST:{port}/"):
            headers = good if origin is None else {**good, "Origin": origin}
            assert http.post(api, headers=headers, content=b"{}").status_code == 200, origin
        for origin in (
            "http://127.0.0.1:1",  # another local port: another origin
            f"https://127.0.0.1:{port}",  # another scheme
            f"http://127.0.0.1:{port}.evil.example",
            f"http://evil.example:{port}",
            "null",  # a sandboxed frame or a file:// page
            "http://127.0.0.1",
        ):
            r = http.post(api, headers={**good, "Origin": origin}, content=b"{}")
            assert r.status_code == 403 and "access-control-allow-origin" not in r.headers, origin
            assert "origin" in r.json()["error"]["message"].lower()
        for host in (f"evil.example:{port}", "127.0.0.1:1", "127.0.0.1", f"127.0.0.1.evil.example:{port}"):
            r = http.post(api, headers={**good, "Host": host}, content=b"{}")
            assert r.status_code == 403 and "host" in r.json()["error"]["message"].lower(), host
        assert http.post(api, headers={**good, "Host": f"localhost:{port}"}, content=b"{}").status_code == 200
        # refused before the cookie and key are looked at: the same answer signed in or not
        page = httpx.get(inspector.base + "/", headers={"Origin": "http://evil.example"})
        assert page.status_code == 403 and "origin" in page.json()["error"]["message"].lower()


def test_the_view_sandbox_answers_to_its_own_host_only(inspector: Inspector) -> None:
    with httpx.Client() as http:
        sandbox = http.post(inspector.base + "/api/initial", headers=sign_in(http, inspector), content=b"{}").json()
    base = sandbox["sandbox"]
    assert base.startswith("http://127.0.0.1:") and base != inspector.base
    sport = base.rsplit(":", 1)[1]
    assert httpx.get(base + "/proxy").status_code == 200
    for host in ("evil.example", f"evil.example:{sport}", f"localhost:{sport}", f"127.0.0.1:{inspector.port}"):
        assert httpx.get(base + "/proxy", headers={"Host": host}).status_code == 403, host
