"""Era translation for requests the upstream asks during a call (sampling, elicitation, roots),
when the client that made the call is in the 2026-07-28 era.

A legacy upstream asks with a request and waits for the answer; a 2026-07-28 client answers
only through ``input_required`` rounds of its own call (MRTR): the handler's run ends, the
client retries the call with the answers. So the upstream call cannot live inside one run of
the handler. It lives in a :class:`Flight`: started by the call's first run, kept by the proxy
across the client's rounds, and found again by the next run through the keys of the answers
(``<flight id>.<n>``, carried by the signed ``requestState``, so a client cannot point a retry
at another flight). Each run hands the answers the client brought to the upstream requests
waiting for them, then waits for the next event: the upstream's result (the call's answer) or
its next request (asked as the next round). A flight nobody comes back for ends after
:data:`FLIGHT_TTL` seconds, cancelling the upstream call.

The reverse direction needs nothing here: a 2026-07-28 upstream's ``input_required`` results
are answered by the proxy's upstream Client through the same handlers, which ask the caller as
its era allows.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from .._errors import MCPError
from .._server._context import Context
from .._server._mrtr import InputRequired

FLIGHT_TTL = 600.0  # seconds a flight waits for its client's next round


async def ask_client(ctx: Context, method: str, params: dict[str, Any], key: str | None) -> Any:
    """Ask the client of ``ctx`` what the upstream asked, as that client's era allows (a request
    in the legacy era; an input_required round named ``key`` in the 2026-07-28 era)."""
    if method == "sampling/createMessage":
        return await ctx.sample(
            params.get("messages") or [],
            max_tokens=int(params.get("maxTokens") or 1024),
            system_prompt=params.get("systemPrompt"),
            temperature=params.get("temperature"),
            stop_sequences=params.get("stopSequences"),
            model_preferences=params.get("modelPreferences"),
            include_context=params.get("includeContext"),
            metadata=params.get("metadata"),
            key=key,
        )
    if method == "elicitation/create":
        schema = params.get("requestedSchema") or {"type": "object", "properties": {}}
        return await ctx.elicit(str(params.get("message", "")), schema, key=key)
    if method == "roots/list":
        return await ctx.list_roots(key=key)
    raise MCPError(f"the proxy cannot forward {method!r} to its client")


class Flight:
    """One upstream call that outlives the runs of the handler that started it."""

    def __init__(self, flights: dict[str, Flight], start: Callable[[Flight], Awaitable[Any]]) -> None:
        """``start(flight)``: the upstream call, run in the flight's own task."""
        self.id = secrets.token_hex(8)
        self.flights = flights
        self.ctx: Context | None = None  # the Context of the latest run (the client's latest round)
        self.asked: list[tuple[str, dict[str, Any], asyncio.Future[Any]]] = []  # (method, params, answer)
        self.events: asyncio.Queue[int] = asyncio.Queue()  # indexes into asked, as they come
        loop = asyncio.get_running_loop()
        self.result: asyncio.Task[Any] = loop.create_task(_awaited(start(self)))
        self.expiry = loop.call_later(FLIGHT_TTL, self.end)
        flights[self.id] = self

    def key(self, n: int) -> str:
        return f"{self.id}.{n}"

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        """The upstream's request, waiting for the client's answer in a later round."""
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.asked.append((method, params, answer))
        self.events.put_nowait(len(self.asked) - 1)
        return await answer

    def end(self) -> None:
        self.flights.pop(self.id, None)
        self.expiry.cancel()
        if not self.result.done():
            self.result.cancel()
        for _, _, answer in self.asked:
            if not answer.done():
                answer.cancel()

    async def run(self, ctx: Context, ask_client: Callable[[Context, str, dict[str, Any], str], Awaitable[Any]]) -> Any:
        """One run of the handler: answer what the client brought, then wait for the next event."""
        self.ctx = ctx
        self.expiry.cancel()
        for n, (method, params, answer) in enumerate(self.asked):
            if not answer.done():  # brought this round: known to the Context, returned at once
                answer.set_result(await ask_client(ctx, method, params, self.key(n)))
        while True:
            waiting = asyncio.ensure_future(self.events.get())
            try:
                done, _ = await asyncio.wait({self.result, waiting}, return_when=asyncio.FIRST_COMPLETED)
            except BaseException:
                waiting.cancel()
                self.end()
                raise
            if self.result in done:
                waiting.cancel()
                self.end()
                return self.result.result()
            n = waiting.result()
            method, params, answer = self.asked[n]
            self.expiry = asyncio.get_running_loop().call_later(FLIGHT_TTL, self.end)
            # Not answered yet: in a round this raises InputRequired and ends the run; the flight
            # waits. In a task (the proxy's call became one) the client answers within this run
            # (tasks/update): the answer goes upstream and the run goes on.
            try:
                answered = await ask_client(ctx, method, params, self.key(n))
            except InputRequired:
                raise
            except BaseException:  # the call failed or was cancelled (e.g. its task): so does the flight
                self.end()
                raise
            self.expiry.cancel()
            if not answer.done():
                answer.set_result(answered)


def flight_of(flights: dict[str, Flight], ctx: Context) -> Flight | None:
    """The flight a retry's answers point at, if any."""
    for key in ctx.input_keys:
        flight = flights.get(key.rsplit(".", 1)[0])
        if flight is not None:
            return flight
    return None


async def _awaited(call: Awaitable[Any]) -> Any:
    return await call
