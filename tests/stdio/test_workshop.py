"""``examples/workshop.py`` as a client sees it: a real subprocess over stdio, every message
validated against the schema of the negotiated version (tests/support/wire.py).

Roots: the server asks ``roots/list`` only after ``notifications/initialized`` and again after
``notifications/roots/list_changed``; the test answers with temporary folders. Without the
roots capability ``root_directory`` is used; without either, the result is an error result.
Links never lead a search out of a root; documents paginate 5 per page; ``doc://{name}`` does
not escape its folder; ``MCPIO_TRACE`` records the whole conversation.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.support.stdio_peer import StdioPeer

WORKSHOP = [sys.executable, str(EXAMPLES / "workshop.py")]
DOCS = EXAMPLES / "docs"
ROOTS_VERSIONS = ["2025-06-18", "2025-11-25"]
ALL_VERSIONS = ["2024-11-05", *ROOTS_VERSIONS]
RESOURCE_NOT_FOUND = -32002  # legacy era


@pytest.fixture
def tree(tmp_path) -> dict[str, Path]:
    """Two roots with known keyword counts, plus traps: links out, a .git folder, a binary."""
    base = tmp_path.resolve()
    one, two, outside = base / "one", base / "two", base / "outside"
    for d in (one / "sub" / "deeper", one / ".git", two, outside / "dir"):
        d.mkdir(parents=True)
    (one / "a.txt").write_text("Keyword keyword KEYWORD and other words\n")
    (one / "sub" / "b.md").write_text("nothing to see\n")
    (one / "sub" / "deeper" / "c.py").write_text("# keyword\nKEYWORDS = 1  # a substring counts too\n")
    (one / "sub" / "unicode.txt").write_text("ÜBER-Keyword über\n")
    (one / ".git" / "config").write_text("keyword keyword\n")
    (one / "image.bin").write_bytes(b"\x89PNG\0\0keyword")
    (outside / "secret.txt").write_text("keyword " * 5)
    (outside / "dir" / "deep.txt").write_text("keyword " * 7)
    os.symlink(outside / "secret.txt", one / "link-to-file.txt")
    os.symlink(outside / "dir", one / "link-to-dir")
    os.symlink(outside / "secret.txt", one / "sub" / "inner-link.txt")
    os.mkfifo(one / "a-fifo")  # opening it would block the search forever
    (two / "d.txt").write_text("KeyWord\n")
    return {"one": one, "two": two, "outside": outside}


ONE_COUNTS = {"a.txt": 3, "sub/deeper/c.py": 2, "sub/unicode.txt": 1}


def roots_result(*dirs: Path) -> dict:
    return {"roots": [{"uri": d.as_uri(), "name": d.name} for d in dirs]}


def search(p: StdioPeer, keyword: str, root_directory: str | None = None) -> dict:
    args = {"keyword": keyword}
    if root_directory is not None:
        args["root_directory"] = root_directory
    return p.call("tools/call", {"name": "key_word_search", "arguments": args}, others=[])


def counts(result: dict) -> dict[str, int]:
    assert not result.get("isError"), result
    text = json.loads(result["content"][0]["text"])
    if "structuredContent" in result:
        assert result["structuredContent"] == text
    return text


def answer_roots(p: StdioPeer, *dirs: Path) -> None:
    req = p.wait_for(lambda m: m.get("method") == "roots/list")
    assert "id" in req
    p.send({"jsonrpc": "2.0", "id": req["id"], "result": roots_result(*dirs)})


def start_with_roots(version: str, *dirs: Path, env: dict | None = None) -> StdioPeer:
    """Initialize declaring roots, proving roots/list comes only after notifications/initialized."""
    p = StdioPeer.spawn(WORKSHOP, env=env)
    try:
        _handshake_with_roots(p, version, dirs)
    except BaseException:
        p.proc.kill()
        p.proc.wait(5)
        raise
    return p


def _handshake_with_roots(p: StdioPeer, version: str, dirs: tuple[Path, ...]) -> None:
    p.version = version
    p.call(
        "initialize",
        {
            "protocolVersion": version,
            "capabilities": {"roots": {"listChanged": True}},
            "clientInfo": {"name": "workshop-tests", "version": "1"},
        },
    )
    # Before notifications/initialized the server must not ask: the pong is the next message.
    ping = p.request_msg("ping")
    p.send(ping)
    assert p.recv() == {"jsonrpc": "2.0", "id": ping["id"], "result": {}}
    p.notify("notifications/initialized")
    answer_roots(p, *dirs)


# ---------------------------------------------------------------------------- roots
@pytest.mark.parametrize("version", ROOTS_VERSIONS)
def test_roots_are_asked_after_initialized_and_searched(version, tree, wire_validator):
    with start_with_roots(version, tree["one"]) as p:
        assert counts(search(p, "keyword")) == ONE_COUNTS
        assert counts(search(p, "KeyWord")) == ONE_COUNTS  # case-insensitive both ways
        assert counts(search(p, "über")) == {"sub/unicode.txt": 2}
        assert counts(search(p, "absent-word")) == {}
        assert p.close() == 0


@pytest.mark.parametrize("version", ROOTS_VERSIONS)
def test_list_changed_asks_again_and_uses_the_new_roots(version, tree, wire_validator):
    with start_with_roots(version, tree["one"]) as p:
        assert counts(search(p, "keyword")) == ONE_COUNTS
        p.notify("notifications/roots/list_changed")
        answer_roots(p, tree["two"])
        assert counts(search(p, "keyword")) == {"d.txt": 1}
        # several roots: full paths, nothing counted twice for a nested root
        p.notify("notifications/roots/list_changed")
        answer_roots(p, tree["one"], tree["two"], tree["one"] / "sub")
        expected = {str(tree["one"] / k): v for k, v in ONE_COUNTS.items()} | {str(tree["two"] / "d.txt"): 1}
        assert counts(search(p, "keyword")) == expected
        assert p.close() == 0


@pytest.mark.parametrize("version", ROOTS_VERSIONS)
def test_root_directory_narrows_inside_the_roots_and_is_refused_outside(version, tree, wire_validator):
    with start_with_roots(version, tree["one"]) as p:
        assert counts(search(p, "keyword", "sub")) == {"deeper/c.py": 2, "unicode.txt": 1}
        assert counts(search(p, "keyword", str(tree["one"] / "sub" / "deeper"))) == {"c.py": 2}
        for outside in (str(tree["outside"]), "../outside", str(tree["one"] / "link-to-dir")):
            r = search(p, "keyword", outside)
            assert r["isError"] is True and "outside the client's roots" in r["content"][0]["text"], r
        assert p.close() == 0


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_without_roots_capability_root_directory_is_used(version, tree, wire_validator):
    with StdioPeer.spawn(WORKSHOP) as p:
        p.initialize(version)  # no roots capability: the server must not ask
        p.ping()
        assert counts(search(p, "keyword", str(tree["one"]))) == ONE_COUNTS
        r = search(p, "keyword")
        assert r["isError"] is True and "root_directory" in r["content"][0]["text"]
        r = search(p, "keyword", str(tree["one"] / "a.txt"))
        assert r["isError"] is True and "not a directory" in r["content"][0]["text"]
        r = search(p, "   ")
        assert r["isError"] is True and "empty" in r["content"][0]["text"]
        assert p.close() == 0
    assert not [m for m in p.received if m.get("method") == "roots/list"]


def test_roots_capability_with_no_file_roots_falls_back_to_root_directory(tree, wire_validator):
    with start_with_roots("2025-11-25") as p:  # answers roots/list with an empty list
        assert counts(search(p, "keyword", str(tree["two"]))) == {"d.txt": 1}
        r = search(p, "keyword")
        assert r["isError"] is True and "root_directory" in r["content"][0]["text"]
        assert p.close() == 0


# ---------------------------------------------------------------------------- documents
@pytest.fixture(scope="module", params=ALL_VERSIONS)
def docs_peer(request, wire_validator):
    with StdioPeer.spawn(WORKSHOP) as p:
        p.initialize(request.param)
        yield p
        assert p.close() == 0


def doc_names() -> list[str]:
    return sorted(p.name for p in DOCS.iterdir() if p.is_file())


def test_resources_list_paginates_5_per_page(docs_peer):
    uris, sizes, cursor = [], [], None
    while True:
        page = docs_peer.call("resources/list", {"cursor": cursor} if cursor else {})
        sizes.append(len(page["resources"]))
        uris += [r["uri"] for r in page["resources"]]
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    names = doc_names()
    assert len(names) > 10
    assert sorted(uris) == [f"doc://{n}" for n in names]  # every doc, exactly once
    assert sizes == [5] * (len(names) // 5) + ([len(names) % 5] if len(names) % 5 else [])
    templates = docs_peer.call("resources/templates/list")["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["doc://{name}"]


def test_resources_read(docs_peer):
    contents = docs_peer.call("resources/read", {"uri": "doc://note-01.txt"})["contents"]
    assert contents == [
        {"uri": "doc://note-01.txt", "mimeType": "text/plain", "text": (DOCS / "note-01.txt").read_text()}
    ]
    md = docs_peer.call("resources/read", {"uri": "doc://keywords.md"})["contents"][0]
    assert md["mimeType"] == "text/markdown" and md["text"] == (DOCS / "keywords.md").read_text()
    # through the template (the URI is not a listed one, but names the same document)
    via_template = docs_peer.call("resources/read", {"uri": "doc://note%2D02.txt"})["contents"][0]
    assert via_template["text"] == (DOCS / "note-02.txt").read_text()


@pytest.mark.parametrize(
    "uri",
    [
        "doc://../workshop.py",
        "doc://..%2Fworkshop.py",
        "doc://%2E%2E%2Fworkshop.py",
        "doc://..",
        "doc://.",
        "doc://%2Fetc%2Fpasswd",
        "doc://note-01.txt%00",
        "doc://..%5Cworkshop.py",
        "doc://missing.txt",
        "doc://",
        "doc://sub/dir.txt",
    ],
)
def test_template_refuses_escapes_as_not_found(docs_peer, uri):
    resp = docs_peer.request("resources/read", {"uri": uri})
    assert resp.get("error", {}).get("code") == RESOURCE_NOT_FOUND, resp
    docs_peer.ping()


def test_prompt(docs_peer):
    prompts = docs_peer.call("prompts/list")["prompts"]
    assert [p["name"] for p in prompts] == ["search_keyword"]
    assert prompts[0]["arguments"] == [{"name": "keyword", "description": "The word to search for.", "required": True}]
    got = docs_peer.call("prompts/get", {"name": "search_keyword", "arguments": {"keyword": "roots"}})
    [msg] = got["messages"]
    assert msg["role"] == "user" and msg["content"]["type"] == "text"
    assert "'roots'" in msg["content"]["text"] and "key_word_search" in msg["content"]["text"]
    assert docs_peer.request("prompts/get", {"name": "search_keyword", "arguments": {}})["error"]["code"] == -32602


def test_tool_definition(docs_peer):
    [tool] = docs_peer.call("tools/list")["tools"]
    assert tool["name"] == "key_word_search"
    assert tool["inputSchema"]["required"] == ["keyword"]
    assert set(tool["inputSchema"]["properties"]) == {"keyword", "root_directory"}


# ---------------------------------------------------------------------------- trace
def test_mcpio_trace_records_the_roots_conversation(tree, tmp_path, wire_validator):
    trace = tmp_path / "workshop-trace.log"
    with start_with_roots("2025-11-25", tree["one"], env={"MCPIO_TRACE": str(trace)}) as p:
        assert counts(search(p, "keyword")) == ONE_COUNTS
        assert p.close() == 0
    assert p.stdout_garbage == []
    entries = []
    for line in trace.read_text().splitlines():
        m = re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (in|out) (\{.*\})$", line)
        assert m, line
        entries.append((m.group(1), json.loads(m.group(2))))
    outs = [msg for d, msg in entries if d == "out"]
    assert outs == p.received
    flow = [(d, msg.get("method") or ("result" if "result" in msg else "error")) for d, msg in entries]
    i = flow.index(("in", "notifications/initialized"))
    j = flow.index(("out", "roots/list"))
    assert i < j and flow[j + 1 :].count(("in", "result")) == 1  # and the client's answer came back in
    assert flow[0] == ("in", "initialize") and flow[1] == ("out", "result")
