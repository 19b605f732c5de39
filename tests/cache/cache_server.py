"""The server the client-cache tests talk to (stdio and ``mcpio run -t http``).

It counts every request it serves, by method (a middleware), and says so through the ``hits``
tool: the tests observe on the server's side whether a request reached it. ``CACHE_TTL_MS``
sets the lists' ``ttlMs`` (2026-07-28); lists are ``public``, ``secret://mine`` is ``private``
and answers who is asking (the token's subject over HTTP, ``$WHO`` over stdio)."""

import os

from mcpio import Context, Server

server = Server("cache-demo", "1.0.0", cache_ttl_ms=int(os.environ.get("CACHE_TTL_MS", "60000")), cache_scope="public")
hits: dict[str, int] = {}
versions: dict[str, int] = {}


@server.middleware
async def count(request, call_next):
    key = request.method if request.method != "resources/read" else f"read {request.params.get('uri')}"
    hits[key] = hits.get(key, 0) + 1
    return await call_next(request)


@server.tool
def get_hits() -> dict:
    """How many requests of each method this server has served."""
    return dict(hits)


@server.tool
def add_tool(name: str) -> str:
    """Register a tool (the server sends notifications/tools/list_changed)."""
    server.add_tool(lambda: name, name=name)
    return name


@server.tool
async def touch(uri: str) -> int:
    """Change a note (the server sends notifications/resources/updated for it)."""
    versions[uri] = versions.get(uri, 0) + 1
    await server.notify_resource_updated(uri)
    return versions[uri]


@server.resource("note://{name}", ttl_ms=60000, cache_scope="public")
def note(name: str) -> str:
    uri = f"note://{name}"
    return f"{name} v{versions.get(uri, 0)} read #{hits.get('read ' + uri, 0)}"


@server.resource("short://{name}", ttl_ms=int(os.environ.get("SHORT_TTL_MS", "1000")), cache_scope="public")
def short(name: str) -> str:
    return f"{name} read #{hits.get('read short://' + name, 0)}"


@server.resource("secret://mine", ttl_ms=60000, cache_scope="private")
def secret(ctx: Context) -> str:
    auth = ctx.auth
    return f"the secret of {auth.subject if auth is not None else os.environ.get('WHO', 'nobody')}"


@server.prompt
def greet(name: str) -> str:
    return f"Hello, {name}!"


if os.environ.get("EXTRA_TOOL"):
    server.add_tool(lambda: "extra", name=os.environ["EXTRA_TOOL"])

if __name__ == "__main__":
    server.run()
