"""OAuth 2.1 authorization for MCP over Streamable HTTP (``pip install 'mcpio[auth]'``), both sides.

Protecting a server (the resource server side; spec basic/authorization)::

    from mcpio import Server
    from mcpio.auth import ResourceServer

    server = Server("notes")

    @server.tool(scopes=["notes:write"])
    def add_note(text: str) -> str: ...

    server.run("http", auth=ResourceServer(resource="https://mcp.example.com/mcp",
                                           issuer="https://idp.example.com"))

Handlers and middleware read the caller as ``ctx.auth`` (an :class:`AuthInfo`).

Sharing a server with a teammate, no authorization server (fixed bearer tokens, compared in
constant time; ``mcpio run -t http --auth-token-env VAR`` from the command line)::

    from mcpio.auth import StaticTokens

    server.run("http", auth=StaticTokens([os.environ["TEAM_TOKEN"]]))

Connecting to a protected server (the client side)::

    from mcpio import Client
    from mcpio.auth import OAuth

    async with Client("https://mcp.example.com/mcp", auth=OAuth()) as client: ...

:class:`OAuth` discovers the authorization server, registers (pre-registered credentials, CIMD,
DCR), logs in with the authorization code + PKCE in the system browser (or any user agent you
pass), refreshes, steps up, and keeps tokens in a :class:`TokenStore` (a 0600 file by default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._auth._info import AuthInfo, current_principal
from ._auth._jwks import AuthUnavailable
from ._auth._proxy import OAuthProxy
from ._auth._resource import ResourceServer
from ._auth._static import BearerAuth, StaticTokens
from ._auth._verify import IntrospectionVerifier, InvalidToken, JWTVerifier, TokenVerifier

if TYPE_CHECKING:
    from ._auth._browser import CallableUserAgent, LoopbackBrowser, fetch_redirect
    from ._auth._discovery import AuthorizationError
    from ._auth._enterprise import id_jag_assertion
    from ._auth._oauth_client import OAuth
    from ._auth._tokens import FileTokenStore, MemoryTokenStore, TokenStore, TokenStoreError

# The client side needs httpx (OAuth is an httpx.Auth): imported on first use, so that a server
# importing this module for ResourceServer loads no HTTP client (PEP 562).
_CLIENT = {
    "CallableUserAgent": "_browser",
    "LoopbackBrowser": "_browser",
    "fetch_redirect": "_browser",
    "AuthorizationError": "_discovery",
    "id_jag_assertion": "_enterprise",
    "OAuth": "_oauth_client",
    "FileTokenStore": "_tokens",
    "MemoryTokenStore": "_tokens",
    "TokenStore": "_tokens",
    "TokenStoreError": "_tokens",
}


def __getattr__(name: str) -> Any:
    module = _CLIENT.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpio.auth' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"mcpio._auth.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AuthInfo",
    "AuthUnavailable",
    "AuthorizationError",
    "BearerAuth",
    "CallableUserAgent",
    "FileTokenStore",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "LoopbackBrowser",
    "MemoryTokenStore",
    "OAuth",
    "OAuthProxy",
    "ResourceServer",
    "StaticTokens",
    "TokenStore",
    "TokenStoreError",
    "TokenVerifier",
    "current_principal",
    "fetch_redirect",
    "id_jag_assertion",
]
