"""What a generated tool sends and answers, against a real ASGI app that echoes each request
(served in-process through httpx's ASGI transport, and by uvicorn on 127.0.0.1 for timeouts):
parameter styles, escaping, bodies, credentials per security scheme (never the MCP client's), the
principal hook, resources from the route map, names, the result-size cap, and refused documents."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpio import Client, Server
from mcpio._openapi import OpenAPIError, env_name
from tests.support.http import ServerThread

RECEIVED: list[dict[str, Any]] = []  # each request echo() answered, as the API saw it (answers are redacted)


async def echo(request: Request) -> Response:
    if request.url.path.endswith("/slow"):
        await asyncio.sleep(5)
    if request.url.path.endswith("/big"):
        return Response("x" * 5000, media_type="text/plain")
    if request.url.path.endswith("/fail"):
        return JSONResponse({"error": "e" * 5000}, status_code=500)
    body = await request.body()
    RECEIVED.append(
        {
            "method": request.method,
            "path": request.scope["raw_path"].decode(),
            "query": request.scope["query_string"].decode(),
            "headers": {
                k: v
                for k, v in request.headers.items()
                if k in ("authorization", "x-key", "x-trace", "cookie", "content-type")
            },
            "body": body.decode("latin-1"),
        }
    )
    return JSONResponse(RECEIVED[-1])


ECHO = Starlette(routes=[Route("/{rest:path}", echo, methods=["GET", "POST", "PUT", "DELETE", "PATCH"])])
ANY = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}


def param(name: str, where: str, schema: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"name": name, "in": where, "schema": schema, **more}


DOC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Echo", "version": "2.0"},
    "servers": [{"url": "http://echo.test/api"}],
    "components": {
        "securitySchemes": {
            "token": {"type": "http", "scheme": "bearer"},
            "key": {"type": "apiKey", "in": "header", "name": "X-Key"},
            "basic": {"type": "http", "scheme": "basic"},
        },
        "schemas": {"Node": {"type": "object", "properties": {"child": {"$ref": "#/components/schemas/Node"}}}},
    },
    "security": [{"token": []}],
    "paths": {
        "/items/{id}": {
            "parameters": [param("id", "path", {"type": "string"})],
            "get": {
                "operationId": "get item",
                "parameters": [
                    param("tags", "query", {"type": "array", "items": {"type": "string"}}),
                    param("ids", "query", {"type": "array", "items": {"type": "integer"}}, explode=False),
                    param("pipe", "query", {"type": "array", "items": {"type": "string"}}, style="pipeDelimited"),
                    param("filter", "query", {"type": "object"}, style="deepObject"),
                    param("flag", "query", {"type": "boolean"}),
                    param("X-Trace", "header", {"type": "string"}),
                    param("session", "cookie", {"type": "string"}),
                    param("id", "query", {"type": "string"}),  # same name as the path parameter
                    param("Authorization", "header", {"type": "string"}),  # ignored (OAS)
                ],
                "responses": ANY,
            },
            "put": {
                "operationId": "putItem",
                "security": [{"key": [], "basic": []}],
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}},
                },
                "responses": ANY,
            },
        },
        "/forms": {
            "post": {
                "operationId": "sendForm",
                "security": [],
                "requestBody": {
                    "content": {
                        "application/x-www-form-urlencoded": {
                            "schema": {
                                "type": "object",
                                "properties": {"a": {"type": "string"}, "n": {"type": "integer"}},
                            }
                        }
                    }
                },
                "responses": ANY,
            }
        },
        "/list": {
            "post": {
                "operationId": "sendList",
                "requestBody": {
                    "content": {"application/json": {"schema": {"type": "array", "items": {"type": "integer"}}}}
                },
                "responses": ANY,
            }
        },
        "/text": {
            "post": {"operationId": "sendText", "requestBody": {"content": {"text/plain": {}}}, "responses": ANY}
        },
        "/raw": {
            "post": {
                "operationId": "sendRaw",
                "requestBody": {"content": {"application/octet-stream": {}}},
                "responses": ANY,
            }
        },
        "/ext": {"get": {"operationId": "external", "parameters": [{"$ref": "other.yaml#/p"}], "responses": ANY}},
        "/big": {"get": {"operationId": "big", "responses": {"200": {"description": "text"}}}},
        "/fail": {"get": {"operationId": "fail", "responses": ANY}},
        "/slow": {"get": {"operationId": "slow", "responses": ANY}},
        "/users/{user_id}": {
            "get": {
                "operationId": "getUser",
                "summary": "A user",
                "parameters": [
                    param("user_id", "path", {"type": "integer"}),
                    param("fields", "query", {"type": "string"}),
                ],
                "responses": ANY,
            }
        },
    },
}


def asgi_client() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=ECHO))


def call(server: Server, tool: str, arguments: dict[str, Any], **client: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with Client(server, **client) as c:
            return await c.call_tool(tool, arguments)

    return asyncio.run(go())


def echoed(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), result
    return result["structuredContent"]


def test_parameters_are_written_per_style_and_escaped():
    server = Server.from_openapi(DOC, client=asgi_client(), secrets={"token": "t0k"})
    got = echoed(
        call(
            server,
            "get_item",
            {
                "id__path": "a/b c",
                "id__query": "q",
                "tags": ["x", "y z"],
                "ids": [1, 2],
                "pipe": ["p", "q"],
                "filter": {"color": "red"},
                "flag": True,
                "X-Trace": "tr",
                "session": "s 1",
            },
        )
    )
    assert got["path"] == "/api/items/a%2Fb%20c"  # one segment, whatever the value holds
    assert got["query"].split("&") == [
        "tags=x", "tags=y+z", "ids=1%2C2", "pipe=p%7Cq", "filter%5Bcolor%5D=red", "flag=true", "id=q"
    ]  # fmt: skip
    assert got["headers"]["x-trace"] == "tr" and got["headers"]["cookie"] == "session=s%201"
    assert RECEIVED[-1]["headers"]["authorization"] == "Bearer t0k"  # the document's security, from secrets=


def test_object_values_in_path_and_header_styles_follow_the_openapi_examples():
    """OAS 3.1 §4.8.12.4 style examples for ``{"role": "admin", "firstName": "Alex"}``: an exploded
    object was sent ``;color=role%3Dadmin,firstName%3DAlex`` (matrix), ``.role%3Dadmin…`` (label),
    ``role%3Dadmin,…`` (simple), and as JSON in a header."""
    obj_ = {"type": "object"}
    paths = {
        f"/{style}{'/x' if explode else ''}/{{color}}": {
            "get": {
                "operationId": f"{style}{'_x' if explode else ''}",
                "parameters": [
                    param("color", "path", obj_, style=style, explode=explode),
                    param("X-Trace", "header", obj_, explode=explode),
                ],
                "responses": ANY,
            }
        }
        for style in ("simple", "label", "matrix")
        for explode in (False, True)
    }
    server = Server.from_openapi({**DOC, "paths": paths}, client=asgi_client())
    value = {"role": "admin", "firstName": "Alex"}

    async def go() -> dict[str, tuple[str, str]]:
        async with Client(server) as c:
            sent = {}
            for tool in ("simple", "simple_x", "label", "label_x", "matrix", "matrix_x"):
                got = echoed(await c.call_tool(tool, {"color": value, "X-Trace": value}))
                sent[tool] = (got["path"].rsplit("/", 1)[1], got["headers"]["x-trace"])
            return sent

    assert asyncio.run(go()) == {
        "simple": ("role,admin,firstName,Alex", "role,admin,firstName,Alex"),
        "simple_x": ("role=admin,firstName=Alex", "role=admin,firstName=Alex"),
        "label": (".role,admin,firstName,Alex", "role,admin,firstName,Alex"),
        "label_x": (".role=admin.firstName=Alex", "role=admin,firstName=Alex"),
        "matrix": (";color=role,admin,firstName,Alex", "role,admin,firstName,Alex"),
        "matrix_x": (";role=admin;firstName=Alex", "role=admin,firstName=Alex"),
    }


def test_parameters_described_by_content_are_sent_as_json():
    """A parameter with ``content: {application/json: …}`` instead of a schema is its JSON text in
    any location: a query object went out as form-exploded ``a=1``, a path one as ``a,1``, and a
    string as itself (``abc``, not the JSON text ``"abc"``: OAS 3.1 §4.8.12.2)."""
    json_object = {"content": {"application/json": {"schema": {"type": "object"}}}}
    json_string = {"content": {"application/json": {"schema": {"type": "string"}}}}
    doc = {
        **DOC,
        "paths": {
            "/find/{where}": {
                "get": {
                    "operationId": "find",
                    "parameters": [
                        {"name": "where", "in": "path", "required": True, **json_object},
                        {"name": "filter", "in": "query", **json_object},
                        {"name": "X-Trace", "in": "header", **json_object},
                        {"name": "name", "in": "query", **json_string},
                    ],
                    "responses": ANY,
                }
            }
        },
    }
    server = Server.from_openapi(doc, client=asgi_client())
    value = {"a": 1}
    got = echoed(call(server, "find", {"where": value, "filter": value, "X-Trace": value, "name": "abc"}))
    assert got["path"] == "/api/find/%7B%22a%22%3A1%7D"
    assert got["query"] == "filter=%7B%22a%22%3A1%7D&name=%22abc%22" and got["headers"]["x-trace"] == '{"a":1}'


def test_bodies_json_form_text_and_wrapped_arrays():
    server = Server.from_openapi(DOC, client=asgi_client())
    put = echoed(call(server, "putItem", {"id": "1", "child": {"child": {}}}))  # a recursive $ref, flattened
    assert put["method"] == "PUT" and json.loads(put["body"]) == {"child": {"child": {}}}
    form = echoed(call(server, "sendForm", {"a": "x y", "n": 3}))
    assert form["body"] == "a=x+y&n=3" and form["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert json.loads(echoed(call(server, "sendList", {"body": [1, 2]}))["body"]) == [1, 2]  # not an object: "body"
    text = echoed(call(server, "sendText", {"body": "héllo"}))
    assert text["body"] == "héllo".encode().decode("latin-1") and text["headers"]["content-type"] == "text/plain"


def test_a_parameter_named_body_and_the_body_are_two_arguments():
    """A query parameter named ``body`` and a JSON array body were one argument: the body went
    out as ``?body=…`` too, and the parameter could not be given apart from it."""
    doc = {
        **DOC,
        "paths": {
            "/list": {
                "post": {
                    "operationId": "sendList",
                    "parameters": [param("body", "query", {"type": "string"})],
                    "requestBody": {
                        "content": {"application/json": {"schema": {"type": "array", "items": {"type": "integer"}}}}
                    },
                    "responses": ANY,
                }
            }
        },
    }
    server = Server.from_openapi(doc, client=asgi_client())
    got = echoed(call(server, "sendList", {"body__query": "q", "body": [1, 2]}))
    assert got["query"] == "body=q" and json.loads(got["body"]) == [1, 2]


def test_the_schemas_tools_list_shows():
    server = Server.from_openapi(DOC, client=asgi_client())

    async def go() -> dict[str, Any]:
        async with Client(server) as c:
            return {t["name"]: t for t in await c.list_tools()}

    tools = asyncio.run(go())
    assert "sendRaw" not in tools and "external" not in tools  # skipped, with their reasons logged
    put = tools["putItem"]["inputSchema"]
    assert put["properties"]["child"] == {"$ref": "#/$defs/Node"}
    assert put["$defs"]["Node"]["properties"]["child"] == {"$ref": "#/$defs/Node"}  # the cycle kept as $defs
    assert tools["putItem"]["annotations"]["idempotentHint"] is True
    assert "Authorization" not in tools["get_item"]["inputSchema"]["properties"]


def tools_of(doc: dict[str, Any], **options: Any) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        async with Client(Server.from_openapi(doc, base_url="http://x", **options)) as c:
            return {t["name"]: t for t in await c.list_tools()}

    return asyncio.run(go())


def test_a_schema_that_cannot_be_converted_skips_every_operation_using_it():
    """A referenced schema that failed half-way (a reference into another document inside it)
    stayed cached as ``{}``: the first operation using it was skipped, every later one got an
    accept-anything argument instead."""
    half = {"$ref": "#/components/schemas/Half"}
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Refs", "version": "1"},
        "components": {
            "schemas": {"Half": {"type": "object", "properties": {"ok": half, "bad": {"$ref": "other.yaml#/Bad"}}}}
        },
        "paths": {
            "/one": {"get": {"operationId": "one", "parameters": [param("h", "query", half)], "responses": ANY}},
            "/two": {"get": {"operationId": "two", "parameters": [param("h", "query", half)], "responses": ANY}},
            "/fine": {"get": {"operationId": "fine", "responses": ANY}},
        },
    }
    assert set(tools_of(doc)) == {"fine"}


def test_tuple_items_become_prefix_items():
    """The tuple form of ``items`` (a list, before JSON Schema 2020-12) was copied as it was: not
    2020-12, and its ``$ref``s pointed into ``#/components`` that the tool's schema does not carry."""
    pair = {
        "type": "array",
        "items": [{"$ref": "#/components/schemas/Point"}, {"type": "string"}],
        "additionalItems": False,
    }
    doc = {
        "openapi": "3.0.3",
        "info": {"title": "Tuples", "version": "1"},
        "components": {"schemas": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}}},
        "paths": {
            "/pair": {"get": {"operationId": "pair", "parameters": [param("p", "query", pair)], "responses": ANY}}
        },
    }
    schema = tools_of(doc)["pair"]["inputSchema"]
    assert schema["properties"]["p"] == {
        "type": "array",
        "prefixItems": [{"$ref": "#/$defs/Point"}, {"type": "string"}],
        "items": False,
    }
    assert schema["$defs"] == {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}}


