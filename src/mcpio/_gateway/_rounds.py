"""Era translation for requests the upstream asks during a call (sampling, elicitation, roots),
when the client that made the call is in the 2026-07-28 era.

A legacy upstream asks with a request and waits for the answer; a 2026-07-28 client answers
only through ``input_required`` rounds of its own call (MRTR): the handler's run ends, the
client retries the call with the answers. So the upstream call cannot live inside one run of
the handler. It lives in a :class:`Flight`: started by the call's first run (a relayed call's
when the upstream first asks: :meth:`Flight.adopting`), kept by the proxy across the client's
rounds, and found again by the next run through the keys of the answers
(``<flight id>.<n>``, carried by the signed ``requestState``, so a client cannot point a retry
at another flight). Each run hands the answers the client brought to the upstream requests
waiting for them, then waits for the next event: the upstream's result (the call's answer) or
its next request (asked as the next round). A flight nobody comes back for ends after its
proxy's ``round_timeout`` (``_mrtr.ROUND_TIMEOUT`` s by default), cancelling the upstream call.
A flight that has its answer is kept :data:`ANSWERED_TTL` seconds more: a late retry (one the
client sent twice, or again after a timeout) gets that answer, and the upstream call is not
made a second time.

The reverse direction needs nothing here: a 2026-07-28 upstream's ``input_required`` results
are answered by the proxy's upstream Client through the same handlers, which ask the caller as
its era allows.
"""

from __future__ import annotations

import asyncio
import collections
import secrets
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .. import _log
from .._errors import MCPError
from .._server._context import Context
from .._server._mrtr import InputRequired

if TYPE_CHECKING:
    from ._forwarded import Flights

log = _log.logger("mcpio.gateway", globals())
ANSWERED_TTL = 60.0  # seconds an answered flight still answers a late retry


async def ask_client(ctx: Context, method: str, params: dict[str, Any], key: str | None) -> Any:
    """Ask the client of ``ctx`` what the upstream asked, as that client's era allows (a request
    in the legacy era; an input_required round named ``key`` in the 2026-07-28 era). An
    upstream's ``roots/list`` to a client without the ``roots`` capability is answered with no
    roots, during a call as outside one: it must not fail the call it came in."""
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
    if method == "roots/list":  # a client that declared no roots has none (spec client/roots): not an error
        return await ctx.list_roots(key=key) if "roots" in ctx.client_capabilities else []
    raise MCPError(f"the proxy cannot forward {method!r} to its client")


