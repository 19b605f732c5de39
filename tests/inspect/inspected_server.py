"""A server for the inspector's browser tests: a plain tool, a long call with progress that
waits to be cancelled, an elicitation, a result with an image, and hostile text everywhere."""

import asyncio

from mcpio import Context, Image, Server

server = Server("inspected", version="0.1.0", instructions="<b>not bold</b> <script>document.title='pwned'</script>")

HOSTILE = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201e2f5c9c90000000049454e44ae426082"
)


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.tool
def pick(colour: str = "red", shade: int = 1, tags: list[str] | None = None) -> str:
    """Echo a choice (an enum-free string, an int with a default, an array)."""
    return f"{colour}/{shade}/{','.join(tags or [])}"


@server.tool
async def wait_forever(ctx: Context, steps: int = 3) -> str:
    """Report progress, then wait until cancelled."""
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
    await asyncio.Event().wait()
    return "never"


@server.tool
async def greet(ctx: Context) -> str:
    """Ask the user's name (elicitation) and greet them."""
    answer = await ctx.elicit(
        "What is your name?", {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    )
    if answer.get("action") != "accept":
        return f"no name ({answer.get('action')})"
    return f"Hello, {answer['content']['name']}!"


@server.tool(description=HOSTILE)
def hostile() -> str:
    return HOSTILE


@server.tool
def notes() -> str:
    """Markdown text."""
    return "# Notes\n\nSome **bold** and `code`, a [link](https://example.com).\n\n- one\n- two <b>not html</b>\n"


@server.resource("memo://{topic}")
def memo(topic: str) -> str:
    """A memo about a topic."""
    return f"memo about {topic}"


COUNTER = {"n": 0}


@server.resource("counter://value")
def counter() -> str:
    """A value that the bump tool changes (subscribe to see updates)."""
    return f"counter = {COUNTER['n']}"


@server.tool
async def bump(ctx: Context) -> int:
    """Increment the counter and tell subscribers."""
    COUNTER["n"] += 1
    await ctx.server.notify_resource_updated("counter://value")
    return COUNTER["n"]


@server.prompt
def review(code: str) -> str:
    """Review some code."""
    return f"Please review:\n\n{code}"


@server.tool
def picture() -> Image:
    """A one-pixel PNG."""
    return Image(data=PIXEL, mime_type="image/png")


HUGE = {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(10_000)}}
CYCLIC = {
    "type": "object",
    "properties": {"node": {"$ref": "#/$defs/node"}},
    "$defs": {
        "node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}, "label": {"type": "string"}}}
    },
}


@server.tool(max_result_bytes=None)
def big() -> str:
    """A 10 MB text result."""
    return "x" * (10 * 1024 * 1024)


@server.tool(input_schema=HUGE)
def huge_schema(p0: str = "") -> str:
    """A tool whose input schema has 10,000 properties (only p0 is bound)."""
    return p0


@server.tool(input_schema=CYCLIC)
def cyclic(node: dict | None = None) -> str:
    """A tool whose input schema refers to itself."""
    return "ok"


@server.tool
def oops(why: str = "no reason") -> str:
    """A tool that fails (the result has isError: true)."""
    raise ValueError(f"oops: {why}")


@server.tool
def die() -> str:
    """The server process exits in the middle of the call."""
    import os

    os._exit(3)


if __name__ == "__main__":
    server.run()
