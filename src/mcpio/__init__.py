"""mcpio: the Model Context Protocol, from the specification.

Public API (everything else lives in private ``_modules``)::

    from mcpio import Server, Context, Image
"""

from ._version import __version__

# typing.TYPE_CHECKING (type checkers read this name as True) without importing typing here.
TYPE_CHECKING = False

# Names load on first use (PEP 562): ``import mcpio`` stays cheap, and a host that spawns a
# server pays only for what that server touches.
_EXPORTS = {
    "Audio": "._content",
    "EmbeddedResource": "._content",
    "Image": "._content",
    "ResourceLink": "._content",
    "Text": "._content",
    "ToolResult": "._content",
    "ConnectionClosed": "._errors",
    "EndOfStream": "._errors",
    "LocalProtocolError": "._errors",
    "MCPError": "._errors",
    "ProtocolError": "._errors",
    "RemoteProtocolError": "._errors",
    "RequestTimeout": "._errors",
    "ResourceNotFound": "._errors",
    "TransportError": "._errors",
    "ClientCapabilityError": "._server._context",
    "Context": "._server._context",
    "Depends": "._server._deps",
    "ElicitResult": "._server._elicit",
    "Message": "._server._resources",
    "Arg": "._server._catalog",
    "Server": "._server._server",
    "Request": "._server._middleware",
    "Extension": "._server._extensions",
    "ToolError": "._server._tools",
    "StateHandle": "._handle",
    "SessionState": "._server._session_state",
    "SessionStateError": "._server._session_state",
    "Client": "._client._client",
    "ClientCache": "._client._cache",
    "MemoryCache": "._client._cache",
    "RedisCache": "._client._cache_redis",
    "TaskCancelled": "._client._tasks",
    "AppView": "._client._apps",
    "AppViewError": "._client._apps",
    "InvalidParams": "._errors",
    "MethodNotFound": "._errors",
    "HeaderMismatch": "._errors",
    "MissingRequiredClientCapability": "._errors",
    "UnsupportedProtocolVersion": "._errors",
    "URLElicitationRequired": "._errors",
    "ServerExited": "._transports._subprocess",
    "ServerNotFound": "._transports._spawn",
    "ConfigError": "._host._config",
    "ServerSpec": "._host._config",
    "load_config": "._host._config",
    "Host": "._host._host",
    "PathParam": "._safepath",
    "SafePath": "._safepath",
    "SafePathError": "._safepath",
    "SkillVerificationError": "._skills",
}

if TYPE_CHECKING:
    from ._client._apps import AppView, AppViewError
    from ._client._cache import ClientCache, MemoryCache
    from ._client._cache_redis import RedisCache
    from ._client._client import Client
    from ._client._tasks import TaskCancelled
    from ._content import Audio, EmbeddedResource, Image, ResourceLink, Text, ToolResult
    from ._errors import (
        ConnectionClosed,
        EndOfStream,
        HeaderMismatch,
        InvalidParams,
        LocalProtocolError,
        MCPError,
        MethodNotFound,
        MissingRequiredClientCapability,
        ProtocolError,
        RemoteProtocolError,
        RequestTimeout,
        ResourceNotFound,
        TransportError,
        UnsupportedProtocolVersion,
        URLElicitationRequired,
    )
    from ._handle import StateHandle
    from ._host._config import ConfigError, ServerSpec, load_config
    from ._host._host import Host
    from ._safepath import PathParam, SafePath, SafePathError
    from ._server._catalog import Arg
    from ._server._context import ClientCapabilityError, Context
    from ._server._deps import Depends
    from ._server._elicit import ElicitResult
    from ._server._extensions import Extension
    from ._server._middleware import Request
    from ._server._resources import Message
    from ._server._server import Server
    from ._server._session_state import SessionState, SessionStateError
    from ._server._tools import ToolError
    from ._skills import SkillVerificationError
    from ._transports._spawn import ServerNotFound
    from ._transports._subprocess import ServerExited


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'mcpio' has no attribute {name!r}")
    # `from .module import name`, without importing importlib
    obj = getattr(__import__(module[1:], globals(), None, (name,), 1), name)
    try:
        obj.__module__ = "mcpio"
    except (AttributeError, TypeError):
        pass
    globals()[name] = obj
    return obj


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "AppView",
    "AppViewError",
    "Arg",
    "Audio",
    "Client",
    "ClientCache",
    "ClientCapabilityError",
    "ConfigError",
    "ConnectionClosed",
    "Context",
    "Depends",
    "ElicitResult",
    "EmbeddedResource",
    "EndOfStream",
    "Extension",
    "HeaderMismatch",
    "Host",
    "Image",
    "InvalidParams",
    "LocalProtocolError",
    "MCPError",
    "MemoryCache",
    "Message",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "PathParam",
    "ProtocolError",
    "RedisCache",
    "RemoteProtocolError",
    "Request",
    "RequestTimeout",
    "ResourceLink",
    "ResourceNotFound",
    "SafePath",
    "SafePathError",
    "Server",
    "ServerExited",
    "ServerNotFound",
    "ServerSpec",
    "SessionState",
    "SessionStateError",
    "SkillVerificationError",
    "StateHandle",
    "TaskCancelled",
    "Text",
    "ToolError",
    "ToolResult",
    "TransportError",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
    "__version__",
    "load_config",
]
