"""No configured credential reaches the model whatever spelling the API echoes it in: an API on
127.0.0.1 (uvicorn) that answers its request percent-encoded or JSON-escaped the way real servers
and encoders do, called through :class:`mcpio.Client`."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import quote, unquote

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mcpio import Client, Server
from tests.openapi.test_requests import ANY
from tests.support.http import ServerThread

QUERY_KEY = "q/secret+key=&<x>"  # characters that encoders escape
HEADER_KEY = "h-secret/value 1&2"
TEXT = {"200": {"description": "ok", "content": {"text/plain": {"schema": {"type": "string"}}}}}


def _hex_lower(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), text)


def _hex_mixed(text: str) -> str:
    return re.sub(r"%([0-9A-F])([0-9A-F])", lambda m: f"%{m[1].lower()}{m[2]}", text)


def _go_json(value: Any) -> str:
    """Go's encoding/json: ``<``, ``>`` and ``&`` as ``\\u003c``, ``\\u003e``, ``\\u0026``."""
    text = json.dumps(value)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _escape_all_json(value: dict[str, str]) -> str:
    """An encoder that escapes every character but letters and digits, upper-case hex."""

    def string(s: str) -> str:
        return '"' + "".join(c if c.isalnum() else f"\\u{ord(c):04X}" for c in s) + '"'

    return "{" + ",".join(f"{string(k)}:{string(v)}" for k, v in value.items()) + "}"


async def spell(request: Request) -> Response:
    """Echo the query (as it arrived, percent-encoded) and the X-Key header in one spelling."""
    kind, query, key = request.url.path.strip("/"), request.url.query, request.headers["x-key"]
    if kind == "lower":  # the URL re-encoded by a framework that writes lower-case hex
        return Response(f"no page for ?{_hex_lower(query)} (key {_hex_lower(quote(key, safe=''))})", 404)
    if kind == "mixed":
        return Response(f"you asked ?{_hex_mixed(query)} with {_hex_mixed(quote(key, safe=''))}", 200)
    said = {"query": unquote(query), "key": key}
    if kind == "go":
        return Response(_go_json(said), 200, media_type="application/json")
    return Response(_escape_all_json(said), 400, media_type="application/json")  # "all"


def _results(paths: dict[str, Any], key: str = QUERY_KEY) -> list[dict[str, Any]]:
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Spell", "version": "1"},
        "components": {"securitySchemes": {"qkey": {"type": "apiKey", "in": "query", "name": "key"}}},
        "security": [{"qkey": []}],
        "paths": {p: {"get": {"operationId": p[1:], "responses": r}} for p, r in paths.items()},
    }
    with ServerThread(Starlette(routes=[Route("/{rest:path}", spell)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, secrets={"qkey": key}, headers={"X-Key": HEADER_KEY})

        async def go() -> list[dict[str, Any]]:
            async with Client(server) as c:
                return [await c.call_tool(p[1:], {}) for p in paths]

        return asyncio.run(go())


def _leaks(results: list[dict[str, Any]]) -> list[str]:
    """The credentials (or a telling part of one) that ``results`` still show, in any spelling."""
    texts = [c.get("text", "") for r in results for c in r["content"]]
    texts += [json.dumps(r.get("structuredContent"), ensure_ascii=False) for r in results]
    unescaped = [re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), t) for t in texts]
    seen = " ".join(texts + unescaped + [unquote(t) for t in texts + unescaped])
    return [s for s in (QUERY_KEY, HEADER_KEY, "secret+key", "secret/value") if s in seen]


def test_a_percent_encoded_echo_is_redacted_whatever_the_case_of_its_hex_digits():
    """Only Python's upper-case ``%2F`` was redacted: a server writing ``%2f`` (or mixing cases)
    put the query key and the ``headers=`` key in the model's context."""
    lower, mixed = _results({"/lower": TEXT, "/mixed": TEXT})
    assert lower["isError"] is True and lower["content"][0]["text"].startswith("GET /lower failed: HTTP 404")
    assert "key=[redacted]" in lower["content"][0]["text"], lower
    assert mixed["content"][0]["text"] == "you asked ?key=[redacted] with [redacted]"
    assert _leaks([lower, mixed]) == []