def test_credentials_come_from_the_environment_by_scheme_never_from_the_mcp_client(monkeypatch: Any):
    monkeypatch.setenv(env_name("key"), "k-1")
    monkeypatch.setenv(env_name("basic"), "ada:pw")
    monkeypatch.setenv(env_name("token"), "api-token")
    assert env_name("key") == "MCPIO_OPENAPI_KEY"
    server = Server.from_openapi(DOC, client=asgi_client())
    put = echoed(call(server, "putItem", {"id": "1"}))
    assert (
        RECEIVED[-1]["headers"]["authorization"] == "Basic YWRhOnB3" and put["headers"]["authorization"] == "[redacted]"
    )
    assert put["headers"]["x-key"] == "k-1"  # shorter than any credential: not redacted (docs/guides/openapi.md)
    form = echoed(call(server, "sendForm", {"a": "1"}))  # security: [] -> nothing sent
    assert "authorization" not in form["headers"] and "x-key" not in form["headers"]


def test_the_principal_hook_maps_the_caller_to_api_credentials():
    seen: list[Any] = []

    async def credentials(ctx: Any) -> dict[str, str]:
        seen.append(ctx)
        return {"Authorization": "Bearer for-this-caller"}

    server = Server.from_openapi(DOC, client=asgi_client(), credentials=credentials)
    got = echoed(call(server, "getUser", {"user_id": 7}))
    assert RECEIVED[-1]["headers"]["authorization"] == "Bearer for-this-caller" and seen[0].auth is None  # no auth here
    assert got["headers"]["authorization"] == "[redacted]"


