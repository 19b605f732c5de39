"""URL-mode elicitation: send the user to a page the client must not see into (sign-in, payment).

    mcpio run examples/url_elicitation.py

``connect`` asks the client to show a URL (``ctx.elicit_url``; 2025-11-25 ``elicitation/create``
with ``mode: "url"``, or a 2026-07-28 input_required round) and, once the user agreed, tells the
client the out-of-band step finished (``ctx.complete_elicitation``: the 2025-11-25 notification;
2026-07-28 has none). ``connect_later`` answers -32042 instead (``URLElicitationRequired``): the
client shows the URL and retries the call itself.
"""

from __future__ import annotations

from mcpio import Context, Server, URLElicitationRequired

server = Server("url-elicitation", "1.0.0")


@server.tool
async def connect(service: str, ctx: Context) -> str:
    """Connect ``service`` to your account (you sign in on its own page)."""
    answer = await ctx.elicit_url(f"https://auth.example.com/{service}/connect", f"Sign in to {service}")
    if answer["action"] != "accept":
        return f"not connected ({answer['action']})"
    # ... the sign-in page's callback lands on this server; then:
    if "elicitationId" in answer:
        await ctx.complete_elicitation(answer["elicitationId"])
    return f"connected {service}"


@server.tool
def connect_later(service: str) -> str:
    """Needs the account connected first: the client shows the URL, then calls again."""
    raise URLElicitationRequired.for_url(f"https://auth.example.com/{service}/connect", f"Sign in to {service}")


if __name__ == "__main__":
    server.run()
