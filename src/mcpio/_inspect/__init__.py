"""``mcpio inspect``: a web inspector for MCP servers, served on 127.0.0.1 with no Node.

:func:`serve` starts the page's server (uvicorn; the ``http`` extra) and the inspected server's
client in one event loop; :mod:`._app` is the ASGI app and its security rules,
:mod:`._session` the MCP side, :mod:`._export` the pytest export, :mod:`._sandbox` the second
origin (another port) where MCP Apps views run. The page itself is
``static/`` (plain HTML, CSS and JavaScript: no build step, no CDN; shipped in the wheel).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import sys
import webbrowser
from typing import Any

from .._version import __version__
from ._app import InspectorApp
from ._sandbox import SandboxApp, origin_of
from ._session import InspectorSession
from ._signin import write_launcher


def serve(
    make_client: Any,
    *,
    target: str | None,
    era: str = "auto",
    headers: dict[str, str] | None = None,
    port: int = 0,
    open_browser: bool = True,
    on_ready: Any = None,
    env: dict[str, str] | None = None,
    cwd: str | None = None,
) -> int:
    """Serve the inspector until interrupted; returns the exit status.

    ``make_client(target, **options)`` builds an unconnected Client. ``port=0`` picks a free
    port. The link (with its one-time code, :mod:`._signin`) is printed on stderr and passed to
    ``on_ready(url)``; the browser is started on a private launcher file, never on the link."""
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
    views = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    views.bind(("127.0.0.1", 0))  # the sandbox origin of MCP Apps views: another port, another origin
    views.listen(128)
    views_origin = origin_of(views.getsockname()[1])
    session = InspectorSession(make_client, env=env, cwd=cwd)  # env, cwd: what make_client gives a server
    initial = {"target": target or "", "era": era, "headers": headers or {}, "sandbox": views_origin}
    app = InspectorApp(session, port=port, initial={**initial, "version": __version__}, frame_origin=views_origin)
    sandbox = SandboxApp(port=views.getsockname()[1], host_origins=app.origins)  # framed by the page, wherever open
    url = f"http://127.0.0.1:{port}/?code={app.new_code()}"
    launcher = write_launcher(url) if open_browser else None
    # Ctrl-C: an open page's event poll (up to 20 s) is cut after 2 s, not waited for
    config = uvicorn.Config(
        _by_port(app, sandbox), log_level="warning", lifespan="on", access_log=False, timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.ensure_future(server.serve(sockets=[sock, views]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started:
            minutes = app.signin.code_seconds / 60
            sys.stderr.write(
                f"mcpio inspect: open {url}\n(Ctrl-C stops it; the link works once, within {minutes:g} minutes: "
                "it signs that browser in)\n"
            )
            sys.stderr.flush()
            if on_ready is not None:
                on_ready(url)
            if launcher is not None:  # the browser's command line names the 0600 file, not the code
                await asyncio.to_thread(webbrowser.open, launcher.as_uri())
        await task

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
    finally:
        if launcher is not None:
            shutil.rmtree(launcher.parent, ignore_errors=True)
    return 0


def _by_port(app: InspectorApp, sandbox: SandboxApp) -> Any:
    """One ASGI app for both listening sockets: the sandbox's port gets :class:`SandboxApp`."""

    async def route(scope: dict[str, Any], receive: Any, send: Any) -> None:
        server = scope.get("server") or (None, None)
        if scope["type"] == "http" and server[1] == sandbox.port:
            await sandbox(scope, receive, send)
        else:
            await app(scope, receive, send)

    return route