def test_errors_caps_and_timeouts():
    fail = call(Server.from_openapi(DOC, client=asgi_client()), "fail", {})
    text = fail["content"][0]["text"]
    assert fail["isError"] is True and text.startswith("GET /fail failed: HTTP 500 Internal Server Error\n")
    assert text.endswith("(3,012 more characters)")  # the API's body, cut
    big = call(Server.from_openapi(DOC, client=asgi_client(), max_result_bytes=1000), "big", {})  # the server's cap
    assert "truncated" in big["content"][-1]["text"] and len(big["content"][0]["text"].encode()) <= 1000
    small = Server.from_openapi(DOC, client=asgi_client(), max_response_bytes=100)
    over = call(small, "big", {})
    assert over["isError"] is True and "over 100 bytes" in over["content"][0]["text"]
    missing = call(Server.from_openapi(DOC, client=asgi_client()), "getUser", {})
    assert missing["isError"] is True and "user_id" in missing["content"][0]["text"]
    with ServerThread(ECHO) as srv:
        slow = call(Server.from_openapi(DOC, base_url=srv.base, timeout=0.3), "slow", {})
        assert slow["isError"] is True and "did not answer within the timeout (0.3 s)" in slow["content"][0]["text"]
    down = call(Server.from_openapi(DOC, base_url="http://127.0.0.1:9"), "big", {})
    assert down["isError"] is True and "cannot reach the API at http://127.0.0.1:9/" in down["content"][0]["text"]


