"""A tool that needs several answers from the client: the user's preferences (elicitation),
then a draft from the client's model (sampling). The same code serves both protocol eras:

* 2025-11-25 and earlier: ``ctx.elicit`` and ``ctx.sample`` send requests to the client and
  wait for its answers;
* 2026-07-28: each call the client has not answered yet ends this round with an
  ``InputRequiredResult``; the client retries with the answers and the tool runs again from
  the top, getting them back from ``ctx.elicit`` / ``ctx.sample`` (multi round-trip requests).

    python examples/trip_planner.py      # stdio
"""

from mcpio import Context, Server

server = Server(
    "trip-planner",
    version="1.0.0",
    instructions="plan_trip asks the user for a budget and pace, then drafts a day itinerary with the client's model.",
)

PREFERENCES = {
    "type": "object",
    "properties": {
        "budget": {"type": "integer", "minimum": 0, "description": "Budget for the day, in euros"},
        "pace": {
            "type": "string",
            "enum": ["relaxed", "busy"],
            "default": "relaxed",
            "description": "How full the day should be",
        },
    },
    "required": ["budget"],
}


def _text(sampled: dict) -> str:
    content = sampled.get("content")
    blocks = content if isinstance(content, list) else [content]
    return "\n".join(b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text")


@server.tool(title="Plan a day trip", annotations={"readOnlyHint": True, "openWorldHint": False})
async def plan_trip(city: str, ctx: Context) -> str:
    """Plan a day in a city: asks the user for a budget and pace, then the client's model for an itinerary.

    Args:
        city: Where to spend the day.
    """
    answer = await ctx.elicit(f"Planning a day in {city}: what budget and pace?", PREFERENCES)
    if answer["action"] != "accept":
        return f"No trip planned: the user chose to {answer['action']}."
    prefs = answer.get("content") or {}
    budget, pace = prefs.get("budget", 0), prefs.get("pace", "relaxed")
    draft = await ctx.sample(
        f"Write a {pace} one-day itinerary for {city} on a budget of {budget} euros.",
        system_prompt="You are a concise travel planner.",
        max_tokens=400,
    )
    return f"Itinerary for {city} ({budget} EUR, {pace}):\n{_text(draft)}"


if __name__ == "__main__":
    server.run()
