"""The four tools of TM Dev Lab's "benchmark-mcp-servers" workload, written once for every Python
framework (each server file registers these functions with its own decorator):

* ``calculate_fibonacci(n)``: recursive Fibonacci (CPU);
* ``fetch_external_data(endpoint)``: an HTTP GET to a local mock API (I/O, httpx.AsyncClient
  shared per process);
* ``process_json_data(data)``: upper-cases every string in a JSON object (JSON transform);
* ``simulate_database_query(query, delay_ms)``: waits ``delay_ms`` (a database's latency).

Each answers one text block holding a JSON object, as the original servers do.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

_client: Any = None


def _fib(x: int) -> int:
    return x if x <= 1 else _fib(x - 1) + _fib(x - 2)


def calculate_fibonacci(n: int) -> str:
    """Compute the n-th Fibonacci number recursively (0 <= n <= 40)."""
    if not 0 <= n <= 40:
        raise ValueError("n must be between 0 and 40")
    return json.dumps({"input": n, "result": _fib(n), "server_type": "python"})


async def fetch_external_data(endpoint: str) -> str:
    """GET an HTTP endpoint and report its status and time."""
    global _client
    import httpx

    if _client is None:
        _client = httpx.AsyncClient(timeout=10.0)
    start = time.perf_counter()
    try:
        r = await _client.get(endpoint)
        status, error = r.status_code, None
    except httpx.HTTPError as exc:
        status, error = 0, str(exc)
    out: dict[str, Any] = {
        "url": endpoint,
        "status_code": status,
        "response_time_ms": round((time.perf_counter() - start) * 1000, 3),
        "server_type": "python",
    }
    if error:
        out["error"] = error
    return json.dumps(out)


def _upper(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _upper(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_upper(v) for v in obj]
    return obj.upper() if isinstance(obj, str) else obj


def process_json_data(data: dict[str, Any]) -> str:
    """Upper-case every string field of a JSON object."""
    return json.dumps({"original_keys": list(data), "transformed_data": _upper(data), "server_type": "python"})


async def simulate_database_query(query: str, delay_ms: int = 0) -> str:
    """Simulate a database query that takes delay_ms milliseconds (0-5000)."""
    if not 0 <= delay_ms <= 5000:
        raise ValueError("delay_ms must be between 0 and 5000")
    await asyncio.sleep(delay_ms / 1000)
    return json.dumps({"query": query, "delay_ms": delay_ms, "timestamp": time.time(), "server_type": "python"})


TOOLS = (calculate_fibonacci, fetch_external_data, process_json_data, simulate_database_query)
