"""JSON-RPC 2.0 envelopes: build, classify and encode messages (no I/O).

Messages are plain dicts on the wire side: they are what msgspec decodes fastest and what the
schema validates. ``classify`` is lenient where the spec allows it and exact where it does not:

* ``id`` must be a string or an integer (MCP forbids null; JSON-RPC forbids fractions);
* ``jsonrpc`` must be ``"2.0"``;
* ``params`` must be an object when present (MCP never uses by-position params).

A message that fails these rules raises :class:`InvalidMessage`, which carries the error object
and the id it could still read (``None`` when unreadable), so the caller can answer it.
"""

from __future__ import annotations

from typing import Any, Final

import msgspec

from ._errors import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

RequestId = str | int

REQUEST: Final = 1
NOTIFICATION: Final = 2
RESPONSE: Final = 3
ERROR: Final = 4

# The largest message (a stdio line, an HTTP body) accepted by default: 256 MiB, since large tool
# results are normal (large results cut off by other SDKs' limits). Here, not in _protocol._framing, so that Server() takes it as
# its default without importing the framing.
DEFAULT_MAX_LINE_SIZE = 256 * 1024 * 1024

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()
encode = _encoder.encode
encode_into = _encoder.encode_into
Raw = msgspec.Raw  # an encoded message inside a batch being encoded
# The JSON decoder itself: msgspec's errors, not InvalidMessage; for callers that take the
# failures through decode() again for their texts.
decode_json = _decoder.decode


def decode(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON document; raises :class:`InvalidMessage` (-32700) on bad JSON or UTF-8."""
    try:
        return _decoder.decode(data)
    except msgspec.DecodeError as exc:
        detail = str(exc)
        raise InvalidMessage(None, PARSE_ERROR, f"Parse error: the message is not valid JSON ({detail})") from None
    except UnicodeDecodeError:
        raise InvalidMessage(None, PARSE_ERROR, "Parse error: the message is not valid UTF-8") from None
    except RecursionError:  # msgspec raises it for deep nesting ("[" * 5000): bad input, not a crash
        raise InvalidMessage(None, PARSE_ERROR, "Parse error: the message nests arrays or objects too deeply") from None


class InvalidMessage(Exception):
    """A message that cannot be processed; ``error_response()`` is the reply to send."""

    def __init__(self, id: RequestId | None, code: int, message: str) -> None:
        super().__init__(message)
        self.id = id
        self.code = code
        self.message = message

    def error_response(self) -> dict[str, Any]:
        return error_response(self.id, {"code": self.code, "message": self.message})


def request(id: RequestId, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def notification(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def response(id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_response(id: RequestId | None, error: dict[str, Any]) -> dict[str, Any]:
    # JSON-RPC 2.0 §5: id is null when it could not be read.
    return {"jsonrpc": "2.0", "id": id, "error": error}


def classify(msg: Any) -> int:
    """Return REQUEST, NOTIFICATION, RESPONSE or ERROR for one (non-batch) message.

    Raises InvalidMessage with the error to answer. Unknown extra members are ignored.
    """
    # A well-formed request or notification, as nearly every message is, in fewer lookups;
    # anything else, and every refusal, is decided by _classify below.
    if type(msg) is dict and msg.get("jsonrpc") == "2.0" and type(msg.get("method")) is str:
        params = msg.get("params")
        if params is None or type(params) is dict:
            raw_id = msg.get("id", _ABSENT)
            if raw_id is _ABSENT:
                return NOTIFICATION
            if type(raw_id) is int or type(raw_id) is str:
                return REQUEST
    return _classify(msg)


_ABSENT: Any = object()


def _classify(msg: Any) -> int:
    """:func:`classify`: the rules, for every message."""
    if type(msg) is not dict:
        raise InvalidMessage(
            None, INVALID_REQUEST, f"Invalid Request: a JSON-RPC message must be an object, got {_json_type(msg)}"
        )
    has_id = "id" in msg
    raw_id = msg.get("id")
    id_ = raw_id if type(raw_id) is int or type(raw_id) is str else None
    method = msg.get("method")
    if msg.get("jsonrpc") != "2.0":
        # A response-shaped object is refused without its id: that id is one of *our* request
        # ids, and an error under it would read as the answer to a peer request with the same id.
        if method is None and ("result" in msg or "error" in msg):
            id_ = None
        raise InvalidMessage(id_, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be exactly "2.0"')
    if method is not None:
        if type(method) is not str:
            raise InvalidMessage(id_, INVALID_REQUEST, 'Invalid Request: "method" must be a string')
        if has_id and id_ is None:
            raise InvalidMessage(
                None, INVALID_REQUEST, f'Invalid Request: "id" must be a string or an integer, got {_json_type(raw_id)}'
            )
        params = msg.get("params")
        if params is not None and type(params) is not dict:
            raise InvalidMessage(
                id_, INVALID_PARAMS, f'Invalid params: "params" must be an object, got {_json_type(params)}'
            )
        return REQUEST if has_id else NOTIFICATION
    if "result" in msg:
        if id_ is None:
            raise InvalidMessage(None, INVALID_REQUEST, 'Invalid Request: a response needs a string or integer "id"')
        return RESPONSE
    if "error" in msg:
        return ERROR
    raise InvalidMessage(
        id_, INVALID_REQUEST, 'Invalid Request: the message has neither "method" nor "result" nor "error"'
    )


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__
