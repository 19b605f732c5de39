"""The quick-start server: a tool, a resource template, a prompt and a tool with progress.

python examples/quickstart.py          # serve over stdio (point a host at this command)
"""

from mcpio import Context, Server

server = Server("demo", version="1.0.0", instructions="Arithmetic and greetings.")


@server.tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@server.resource("greeting://{name}")
def greeting(name: str) -> str:
    """A personal greeting."""
    return f"Hello, {name}!"


@server.prompt
def review_code(code: str) -> str:
    return f"Please review this code:\n\n{code}"


@server.tool
async def slow_sum(values: list[float], ctx: Context) -> float:
    """Add up numbers, reporting progress and logging each step."""
    for i, _ in enumerate(values):
        await ctx.report_progress(i, len(values))
        await ctx.info(f"step {i}")
    return sum(values)


if __name__ == "__main__":
    server.run()  # stdio