def test_output_schemas_can_be_left_out():
    server = Server.from_openapi(DOC, client=asgi_client(), output_schemas=False)
    result = call(server, "getUser", {"user_id": 1})
    assert "structuredContent" not in result and json.loads(result["content"][0]["text"])["path"] == "/api/users/1"

    async def go() -> list[dict[str, Any]]:
        async with Client(server) as c:
            return await c.list_tools()

    assert not any("outputSchema" in t for t in asyncio.run(go()))


def test_route_map_makes_resource_templates_and_names_rename():
    server = Server.from_openapi(
        DOC,
        client=asgi_client(),
        route_map={"getUser": "resource", "POST": "skip"},
        names={"get item": "fetch_item", "PUT /items/{id}": "replace_item"},
    )

    async def go() -> None:
        async with Client(server) as c:
            names = {t["name"] for t in await c.list_tools()}
            assert names == {"fetch_item", "replace_item", "big", "fail", "slow"}
            templates = await c.list_resource_templates()
            assert [t["uriTemplate"] for t in templates] == ["http://echo.test/api/users/{user_id}{?fields}"]
            read = await c.read_resource("http://echo.test/api/users/42?fields=name")
            got = json.loads(read[0]["text"])
            assert got["path"] == "/api/users/42" and got["query"] == "fields=name"
            assert read[0]["mimeType"] == "application/json"

    asyncio.run(go())
    with pytest.raises(OpenAPIError, match="only GET operations can be resources"):
        Server.from_openapi(DOC, route_map={"putItem": "resource"})


