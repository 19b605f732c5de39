"""Multi round-trip requests (spec 2026-07-28 basic/patterns/mrtr): input_required without
server→client requests.

In the modern era a handler that calls ``ctx.elicit`` / ``ctx.sample`` / ``ctx.list_roots``
cannot send a request to the client. Instead:

1. each such call inside one run of the handler gets a key (``elicit-0``, ``sample-1`` …, in
   call order); if the answer for that key is known, the call returns it at once;
2. otherwise it raises :class:`InputRequired`, the handler's run ends, and the server answers
   with an ``InputRequiredResult``: ``inputRequests`` {key: request} and a ``requestState``
   that carries every answer gathered so far;
3. the client retries the same method (new id) with ``inputResponses`` and the echoed
   ``requestState``; the handler runs again from the start and now gets its answers.

So handler code before an ``await ctx.elicit(...)`` runs once per round: keep it free of side
effects that must happen once (or check ``ctx.input_round``).

``requestState`` is ``v1.<payload>.<mac>`` (base64url): the payload is JSON with the method,
a digest of the request's salient parameters (name or uri, and arguments), the answers, the
keys asked last and an expiry; the MAC is HMAC-SHA256 under the server's secret (spec:
servers MUST protect the integrity of state that influences business logic and SHOULD bind it
to the originating request with a short expiry). Anything that fails verification is -32602.

What the state guarantees:

* **Answers only with the state that asked for them.** ``inputResponses`` are taken only for
  the keys the verified ``requestState`` says were asked in the previous round. A request with
  ``inputResponses`` but no ``requestState`` is served as a first round: its answers are
  ignored and the handler asks again (an answer cannot "confirm" anything without the round
  trip, and the state's expiry and binding cannot be sidestepped by leaving it out).
* **Bound to the caller.** When the request carries an authenticated caller, the state records
  its *principal* (``AuthInfo.principal``: the one the project binds sessions, tasks and state
  to) and a state presented by another principal is refused. Without auth there is no caller to bind to.
* **Retries are allowed.** The same state may be presented again within its lifetime
  (``state_ttl``, one hour by default): clients retry after network failures, so a state is
  not single-use. A tool whose effect must happen once keeps its own idempotency record.
* **Readable by the client.** The payload is signed, not encrypted: the client can decode the
  answers and keys it carries (its own answers). Never put anything in it the client must not
  read; encrypt the state first if that ever changes.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .._errors import InvalidParams

if TYPE_CHECKING:
    from .._versions import Rules
    from ._context import Context
    from ._server import Server

# hashlib, hmac and json are imported where used: every server builds a StateCodec, few ever
# seal a requestState, and a stdio server's start-up should not pay for them.

# Seconds a proxied call the upstream asked something during waits for its client's next round,
# by default (``Server.proxy(round_timeout=)``: ``_gateway._rounds``).
ROUND_TIMEOUT = 600.0
STATE_VERSION = "v1"


def round_timeout_checked(seconds: object, name: str = "round_timeout") -> float:
    """``seconds`` as a round timeout; ValueError, naming ``name``, unless a positive number."""
    if isinstance(seconds, bool) or not (isinstance(seconds, (int, float)) and seconds > 0):
        raise ValueError(f"{name} must be a positive number of seconds, not {seconds!r}")
    return float(seconds)


# What a well-formed answer to each input request looks like (the result types of the
# legacy requests they replace): a missing or malformed answer is asked for again.
ELICIT_ACTIONS = ("accept", "decline", "cancel")  # ElicitResult.action (schema); _elicit.checked too
ANSWER_SHAPES = {
    "elicitation/create": lambda a: a.get("action") in ELICIT_ACTIONS,
    "sampling/createMessage": lambda a: isinstance(a.get("role"), str) and "content" in a,
    "roots/list": lambda a: isinstance(a.get("roots"), list),
}
KEY_PREFIX = {"elicitation/create": "elicit", "sampling/createMessage": "sample", "roots/list": "roots"}


class InputRequired(BaseException):
    """Control flow, not an error: the handler needs an answer the client has not given yet.

    A BaseException (like CancelledError) so a handler's ``except Exception`` cannot swallow it.
    """

    def __init__(self, key: str, request: dict[str, Any]) -> None:
        super().__init__(key)
        self.key = key
        self.request = request


def _b64(data: bytes) -> str:
    import base64  # not at start-up: only a multi-round request signs state

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    import base64  # not at start-up

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def request_digest(method: str, params: dict[str, Any]) -> str:
    """What binds a requestState to the request it was issued for: method, target, arguments."""
    salient = {"method": method, "target": params.get("name", params.get("uri")), "arguments": params.get("arguments")}
    import hashlib
    import json

    raw = json.dumps(salient, sort_keys=True, separators=(",", ":"), default=str).encode()
    return _b64(hashlib.sha256(raw).digest()[:16])


class StateCodec:
    """Signs and verifies ``requestState`` with one server secret (HMAC-SHA256)."""

    def __init__(self, secret: bytes, ttl: float) -> None:
        self._secret = secret
        self.ttl = ttl

    def _mac(self, payload: str) -> str:
        import hashlib
        import hmac

        return _b64(hmac.new(self._secret, payload.encode("ascii"), hashlib.sha256).digest())

    def seal(
        self, digest: str, answers: dict[str, Any], asked: list[str], round_: int, principal: str | None = None
    ) -> str:
        body = {"d": digest, "a": answers, "k": asked, "r": round_, "exp": int(time.time() + self.ttl)}
        if principal is not None:
            body["p"] = principal
        import json

        payload = _b64(json.dumps(body, separators=(",", ":")).encode())
        return f"{STATE_VERSION}.{payload}.{self._mac(payload)}"

    def open(self, state: Any, digest: str, principal: str | None = None) -> tuple[dict[str, Any], list[str], int]:
        """(answers, keys asked last round, round) from a state the client echoed; -32602 if it
        fails verification, belongs to another request or caller, or has expired."""
        if not isinstance(state, str):
            raise InvalidParams("Invalid params: requestState must be the string this server sent")
        parts = state.split(".")
        if len(parts) != 3 or parts[0] != STATE_VERSION:
            raise InvalidParams("Invalid params: requestState is not one this server issued; retry without it")
        import hmac
        import json

        _, payload, mac = parts
        if not hmac.compare_digest(mac, self._mac(payload)):
            raise InvalidParams(
                "Invalid params: requestState failed verification (modified, or issued by another "
                "server secret); retry the request without requestState"
            )
        try:
            body = json.loads(_unb64(payload))
        except (ValueError, TypeError):
            raise InvalidParams("Invalid params: requestState is corrupt; retry without it") from None
        if body.get("d") != digest:
            raise InvalidParams(
                "Invalid params: requestState belongs to a different request (method, name or "
                "arguments changed); retry without it"
            )
        if body.get("p") != principal:
            raise InvalidParams(
                "Invalid params: requestState was issued to another caller (token subject or client); "
                "retry the request without it"
            )
        if not isinstance(body.get("exp"), int) or body["exp"] < time.time():
            raise InvalidParams("Invalid params: requestState has expired; retry the request without it")
        return dict(body.get("a") or {}), list(body.get("k") or []), int(body.get("r") or 0)


class Rounds:
    """One run of a handler in the modern era: the answers it may use and the keys it asks."""

    __slots__ = ("_next", "answers", "asked", "principal", "round", "used")

    def __init__(self, answers: dict[str, Any] | None = None, round_: int = 0, principal: str | None = None) -> None:
        self.principal = principal  # the caller the next state is bound to (None: no auth)
        self.answers = answers or {}
        self.round = round_
        self._next = 0
        self.asked: dict[str, dict[str, Any]] = {}  # this run's unanswered requests, by key
        self.used: set[str] = set()  # keys whose answers this run consumed

    @classmethod
    def from_request(
        cls, codec: StateCodec, method: str, params: dict[str, Any], principal: str | None = None
    ) -> Rounds:
        """Rebuild the answers of a retry: verified earlier answers plus this round's responses
        to the keys that round asked (others are ignored, spec MRTR §Errors). Without a
        requestState there was no round: ``inputResponses`` are ignored and the handler asks
        again. ``principal`` (``AuthInfo.principal``) binds the state to the authenticated caller."""
        state = params.get("requestState")
        if state is None:
            return cls({}, 0, principal)
        responses = params.get("inputResponses")
        responses = responses if isinstance(responses, dict) else {}
        answers, asked, round_ = codec.open(state, request_digest(method, params), principal)
        for key in asked:
            if key in responses:
                answers[key] = responses[key]
        return cls(answers, round_ + 1, principal)

    def ask(self, method: str, params: dict[str, Any] | None, key: str | None = None) -> dict[str, Any]:
        """The answer to this call's request, or raise InputRequired for it.

        ``key`` names the request in ``inputRequests`` (default: ``elicit-0``, ``sample-1`` … in
        call order). Calls made concurrently (``asyncio.gather``) that all lack answers are asked
        together in one InputRequiredResult.
        """
        if key is None:
            key = f"{KEY_PREFIX[method]}-{self._next}"
        self._next += 1
        answer = self.answers.get(key)
        if isinstance(answer, dict) and ANSWER_SHAPES[method](answer):
            self.used.add(key)
            return answer
        self.answers.pop(key, None)  # malformed: ask again
        request: dict[str, Any] = {"method": method}
        if params is not None:
            request["params"] = params
        self.asked[key] = request
        raise InputRequired(key, request)

    def result(self, codec: StateCodec, method: str, params: dict[str, Any], pending: InputRequired) -> dict[str, Any]:
        """The InputRequiredResult for a handler run that stopped at ``pending``."""
        asked = self.asked or {pending.key: pending.request}
        known = {k: self.answers[k] for k in self.used if k in self.answers and k not in asked}
        return {
            "resultType": "input_required",
            "inputRequests": dict(asked),
            "requestState": codec.seal(request_digest(method, params), known, list(asked), self.round, self.principal),
        }


def finished(
    server: Server, ctx: Context, method: str, params: dict[str, Any], result: Any, pending: InputRequired | None = None
) -> Any:
    """:func:`outcome` of a request served with ``ctx``: the engine's (``Server._on_request``) and
    a proxy's relayed call's."""
    return outcome(server, ctx.rules, ctx._rounds, method, params, result, pending)


def outcome(
    server: Server,
    rules: Rules | None,
    rounds: Rounds | None,
    method: str,
    params: dict[str, Any],
    result: Any,
    pending: InputRequired | None = None,
) -> Any:
    """What request ``method`` is answered with under ``rules``, from its handler's ``result`` or
    from ``pending`` (the handler's run stopped to ask the client: a 2026-07-28 ``input_required``
    round of ``rounds``), with the era's decorations. Every answer path's (the synchronous one
    has no ``rounds``: its tools cannot ask)."""
    if pending is not None:
        if rounds is None:  # a request that cannot ask (Context asks through rounds only when it has them)
            from ._handlers import no_rounds

            raise no_rounds(method) from None
        result = rounds.result(server.state_codec, method, params, pending)
    if rules is not None and rules.result_type:
        result = server.decorate(result, rules, method)
    return result
