"""OAuth 2.1 authorization for MCP over Streamable HTTP (``pip install 'mcpio[auth]'``).

Protecting a server (the resource server side; spec basic/authorization)::

    from mcpio import Server
    from mcpio.auth import ResourceServer

    server = Server("notes")

    @server.tool(scopes=["notes:write"])
    def add_note(text: str) -> str: ...

    server.run("http", auth=ResourceServer(resource="https://mcp.example.com/mcp",
                                           issuer="https://idp.example.com"))

Handlers and middleware read the caller as ``ctx.auth`` (an :class:`AuthInfo`).
"""

from __future__ import annotations

from ._auth._info import AuthInfo, current_principal
from ._auth._jwks import AuthUnavailable
from ._auth._proxy import OAuthProxy
from ._auth._resource import ResourceServer
from ._auth._verify import IntrospectionVerifier, InvalidToken, JWTVerifier, TokenVerifier

__all__ = [
    "AuthInfo",
    "AuthUnavailable",
    "IntrospectionVerifier",
    "InvalidToken",
    "JWTVerifier",
    "OAuthProxy",
    "ResourceServer",
    "TokenVerifier",
    "current_principal",
]