async def logo(request: Request) -> Response:
    return Response(b"\x89PNG\r\n\x1a\n" + request.path_params["size"].encode(), media_type="image/png")


def test_a_resource_whose_api_answers_an_image_reads_as_its_bytes():
    """A resource (route_map) answered by an image read as the empty text: its contents are the
    image's bytes now, a blob of the API's media type."""
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Logos", "version": "1"},
        "paths": {
            "/logo/{size}": {
                "get": {
                    "operationId": "logo",
                    "parameters": [param("size", "path", {"type": "string"})],
                    "responses": {"200": {"description": "a PNG", "content": {"image/png": {}}}},
                }
            }
        },
    }
    with ServerThread(Starlette(routes=[Route("/logo/{size}", logo)])) as api:
        server = Server.from_openapi(doc, base_url=api.base, route_map={"logo": "resource"})

        async def go() -> list[Any]:
            async with Client(server) as c:
                return await c.read_resource(f"{api.base}/logo/64")

        (read,) = asyncio.run(go())
    assert read == {"uri": f"{api.base}/logo/64", "mimeType": "image/png", "blob": "iVBORw0KGgo2NA=="}


def test_names_that_are_not_tool_names_are_refused_naming_the_entry():
    """A ``names=`` value outside the tool-name rule ended in registration's ValueError, whose
    advice ("pass name=…") is for a decorated function, not for ``names=``."""
    with pytest.raises(OpenAPIError) as info:
        Server.from_openapi(DOC, names={"getUser": "my tool!"})
    assert str(info.value) == (
        "names= renames 'getUser' to 'my tool!': the name must be 1-64 characters of A-Z a-z 0-9 _ . / -"
    )


def test_documents_refused_with_what_to_do(tmp_path: Any):
    with pytest.raises(OpenAPIError, match=r"Swagger 2\.0 document; mcpio reads OpenAPI 3\.0 and 3\.1"):
        Server.from_openapi({"swagger": "2.0", "paths": {}})
    with pytest.raises(OpenAPIError, match="openapi field is '4.0'"):
        Server.from_openapi({"openapi": "4.0", "paths": {}})
    with pytest.raises(OpenAPIError, match="pass base_url="):
        Server.from_openapi({**DOC, "servers": [{"url": "/v1"}]})
    assert Server.from_openapi({**DOC, "servers": [{"url": "/v1"}]}, base_url="http://x").name == "Echo"
    yaml_doc = tmp_path / "api.yaml"
    yaml_doc.write_text(
        "openapi: 3.1.0\ninfo: {title: Y, version: 2024-01-01}\npaths:\n  /a:\n    get:\n      operationId: a\n      responses: {200: {description: ok}}\n"
    )
    server = Server.from_openapi(str(yaml_doc), base_url="http://x")
    assert server.version == "2024-01-01" and "a" in server.registry.tools  # a date stays a string


def test_yaml_needs_pyyaml_and_says_so(tmp_path: Any):
    """Without PyYAML a JSON document still loads; a YAML one says what to install."""
    (tmp_path / "yaml.py").write_text("raise ImportError('no yaml here')\n")
    doc = tmp_path / "api.yaml"
    doc.write_text("openapi: 3.1.0\npaths: {}\n")
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from mcpio import Server\n"
        "from mcpio._openapi import OpenAPIError\n"
        "print(Server.from_openapi(sys.argv[2], base_url='http://x').name)\n"
        "try: Server.from_openapi(sys.argv[3])\n"
        "except OpenAPIError as e: print(e)\n"
    )
    jdoc = tmp_path / "api.json"
    jdoc.write_text(json.dumps({"openapi": "3.0.0", "info": {"title": "J", "version": "1"}, "paths": {}}))
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), str(jdoc), str(doc)],
        capture_output=True, text=True, timeout=60, env={**os.environ},
    )  # fmt: skip
    assert out.stdout.splitlines() == [
        "J",
        f"{doc}: reading a YAML document needs PyYAML: pip install 'mcpio[openapi]'",
    ]


def test_import_mcpio_does_not_load_openapi():
    out = subprocess.run(
        [sys.executable, "-c", "import sys, mcpio; mcpio.Server('x'); print(sorted(m for m in sys.modules if 'openapi' in m or m == 'yaml'))"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.stdout.strip() == "[]"
