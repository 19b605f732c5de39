"""The server the auth end-to-end tests serve with ``mcpio run -t http … --auth-issuer …``."""

from mcpio import Context, Server

server = Server("protected-notes", "1.0.0")
notes: list[str] = []


@server.tool
def whoami(ctx: Context) -> dict:
    """Who the access token says is calling."""
    a = ctx.auth
    return {"subject": a.subject, "client": a.client_id, "scopes": sorted(a.scopes)}


@server.tool(scopes=["notes:write"])
def add_note(text: str) -> str:
    """Store a note (needs the notes:write scope)."""
    notes.append(text)
    return f"{len(notes)} notes"
