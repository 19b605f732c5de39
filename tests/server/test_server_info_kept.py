"""serverInfo is made once per version and kept until a field it is made of is set (issue 17)."""

from __future__ import annotations

from mcpio import Server
from mcpio._versions import META_SERVER_INFO, RULES

MODERN = RULES["2026-07-28"]
LEGACY = RULES["2025-06-18"]


def test_kept_per_version_and_made_again_when_a_field_is_set() -> None:
    server = Server("s", "1.0", title="T", description="D", website_url="https://x.example", icons=[{"src": "a"}])
    info = server.server_info(MODERN)
    described = {"description": "D"} if MODERN.implementation_description else {}
    assert info == {
        "name": "s",
        "version": "1.0",
        "title": "T",
        **described,
        "websiteUrl": "https://x.example",
        "icons": [{"src": "a"}],
    }
    assert server.server_info(MODERN) is info  # kept
    assert server.server_info(LEGACY) == {"name": "s", "version": "1.0", "title": "T"}  # per version
    for field, value, key, shown in (
        ("name", "s2", "name", "s2"),
        ("version", "2.0", "version", "2.0"),
        ("title", "T2", "title", "T2"),
        ("website_url", "https://y.example", "websiteUrl", "https://y.example"),
        ("icons", [{"src": "b"}], "icons", [{"src": "b"}]),
    ):
        setattr(server, field, value)
        assert server.server_info(MODERN)[key] == shown, field
        assert server.decorate({}, MODERN, "tools/call")["_meta"][META_SERVER_INFO][key] == shown, field
    server.implementation_description = True  # not a field of serverInfo: kept as it is
    assert server.server_info(MODERN) is server.server_info(MODERN)
    server.description = "D3"
    assert server.server_info(RULES["2025-11-25"])["description"] == "D3"
    server.title = None
    assert "title" not in server.server_info(MODERN)
    server.icons.append({"src": "c"})  # a list changed in place shows, as it always did
    assert server.server_info(MODERN)["icons"] == [{"src": "b"}, {"src": "c"}]


def test_decorate_carries_the_same_info_as_server_info() -> None:
    server = Server("s", "1.0")
    out = server.decorate({"content": [], "_meta": {"k": 1}}, MODERN, "tools/call")
    assert out["_meta"] == {META_SERVER_INFO: {"name": "s", "version": "1.0"}, "k": 1}
    assert out["resultType"] == "complete"


def test_a_result_without_meta_gets_the_kept_meta_one_with_meta_a_new_one() -> None:
    server = Server("s", "1.0")
    first = server.decorate({"content": []}, MODERN, "tools/call")["_meta"]
    second = server.decorate({"content": []}, MODERN, "tools/call")["_meta"]
    assert first is second and first == {META_SERVER_INFO: {"name": "s", "version": "1.0"}}
    own = server.decorate({"content": [], "_meta": {"k": 1}}, MODERN, "tools/call")["_meta"]
    assert own is not first and own == {META_SERVER_INFO: {"name": "s", "version": "1.0"}, "k": 1}
    assert first == {META_SERVER_INFO: {"name": "s", "version": "1.0"}}  # unchanged by the other
    server.version = "2.0"
    after = server.decorate({"content": []}, MODERN, "tools/call")["_meta"]
    assert after == {META_SERVER_INFO: {"name": "s", "version": "2.0"}}
    assert first == {META_SERVER_INFO: {"name": "s", "version": "1.0"}}  # an earlier answer's, as it was
