"""Client ID Metadata Documents without server-side request forgery: the proxy fetches a
``client_id`` URL an anonymous ``/authorize`` names, so it must never reach this machine or a
private network, never by a name that only looks like an address, and its error page must not
say what answered (issue 32, item 3)."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl

import httpx
import pytest
import trustme

from tests.support.http import ServerThread
from tests.support.oauth_proxy import pkce, proxy_stack

REDIRECT = "http://127.0.0.1:40000/cb"


def authorize(stack, client_id):
    url = stack.authorize_url(client_id, REDIRECT, pkce()[1], "st")
    with stack.http() as ua:
        return ua.get(url)


@pytest.fixture(scope="module")
def stack(idp):
    with proxy_stack(idp) as s:
        yield s


@contextlib.contextmanager
def listener():
    """A loopback port that records whether anything connected (the kernel completes the
    handshake into the backlog; a non-blocking accept tells)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.setblocking(False)
    try:
        yield sock
    finally:
        sock.close()


def contacted(sock) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return False
    conn.close()
    return True


def test_a_client_id_url_on_this_machine_is_never_fetched(stack):
    with listener() as sock:
        port = sock.getsockname()[1]
        pages = []
        for url in (
            f"http://127.0.0.1:{port}/admin/delete",  # plain http: refused without a connection
            f"https://127.0.0.1:{port}/x.json",
            f"https://localhost:{port}/x.json",  # a name: resolved, then the address is judged
            f"https://2130706433:{port}/x.json",  # 127.0.0.1 written as a number
            f"https://[::ffff:127.0.0.1]:{port}/x.json",  # IPv4-mapped loopback
            f"https://0.0.0.0:{port}/x.json",
            f"https://127.0.0.1.nip.invalid:{port}/x.json",  # a name that only starts like an address
        ):
            r = authorize(stack, url)
            assert r.status_code == 400 and "location" not in r.headers, (url, r.status_code)
            pages.append(r.text)
        assert not contacted(sock), "the proxy connected to a loopback port for a client_id URL"
    assert len(set(pages)) == 1, "the refusals differ: the page tells what is there"
    assert str(port) not in pages[0] and "HTTP" not in pages[0]


def test_a_loopback_name_is_judged_by_its_address():
    """One rule (an address in 127.0.0.0/8 or ::1, or localhost) for every http:// allowance:
    ``127.0.0.1.evil.example`` is a name anyone can point anywhere."""
    from mcpio._auth._jwks import check_url, is_loopback_host

    assert not is_loopback_host("127.0.0.1.evil.example") and not is_loopback_host("127.evil")
    assert is_loopback_host("127.0.0.2") and is_loopback_host("[::1]") and is_loopback_host("localhost")
    with pytest.raises(ValueError):
        check_url("http://127.0.0.1.evil.example/jwks", "the JWKS URL")


def test_a_redirect_uri_named_like_loopback_is_refused(stack):
    r = httpx.post(
        stack.proxy.url("register"), json={"redirect_uris": ["http://127.0.0.1.evil.example/cb"]}, timeout=10
    )
    assert r.status_code == 400 and r.json()["error"] == "invalid_redirect_uri", r.text


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    where = tmp_path_factory.mktemp("tls")
    key, chain = where / "key.pem", where / "chain.pem"
    cert.private_key_pem.write_to_path(str(key))
    cert.cert_chain_pems[0].write_to_path(str(chain))
    for extra in cert.cert_chain_pems[1:]:
        with open(chain, "ab") as f:
            f.write(extra.bytes())
    trust = ssl.create_default_context()
    ca.configure_trust(trust)
    return {"ssl_certfile": str(chain), "ssl_keyfile": str(key)}, trust


def test_documents_on_an_allowed_network(idp, tls):
    """An operator may allow a private network (clients' documents on an intranet): then the
    document is fetched over verified TLS, and still every failure reads the same."""
    config, trust = tls
    docs = {}

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        status, body = docs.get(scope["path"], (404, b"secret-internal-page"))
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": body})

    with (
        ServerThread(app, **config) as host,
        proxy_stack(idp, cimd_allowed_networks=["127.0.0.0/8"], cimd_ssl_context=trust) as stack,
    ):
        good, liar, huge = (host.base + p for p in ("/client.json", "/liar.json", "/huge.json"))
        docs["/client.json"] = (
            200,
            json.dumps(
                {
                    "client_id": good,
                    "client_name": "CIMD app",
                    "redirect_uris": [REDIRECT],
                    "token_endpoint_auth_method": "none",
                }
            ).encode(),
        )
        docs["/liar.json"] = (200, json.dumps({"client_id": good, "redirect_uris": [REDIRECT]}).encode())
        docs["/huge.json"] = (
            200,
            json.dumps({"client_id": huge, "redirect_uris": [REDIRECT], "pad": "x" * 70_000}).encode(),
        )
        r = authorize(stack, good)
        assert r.status_code == 302 and r.headers["location"].startswith(stack.proxy.upstream.authorize_url)
        r = authorize(stack, liar)
        assert r.status_code == 400 and "not its own URL" in r.text
        missing, big = authorize(stack, host.base + "/missing.json"), authorize(stack, huge)
        assert missing.status_code == big.status_code == 400
        assert missing.text == big.text and "404" not in missing.text and "secret-internal" not in missing.text
        plain = authorize(stack, good.replace("https://", "http://"))  # the same document over http
        assert plain.status_code == 400 and plain.text == missing.text
