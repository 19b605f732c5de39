"""A server whose tools, resource and prompt take dependencies (``mcpio.Depends``): each
provider writes what it does ("open db", "close db …") to the file named by $DEPS_LOG, so a
test sees cleanup from outside the process."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from typing import Annotated, Any, Literal

from mcpio import Context, Depends, Server, ToolError, deps


def note(line: str) -> None:
    path = os.environ.get("DEPS_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


@contextlib.asynccontextmanager
async def life(server: Server) -> Any:
    yield {"pool": "the pool"}


server = Server("deps", lifespan=life)


def settings() -> dict[str, Any]:
    note("settings")
    return {"dsn": "memory://"}


async def get_db(ctx: Context, cfg: dict[str, Any] = Depends(settings)) -> Any:
    note(f"open db {ctx.request_id}")
    try:
        yield f"db({cfg['dsn']})"
    except BaseException as exc:
        note(f"db saw {type(exc).__name__}")
        raise
    finally:
        note(f"close db {ctx.request_id}")


@contextlib.contextmanager
def get_cache() -> Any:
    note("open cache")
    try:
        yield "cache"
    finally:
        note("close cache")


async def ask_account(ctx: Context) -> str:
    answer = await ctx.elicit("Which account?", {"type": "object", "properties": {"account": {"type": "string"}}})
    if answer.get("action") != "accept":
        raise ToolError("no account chosen")
    return str(answer["content"]["account"])


@server.tool
def lookup(key: str, cfg: Annotated[dict[str, Any], Depends(settings)], db: str = Depends(get_db)) -> str:
    """A sync tool: settings runs once although both the tool and get_db ask for it."""
    return f"{key} from {db} ({cfg['dsn']})"


@server.tool
async def fail(db: Annotated[str, Depends(get_db)], cache: str = Depends(get_cache)) -> str:
    raise ToolError(f"failed with {db} and {cache}")


@server.tool
async def hang(ctx: Context, db: str = Depends(get_db)) -> str:
    note("hanging")
    await asyncio.Event().wait()
    return "never"


@server.tool
async def account(choice: str = Depends(ask_account)) -> str:
    return f"using {choice}"


@server.tool
def pool(value: dict[str, Any] = Depends(deps.lifespan)) -> str:
    return value["pool"]


@server.tool
def plain(a: int) -> int:
    return a + 1


@server.middleware
async def tag(request: Any, call_next: Any) -> Any:
    """Per-request state: the middleware fills ctx.state, the tool (through a provider) reads it."""
    if request.name == "http_info":  # middleware sees the same HTTP request as the handler
        http = request.context.http
        request.context.state["seen by middleware"] = http.headers.get("x-tenant") if http is not None else None
    if request.name == "tenant":
        state = request.context.state
        state["requests"] = state.get("requests", 0) + 1  # 1 unless a state outlived its request
        state["tenant"] = request.client.get("name", "?")
    return await call_next(request)


def tenant_of(ctx: Context) -> str:
    return f"{ctx.state['tenant']} (request {ctx.state['requests']})"


@server.tool
async def tenant(ctx: Context, who: str = Depends(tenant_of)) -> str:
    return f"{who}, state keys {sorted(ctx.state)}"


@dataclasses.dataclass
class Booking:
    name: str
    seats: int
    vip: bool = False


@server.tool
async def book(ctx: Context) -> str:
    """Typed elicitation: a dataclass form, then one choice."""
    booking = await ctx.elicit("Who and how many?", response_type=Booking, key="who")
    if booking.action != "accept":
        return f"not booked ({booking.action})"
    size = await ctx.elicit("Which room?", response_type=Literal["small", "large"], key="room")
    assert isinstance(booking.data, Booking)
    return f"{booking.data.seats} seats for {booking.data.name} (vip={booking.data.vip}) in the {size.data} room"


@server.tool
async def http_info(ctx: Context, http: Any = Depends(deps.http_request)) -> dict[str, Any]:
    """What ctx.http shows (None over stdio)."""
    if http is None:
        return {"http": None}
    assert http is ctx.http
    return {
        "method": http.method,
        "path": http.path,
        "query": dict(http.query),
        "tenant": http.headers.get("X-Tenant"),
        "authorization": http.headers.get("authorization"),
        "secret": http.secret_header("Authorization"),
        "client": http.client[0] if http.client else None,
        "middleware": ctx.state.get("seen by middleware"),
        "session": http.headers.get("Mcp-Session-Id"),  # a legacy session's credential
        "session_sent": http.secret_header("mcp-session-id") is not None,
        "printed": repr(http.headers),
    }


@server.tool(task_support="optional")
async def task_tenant(ctx: Context) -> str:
    """Run as a task: ctx.http is still the request that started it, after its handle was answered."""
    started = ctx.task_id is not None
    await asyncio.sleep(0.05)
    http = ctx.http
    return f"task={started} tenant={http.headers.get('x-tenant') if http is not None else None}"


@server.resource("deps://item/{name}")
def item(name: str, db: str = Depends(get_db)) -> str:
    return f"{name} in {db}"


@server.prompt
def greet(who: str, cache: str = Depends(get_cache)) -> str:
    return f"hello {who} ({cache})"


if __name__ == "__main__":
    server.run()
