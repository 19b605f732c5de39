"""OAuth 2.1 authorization for MCP over HTTP (spec: basic/authorization), both sides.

Imported only when authorization is used: ``import mcpio`` and the stdio path never load it.
Server side (resource server: protected resource metadata, bearer checks, token verifiers) and
client side (discovery, registration, authorization code + PKCE, refresh, token store) live in
separate modules of this package.
"""
