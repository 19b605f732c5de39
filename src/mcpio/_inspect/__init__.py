"""``mcpio inspect``: a web inspector for MCP servers, served on 127.0.0.1 with no Node.

:func:`serve` starts the page's server (uvicorn; the ``http`` extra) and the inspected server's
client in one event loop; :mod:`._app` is the ASGI app and its security rules,
:mod:`._session` the MCP side, :mod:`._export` the pytest export. The page itself is
``static/`` (plain HTML, CSS and JavaScript: no build step, no CDN; shipped in the wheel).
"""

from __future__ import annotations

import asyncio
import socket
import sys
import webbrowser
from typing import Any

from ._app import InspectorApp, new_token
from ._session import InspectorSession


def serve(
    make_client: Any,
    *,
    target: str | None,
    era: str = "auto",
    headers: dict[str, str] | None = None,
    port: int = 0,
    open_browser: bool = True,
    token: str | None = None,
    on_ready: Any = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> int:
    """Serve the inspector until interrupted; returns the exit status.

    ``make_client(target, **options)`` builds an unconnected Client. ``port=0`` picks a free
    port. The URL (with its token) is printed on stderr and passed to ``on_ready(url)``."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sys.stderr.write(f"mcpio inspect: cannot listen on 127.0.0.1:{port}: {exc.strerror} (choose another --port)\n")
        return 3
    sock.listen(128)
    port = sock.getsockname()[1]
    token = token or new_token()
    session = InspectorSession(make_client, env=env, cwd=cwd)  # env, cwd: what make_client gives a server
    app = InspectorApp(
        session, token=token, port=port, initial={"target": target or "", "era": era, "headers": headers or {}}
    )
    url = f"http://127.0.0.1:{port}/?token={token}"
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            sys.stderr.write(f"mcpio inspect: open {url}\n(Ctrl-C stops it; the URL's token is what lets a page in)\n")
            sys.stderr.flush()
            if on_ready is not None:
                on_ready(url)
            if open_browser:
                await asyncio.to_thread(webbrowser.open, url)
        await task

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    return 0