class Flight:
    """One upstream call that outlives the runs of the handler that started it.

    Most calls never ask anything: such a flight is its task and nothing more. Its id (what a
    retry's answer keys name, so what finds it again) and its place in ``flights`` come with its
    first ask, its expiry only when a run ends with the client's round still to come."""

    def __init__(self, flights: Flights, start: Callable[[Flight], Awaitable[Any]]) -> None:
        """``start(flight)``: the upstream call, run in the flight's own task."""
        self.id: str | None = None
        self.flights = flights
        self.ctx: Context | None = None  # the Context of the latest run (the client's latest round)
        self.asked: list[tuple[str, dict[str, Any], asyncio.Future[Any]]] = []  # (method, params, answer)
        self.fresh: collections.deque[int] = collections.deque()  # indexes into asked no run has taken
        self.expiry: asyncio.TimerHandle | None = None  # ends it: the client's next round is overdue
        self.kept: asyncio.TimerHandle | None = None  # forgets it: answered, no late retry can come now
        self._waiting: list[asyncio.Future[None]] = []  # the waiting runs': the result or an ask came
        self.running = 0  # runs going on: while there is one, ctx's request is unanswered
        self.result: asyncio.Future[Any] = asyncio.ensure_future(start(self))
        self.result.add_done_callback(self._woken)

    @classmethod
    def adopting(cls, flights: Flights, cancel: Callable[[], Any]) -> Flight:
        """A flight for an upstream call in flight already (a relayed call the upstream asked
        something during: ``_forwarded``): its outcome is set on :attr:`result` by whoever has
        the call, and the flight ending before it (:meth:`end`) cancels it with ``cancel``."""
        result: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        result.add_done_callback(lambda done: cancel() if done.cancelled() else None)
        return cls(flights, lambda _: result)

    def key(self, n: int) -> str:
        return f"{self.id}.{n}"

    def _woken(self, _: object = None) -> None:
        for wake in self._waiting:  # every run waiting (a client may retry while a run waits)
            if not wake.done():
                wake.set_result(None)

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        """The upstream's request, waiting for the client's answer in a later round."""
        if self.id is None:
            self.id = secrets.token_hex(8)
            self.flights[self.id] = self
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.asked.append((method, params, answer))
        self.fresh.append(len(self.asked) - 1)
        self._woken()
        return await answer

    def end(self) -> None:
        """The flight is over: the upstream call and the asks still waiting are cancelled. An
        answered one is found by a late retry for :data:`ANSWERED_TTL` seconds more."""
        answered = self.result.done() and not self.result.cancelled()
        if self.expiry is not None:
            self.expiry.cancel()
            self.expiry = None
        if answered and self.id is not None and self.flights.get(self.id) is self:
            if self.kept is None:  # counted from the answer, not from each late retry
                self.kept = asyncio.get_running_loop().call_later(ANSWERED_TTL, self.flights.pop, self.id, None)
        elif self.id is not None:
            self.flights.pop(self.id, None)
        if not self.result.done():
            self.result.cancel()
        for _, _, answer in self.asked:
            if not answer.done():
                answer.cancel()

    def _expired(self) -> None:
        log.warning(
            "a call's client did not come back for its input_required round within %g s: the upstream call is "
            "cancelled (round_timeout=, mcpio run --round-timeout, sets how long a call waits)",
            self.flights.round_timeout,
        )
        self.end()

    async def run(self, ctx: Context, ask_client: Callable[[Context, str, dict[str, Any], str], Awaitable[Any]]) -> Any:
        """One run of the handler: answer what the client brought, then wait for the next event
        (the upstream's result first, when both are there). A run that ends with a round for the
        client (InputRequired) leaves the flight waiting for its retry, ``flights.round_timeout`` at most."""
        self.ctx = ctx
        if self.expiry is not None:
            self.expiry.cancel()
            self.expiry = None
        self.running += 1
        try:
            return await self._run(ctx, ask_client)
        except InputRequired:
            if self.expiry is not None:  # another run's round: the time counts from this one
                self.expiry.cancel()
            self.expiry = asyncio.get_running_loop().call_later(self.flights.round_timeout, self._expired)
            raise
        finally:
            self.running -= 1

    async def _run(
        self, ctx: Context, ask_client: Callable[[Context, str, dict[str, Any], str], Awaitable[Any]]
    ) -> Any:
        for n, (method, params, answer) in enumerate(self.asked):
            if not answer.done() and n not in self.fresh:  # asked in a round: the client brought it
                answer.set_result(await ask_client(ctx, method, params, self.key(n)))
        while True:
            if self.result.done():
                self.end()
                return self.result.result()
            if not self.fresh:  # woken by either; an ask goes to the first run that takes it
                wake = asyncio.get_running_loop().create_future()
                self._waiting.append(wake)
                try:
                    await wake
                except BaseException:
                    if self.running == 1 and self.expiry is None:  # no other run, no round to come
                        self.end()
                    raise
                finally:
                    self._waiting.remove(wake)
                continue
            n = self.fresh.popleft()
            method, params, answer = self.asked[n]
            # Not answered yet: in a round this raises InputRequired and ends the run; the flight
            # waits (its round_timeout). In a task (the proxy's call became one) the client answers
            # within this run (tasks/update): the answer goes upstream and the run goes on.
            try:
                answered = await ask_client(ctx, method, params, self.key(n))
            except InputRequired:
                raise  # the client's round (run)
            except BaseException:  # the call failed or was cancelled (e.g. its task): so does the flight
                self.end()
                raise
            if not answer.done():
                answer.set_result(answered)


def flight_of(flights: Flights, ctx: Context) -> Flight | None:
    """The flight a retry's answers point at, if any."""
    for key in ctx.input_keys:
        flight = flights.get(key.rsplit(".", 1)[0])
        if flight is not None:
            return flight
    return None