def test_a_json_echo_is_redacted_whatever_characters_its_encoder_escapes():
    """A JSON answer escaping ``&``, ``<``, ``>`` as ``\\u0026``… (Go's encoding/json), or every
    character but letters and digits, kept the credentials: only Python's json.dumps spelling was
    redacted. Structured content is parsed from the redacted text."""
    go, escaped = _results({"/go": ANY, "/all": ANY})
    assert go["structuredContent"] == {"query": "key=[redacted]", "key": "[redacted]"}
    assert escaped["isError"] is True and escaped["content"][0]["text"].startswith("GET /all failed: HTTP 400")
    assert json.loads(escaped["content"][0]["text"].split("\n", 1)[1]) == {
        "query": "key=[redacted]",
        "key": "[redacted]",
    }
    assert _leaks([go, escaped]) == []


NUMERIC_KEY = "20261201"  # a key of digits: an API may echo it as a JSON number
TOKEN = "tok_live_4f1c9a"


async def account(request: Request) -> Response:
    """A "who am I" answer: the caller's account (its numeric key) and token, as the API has them."""
    return Response(f'{{"account": {request.headers["x-account"]}, "token": "{TOKEN}"}}', media_type="application/json")


def test_a_redaction_inside_json_syntax_still_answers_the_documented_structure():
    """A credential echoed as a JSON number (or next to a string's quote) was redacted in the
    text, which then was no JSON: a tool with an output schema answered isError ("not the JSON its
    OpenAPI document describes") though the API answered as documented. Now the answer's values are
    redacted one by one: the number becomes the string "[redacted]", and a value an output schema
    constrains (``pattern``, ``enum``) is "[redacted]" too: the tool answers, not isError."""
    schema = {
        "type": "object",
        "properties": {"account": {"type": "integer"}, "token": {"type": "string", "pattern": "^tok_[a-z0-9_]+$"}},
    }
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Me", "version": "1"},
        "components": {"securitySchemes": {"acct": {"type": "apiKey", "in": "header", "name": "X-Account"}}},
        "security": [{"acct": []}],
        "paths": {"/me": {"get": {"operationId": "me", "responses": ok}}},
    }
    with ServerThread(Starlette(routes=[Route("/me", account)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, secrets={"acct": NUMERIC_KEY}, headers={"X-T": TOKEN})

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("me", {})

        me = asyncio.run(go())
    assert "isError" not in me, me
    assert me["structuredContent"] == {"account": "[redacted]", "token": "[redacted]"}
    assert json.loads(me["content"][0]["text"]) == me["structuredContent"]


class _Reasoning(BaseHTTPRequestHandler):
    """A server that says why in its status line (as servlet containers' sendError once did)."""

    def do_GET(self) -> None:
        self.send_response(404, f"No route for {self.path}")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def test_the_reason_phrase_of_the_status_line_is_redacted():
    """An error result quoted the status line's reason phrase as the API sent it: one that echoed
    the request's URL put the query key in the model's context."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Reason", "version": "1"},
        "components": {"securitySchemes": {"qkey": {"type": "apiKey", "in": "query", "name": "key"}}},
        "security": [{"qkey": []}],
        "paths": {"/gone": {"get": {"operationId": "gone", "responses": ANY}}},
    }
    api = ThreadingHTTPServer(("127.0.0.1", 0), _Reasoning)
    threading.Thread(target=api.serve_forever, daemon=True).start()
    try:
        server = Server.from_openapi(
            doc, base_url=f"http://127.0.0.1:{api.server_address[1]}", secrets={"qkey": QUERY_KEY}
        )

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("gone", {})

        gone = asyncio.run(go())
    finally:
        api.shutdown()
        api.server_close()
    assert gone["isError"] is True
    assert gone["content"][0]["text"] == "GET /gone failed: HTTP 404 No route for /gone?key=[redacted]\n"


async def badge(request: Request) -> Response:
    svg = f'<svg xmlns="http://www.w3.org/2000/svg"><text>{request.url.path}?{request.url.query}</text></svg>'
    return Response(svg, media_type="image/svg+xml")


def test_an_svg_image_is_redacted_like_any_text():
    """Image answers went out as they came, base64-encoded: an SVG is XML text, and one that drew
    the request's URL (a badge service) carried the query key to the model."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Badge", "version": "1"},
        "components": {"securitySchemes": {"qkey": {"type": "apiKey", "in": "query", "name": "key"}}},
        "security": [{"qkey": []}],
        "paths": {"/badge": {"get": {"operationId": "badge", "responses": {"200": {"description": "an SVG"}}}}},
    }
    with ServerThread(Starlette(routes=[Route("/badge", badge)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, secrets={"qkey": QUERY_KEY})

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("badge", {})

        drawn = asyncio.run(go())
    (image,) = drawn["content"]
    assert image["type"] == "image" and image["mimeType"] == "image/svg+xml"
    assert base64.b64decode(image["data"]).decode() == (
        '<svg xmlns="http://www.w3.org/2000/svg"><text>/badge?key=[redacted]</text></svg>'
    )


async def headers_seen(request: Request) -> Response:
    return Response(json.dumps({"key": request.headers["x-key"]}), media_type="application/json")


def test_a_non_ascii_header_value_echoed_as_latin_1_is_redacted():
    """A header value goes out as UTF-8 (RFC 9110 §5.5 obs-text), and ASGI and WSGI servers read
    header bytes as Latin-1: the echo of "pässwörd…" is "pÃ¤sswÃ¶rd…" (here JSON-escaped,
    "p\\u00c3\\u00a4ssw…"), a spelling that was not redacted."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Latin", "version": "1"},
        "paths": {"/seen": {"get": {"operationId": "seen", "responses": {"200": {"description": "ok"}}}}},
    }
    with ServerThread(Starlette(routes=[Route("/seen", headers_seen)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, headers={"X-Key": "pässwörd-geheim-€"})

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("seen", {})

        seen = asyncio.run(go())
    assert seen["content"][0]["text"] == '{"key":"[redacted]"}'


async def empty(request: Request) -> Response:
    return Response(b"", status_code=404, media_type="application/json")


def test_an_empty_json_error_answer_shows_no_body():
    """The answer is parsed once, before redaction: an empty error answer typed JSON must still
    show no body (not the JSON ``null`` of nothing parsed)."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Empty", "version": "1"},
        "paths": {"/none": {"get": {"operationId": "none", "responses": ANY}}},
    }
    with ServerThread(Starlette(routes=[Route("/none", empty)])) as api:
        server = Server.from_openapi(doc, base_url=api.base)

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("none", {})

        none = asyncio.run(go())
    assert none["isError"] is True and none["content"][0]["text"] == "GET /none failed: HTTP 404 Not Found\n"


async def formats(request: Request) -> Response:
    return Response(json.dumps({"formats": ["application/json", "text/csv"], "agent": request.headers["user-agent"]}))


def test_a_configured_header_that_is_no_credential_is_not_redacted():
    """Every ``headers=`` value was redacted: ``Accept: application/json`` blanked out
    "application/json" wherever an answer said it, and a ``User-Agent`` its own name. The headers
    HTTP defines for content negotiation and the client's name carry no credential."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Formats", "version": "1"},
        "paths": {"/formats": {"get": {"operationId": "formats", "responses": ANY}}},
    }
    headers = {"Accept": "application/json", "User-Agent": "acme-report-bot/2.1", "X-Key": HEADER_KEY}
    with ServerThread(Starlette(routes=[Route("/formats", formats)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, headers=headers)

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("formats", {})

        answered = asyncio.run(go())
    assert answered["structuredContent"] == {
        "formats": ["application/json", "text/csv"],
        "agent": "acme-report-bot/2.1",
    }


def test_the_http_clients_log_line_does_not_carry_the_query_credential(caplog: Any):
    """httpx logs each request at INFO, its URL whole ("HTTP Request: GET …?key=…"): an
    application logging at INFO (logging.basicConfig(level="INFO")) wrote the query key in its log."""
    with caplog.at_level("INFO", logger="httpx"):
        _results({"/mixed": TEXT})
    lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert any("HTTP Request: GET" in line and "/mixed?key=[redacted]" in line for line in lines), lines
    assert not any("secret" in line for line in lines), lines


def test_an_http_log_record_without_a_credential_is_left_as_it_was(caplog: Any):
    """Once a server had credentials, every httpx record was rewritten to its formatted text (no
    args), any client's: a log tool grouping records by their template (as error trackers do) saw
    one template per URL. Only a record that held a credential changes."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Formats", "version": "1"},
        "paths": {"/formats": {"get": {"operationId": "formats", "responses": ANY}}},
    }
    with caplog.at_level("INFO", logger="httpx"), ServerThread(Starlette(routes=[Route("/formats", formats)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, headers={"X-Key": HEADER_KEY})

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("formats", {})

        asyncio.run(go())
    (record,) = [r for r in caplog.records if r.name == "httpx"]
    assert record.msg == 'HTTP Request: %s %s "%s %d %s"' and record.args, (record.msg, record.args)


async def to_login(request: Request) -> Response:
    """A redirect to a login page that comes back to the URL asked for, encoded into ``next``."""
    back = quote(f"{request.url.path}?{request.url.query}", safe="")
    return Response(status_code=302, headers={"Location": f"/login?next={back}"})


def test_a_url_percent_encoded_twice_is_redacted():
    """A URL inside another URL's query (a redirect's ``next=``) is percent-encoded twice: the
    query key's "/" is "%252F" there, a spelling that was not redacted."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Login", "version": "1"},
        "components": {"securitySchemes": {"qkey": {"type": "apiKey", "in": "query", "name": "key"}}},
        "security": [{"qkey": []}],
        "paths": {"/private": {"get": {"operationId": "private", "responses": ANY}}},
    }
    with ServerThread(Starlette(routes=[Route("/private", to_login)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, secrets={"qkey": QUERY_KEY})

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("private", {})

        moved = asyncio.run(go())
    assert moved["isError"] is True
    assert moved["content"][0]["text"] == (
        "GET /private failed: HTTP 302 Found (Location: /login?next=%2Fprivate%3Fkey%3D[redacted])\n"
    )


META_KEY = "a.b*c(d)[e]{f}|g^$?\\+"  # every regex metacharacter, taken as itself
NEAR_MISS = "aXb*c(d)[e]{f}|g^$?\\+ ab*c(d)[e]{f}|g^$?\\+"  # what a pattern reading them would match


async def meta(request: Request) -> Response:
    return Response(f"{unquote(request.url.query)} | {request.url.query} | {NEAR_MISS}")


def test_a_value_of_regex_metacharacters_is_redacted_as_itself_and_nothing_else():
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Meta", "version": "1"},
        "components": {"securitySchemes": {"qkey": {"type": "apiKey", "in": "query", "name": "key"}}},
        "security": [{"qkey": []}],
        "paths": {"/meta": {"get": {"operationId": "meta", "responses": {"200": {"description": "text"}}}}},
    }
    with ServerThread(Starlette(routes=[Route("/meta", meta)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, secrets={"qkey": META_KEY})

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("meta", {})

        said = asyncio.run(go())
    assert said["content"][0]["text"] == f"key=[redacted] | key=[redacted] | {NEAR_MISS}"


async def cookies(request: Request) -> Response:
    return Response(json.dumps(request.cookies), media_type="application/json")


def test_each_value_of_a_configured_cookie_header_is_redacted():
    """A ``Cookie`` header in ``headers=`` was redacted as a whole ("theme=dark; session=…"): an
    API echoing the cookies it read (httpbin's /cookies) showed the session's value."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Cookies", "version": "1"},
        "paths": {"/cookies": {"get": {"operationId": "cookies", "responses": ANY}}},
    }
    with ServerThread(Starlette(routes=[Route("/cookies", cookies)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, headers={"Cookie": "theme=dark; session=s3ss10n-v4lue-9"})

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("cookies", {})

        read = asyncio.run(go())
    assert read["structuredContent"] == {"theme": "dark", "session": "[redacted]"}


def test_a_value_that_looks_percent_encoded_is_redacted_when_encoded_once():
    """A key holding "%40" (copied from a URL) goes out as "%2540": read as twice encoded "%40"
    and once encoded "%25" in one pattern, it was missed once "%252540" was matched too."""
    (mixed,) = _results({"/mixed": TEXT}, key="p%40ss/word-1")
    assert mixed["content"][0]["text"] == "you asked ?key=[redacted] with [redacted]"


async def said(request: Request) -> Response:
    return Response(
        json.dumps({"url": str(request.url), "headers": dict(request.headers)}), media_type="application/json"
    )


def test_the_credentials_of_a_client_of_ones_own_are_redacted():
    """``client=`` is documented for "your own client: its auth": its headers, query parameters
    and ``auth`` went out unknown to the redaction, and an echo showed them."""
    import httpx

    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Own", "version": "1"},
        "paths": {"/said": {"get": {"operationId": "said", "responses": ANY}}},
    }
    with ServerThread(Starlette(routes=[Route("/said", said)])) as api:
        client = httpx.AsyncClient(
            headers={"X-Api-Key": "client-header-key", "Accept": "application/json"},
            params={"api_key": "client-query-key"},
            auth=httpx.BasicAuth("ada", "client-pass-1"),
        )
        server = Server.from_openapi(doc, base_url=api.base, client=client)

        async def go() -> dict[str, Any]:
            async with client, Client(server) as c:
                return await c.call_tool("said", {})

        echoed = asyncio.run(go())
    headers = echoed["structuredContent"]["headers"]
    assert (headers["x-api-key"], headers["authorization"], headers["accept"]) == (
        "[redacted]",
        "[redacted]",
        "application/json",
    )
    assert echoed["structuredContent"]["url"].endswith("/said?api_key=[redacted]")
    assert "client-" not in json.dumps(echoed), echoed


async def python_echo(request: Request) -> Response:
    """The request as a Python service's debug answer shows it: the header's bytes and text as
    ``repr``/``ascii`` spell them, and the query key's bytes hex-escaped, every one or every other."""
    raw, key = dict(request.headers.raw)[b"x-key"], request.query_params["key"].encode()
    every = "".join(f"\\x{b:02x}" for b in key)
    mixed = "".join(f"\\x{b:02X}" if i % 2 else chr(b) for i, b in enumerate(key))
    return Response(f"header {raw!r} {raw.decode()!a}; key b'{every}' b'{mixed}'", 400)


def test_a_python_escaped_echo_is_redacted():
    """An API echoing a credential as a Python bytes or str literal (``b'p\\xc3\\xa4ss…'``,
    ``'p\\xe4ss…'``) or as escaped bytes (``\\x71\\x2f…``, mixed with plain characters) put it in
    the model's context: ``\\xHH`` was no spelling that redaction knew."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Python", "version": "1"},
        "components": {"securitySchemes": {"qkey": {"type": "apiKey", "in": "query", "name": "key"}}},
        "security": [{"qkey": []}],
        "paths": {"/debug": {"get": {"operationId": "debug", "responses": TEXT}}},
    }
    header_key = "pässwörd-geheim-€"
    with ServerThread(Starlette(routes=[Route("/debug", python_echo)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, secrets={"qkey": QUERY_KEY}, headers={"X-Key": header_key})

        async def go() -> dict[str, Any]:
            async with Client(server) as c:
                return await c.call_tool("debug", {})

        debug = asyncio.run(go())
    assert debug["isError"] is True
    assert debug["content"][0]["text"] == (
        "GET /debug failed: HTTP 400 Bad Request\nheader b'[redacted]' '[redacted]'; key b'[redacted]' b'[redacted]'"
    )
