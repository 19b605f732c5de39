"""An MCP server from an OpenAPI description or a FastAPI app (``Server.from_openapi``,
``Server.from_fastapi``, ``mcpio run --openapi``): every operation a tool that makes its HTTP
request. Loaded only when used; the calls need httpx (``pip install 'mcpio[http]'``), YAML
documents PyYAML (``pip install 'mcpio[openapi]'``). docs/guides/openapi.md is the guide.
"""

from __future__ import annotations

from ._build import from_fastapi, from_openapi, from_openapi_async
from ._call import env_name
from ._load import OpenAPIError
from ._operations import Operation

__all__ = ["OpenAPIError", "Operation", "env_name", "from_fastapi", "from_openapi", "from_openapi_async"]
