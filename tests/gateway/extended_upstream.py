"""An upstream with an extension of its own, ``com.acme/push``: a custom request (``acme/echo``),
a notification it hears from its client (``acme/ping``: the tool ``pings`` tells what it heard)
and one it sends to the clients that declared the extension (``acme/pushed``: the tool ``push``)."""

from mcpio import Server

server = Server("extended")
push = server.extension("com.acme/push", {"version": 1})
heard: list[int] = []


@push.method("acme/echo")
def echo(text: str) -> dict:
    return {"echo": text}


@push.notification("acme/ping")
def ping(n: int) -> None:
    heard.append(n)


@server.tool
def pings() -> list[int]:
    """The numbers of the acme/ping notifications heard so far."""
    return heard


@server.tool
async def push_back() -> int:
    """Send acme/pushed to the clients that declared com.acme/push; how many."""
    return await server.notify_extension("com.acme/push", "acme/pushed", {"x": 1})


if __name__ == "__main__":
    server.run()
