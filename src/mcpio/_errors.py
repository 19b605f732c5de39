"""Errors: the one vocabulary every layer raises and every peer sees.

Exception tree::

    MCPError                      a JSON-RPC error object (code, message, data); what a peer sees
    ├── ProtocolError             someone broke the protocol
    │   ├── LocalProtocolError    ...we did (a bug in the caller of mcpio's API)
    │   └── RemoteProtocolError   ...the peer did (bad message, wrong order)
    ├── InvalidParams, MethodNotFound, ResourceNotFound
    ├── HeaderMismatch            -32020: HTTP headers disagree with the body (2026-07-28)
    ├── MissingRequiredClientCapability  -32021: the request needs a client capability not declared
    ├── UnsupportedProtocolVersion       -32022: the server does not speak the requested version
    ├── RequestTimeout            a request we sent got no answer in time
    └── ConnectionClosed          the transport ended while a request was pending
    TransportError (OSError)      I/O failed below the protocol
    └── EndOfStream               the peer closed its side cleanly

Error codes are the JSON-RPC 2.0 ones plus MCP's (spec-notes §6). ``to_error_object`` is the
single place an exception becomes a wire error; it never puts traceback text on the wire.
"""

from __future__ import annotations

from typing import Any

# JSON-RPC 2.0 §5.1
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# MCP
RESOURCE_NOT_FOUND = -32002  # legacy era (≤ 2025-11-25)
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25
HEADER_MISMATCH = -32020  # 2026-07-28
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021  # 2026-07-28
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28
# Errors only a 2026-07-28 server sends: a client that receives one knows the server's era
# (spec 2026-07-28 versioning §Backward Compatibility: "a recognized modern JSON-RPC error").
MODERN_ERROR_CODES = frozenset({HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION})
# mcpio (implementation-defined range -32000..-32019)
REQUEST_TIMEOUT = -32001
CONNECTION_CLOSED = -32000
# Application-defined (JSON-RPC 2.0 reserves -32768..-32000; 2026-07-28 keeps -32020..-32099 for
# the spec and discourages new codes in -32000..-32019): "429" for the eye. mcpio.middleware.RateLimit.
RATE_LIMITED = -31429


class MCPError(Exception):
    """An error with a JSON-RPC error code, a message and optional data.

    Raise it from a handler to answer the request with exactly this error.
    """

    code: int = INTERNAL_ERROR

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        self.data = data

    def to_error_object(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err

    @classmethod
    def from_error_object(cls, error: Any) -> MCPError:
        """Build from a received JSON-RPC error object (lenient: bad shapes become -32603)."""
        if not isinstance(error, dict):
            return cls(f"malformed error object from peer: {error!r}", INTERNAL_ERROR)
        code = error.get("code")
        message = error.get("message")
        return cls(
            message if isinstance(message, str) else repr(message),
            code if isinstance(code, int) else INTERNAL_ERROR,
            error.get("data"),
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r})"


class ProtocolError(MCPError):
    code = INVALID_REQUEST


class LocalProtocolError(ProtocolError):
    """This side broke the protocol: a bug in the code calling mcpio."""


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol."""


class InvalidParams(MCPError):
    code = INVALID_PARAMS


class MethodNotFound(MCPError):
    code = METHOD_NOT_FOUND


class ResourceNotFound(MCPError):
    """No resource matches the URI; the era table picks the wire code (-32002 or -32602).
    Raise it from a resource function for "no such item" (``raise ResourceNotFound(uri)``): the
    server answers with the era's not-found code and the URI that was read."""

    code = RESOURCE_NOT_FOUND

    def __init__(self, uri: str = "", message: str | None = None, code: int | None = None) -> None:
        super().__init__(message or f"Resource not found{': ' + uri if uri else ''}", code, data={"uri": uri})
        self.uri = uri


class URLElicitationRequired(MCPError):
    """-32042 (2025-11-25): the request cannot go on until the user completes the URL-mode
    elicitations in ``data.elicitations`` (``ElicitRequestURLParams``: mode, message, url,
    elicitationId). A tool raises it (``raise URLElicitationRequired.for_url(url, message)``)
    when the client should retry after the user visited the URL; the client gets it back typed,
    the list as ``elicitations``."""

    code = URL_ELICITATION_REQUIRED

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message, code, data)
        found = data.get("elicitations") if isinstance(data, dict) else None
        self.elicitations: list[dict[str, Any]] = found if isinstance(found, list) else []

    @classmethod
    def for_url(cls, url: str, message: str, *, elicitation_id: str | None = None) -> URLElicitationRequired:
        import secrets

        eid = elicitation_id or secrets.token_urlsafe(16)
        params = {"mode": "url", "message": message, "url": url, "elicitationId": eid}
        return cls(f"This request requires more information: {message}", None, {"elicitations": [params]})


class HeaderMismatch(MCPError):
    """-32020 (2026-07-28, HTTP): a required header is missing or disagrees with the body."""

    code = HEADER_MISMATCH


class MissingRequiredClientCapability(MCPError):
    """-32021 (2026-07-28): serving the request needs client capabilities it did not declare.

    ``required_capabilities`` is the server's ``data.requiredCapabilities`` (a ClientCapabilities
    object, e.g. ``{"sampling": {}}``): give the Client the matching handler and retry."""

    code = MISSING_REQUIRED_CLIENT_CAPABILITY

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message, code, data)
        required = data.get("requiredCapabilities") if isinstance(data, dict) else None
        self.required_capabilities: dict[str, Any] = required if isinstance(required, dict) else {}


class UnsupportedProtocolVersion(MCPError):
    """-32022 (2026-07-28): the server does not implement the requested protocol version.

    ``supported`` lists the versions it does (newest first, as the server sent them);
    ``requested`` is the version that was refused."""

    code = UNSUPPORTED_PROTOCOL_VERSION

    def __init__(self, message: str, code: int | None = None, data: Any = None) -> None:
        super().__init__(message, code, data)
        d = data if isinstance(data, dict) else {}
        supported = d.get("supported")
        self.supported: list[str] = [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []
        requested = d.get("requested")
        self.requested: str | None = requested if isinstance(requested, str) else None


class RequestTimeout(MCPError):
    code = REQUEST_TIMEOUT


class ConnectionClosed(MCPError):
    code = CONNECTION_CLOSED


class TransportError(OSError):
    """I/O failed below the protocol."""


class EndOfStream(TransportError):
    """The peer closed its side of the transport cleanly."""


HIDDEN_DETAIL = "the details are in the server's log"


def to_error_object(exc: BaseException, *, detail: bool = True) -> dict[str, Any]:
    """The one function that turns an exception into a wire error object.

    MCPError keeps its code, message and data; anything else is an internal error whose message
    names the exception type and text (only the type when ``detail`` is false: a remote client
    must not read paths and internals) but never includes a traceback.
    """
    if isinstance(exc, MCPError):
        return exc.to_error_object()
    if not detail:
        return {"code": INTERNAL_ERROR, "message": f"Internal error: {type(exc).__name__} ({HIDDEN_DETAIL})"}
    from ._suggest import exception_text  # CPython's "Did you mean" kept (on the error path only)

    text = exception_text(exc)
    return {
        "code": INTERNAL_ERROR,
        "message": f"Internal error: {type(exc).__name__}: {text}" if text else f"Internal error: {type(exc).__name__}",
    }


class SafePathError(ValueError):
    """A path that is refused (outside the roots, NUL byte, a link, not a regular file …).
    Public as ``mcpio.SafePathError``; defined here so the server's error handling needs no
    ``_safepath`` at start-up."""
