"""Gateways: a Server that serves other MCP servers (``proxy``), and one that serves many at once
from a host configuration file (``from_config``). Loaded only when used."""

from ._config import from_config
from ._proxy import proxy

__all__ = ["from_config", "proxy"]
