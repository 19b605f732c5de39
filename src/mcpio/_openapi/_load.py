"""Reading an OpenAPI description: a dict, a file or a URL; JSON, or YAML (the ``openapi`` extra).

OpenAPI 3.0.x and 3.1.x are read. A Swagger 2.0 document is refused with what to do (convert it
to OpenAPI 3 first); anything else is refused naming what was found. YAML needs PyYAML
(``pip install 'mcpio[openapi]'``), imported only for a document that is not JSON.

A hostile document is refused with an :class:`OpenAPIError`, not a hang or a traceback: YAML whose
aliases expand to more than ``MAX_VALUES`` values (a "billion laughs": ten lines, 10^8 schemas) or
refer to themselves (a cycle no JSON document can hold), and nesting deeper than Python recurses.
A document downloaded from a URL is read up to ``MAX_DOWNLOAD_BYTES`` and within the timeout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import msgspec

from .._shown import shown

MAX_VALUES = 5_000_000  # once aliases are expanded; GitHub's 13 MB document holds about 260,000
MAX_DOWNLOAD_BYTES = 64 * 2**20  # a document read from a URL; GitHub's, among the largest, is 13 MB
TOO_DEEP = "it nests deeper than mcpio reads (about 900 levels)"


class OpenAPIError(ValueError):
    """An OpenAPI description that cannot be served: the message says what and where."""


def load(spec: Any, timeout: float = 30.0) -> tuple[dict[str, Any], str]:
    """The document ``spec`` names (a mapping, a path or an http(s) URL) and where it came from
    (the URL as given, which a relative servers URL resolves against; messages show it as
    :func:`.._shown.shown` does, without its credentials)."""
    if isinstance(spec, Mapping):
        doc, where = dict(spec), "the OpenAPI document"
    elif isinstance(spec, (str, os.PathLike)) and str(spec).startswith(("http://", "https://")):
        doc = parse(_download(str(spec), timeout), shown(str(spec)))
        check_version(doc, shown(str(spec)))
        return doc, str(spec)
    elif isinstance(spec, (str, os.PathLike)):
        where = os.fspath(spec)
        try:
            with open(where, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise OpenAPIError(f"{where}: cannot read the OpenAPI document ({exc.strerror or exc})") from None
        doc = parse(data, where)
    else:
        raise TypeError(f"spec must be a dict, a path or an http(s) URL, not {type(spec).__name__}")
    check_version(doc, where)
    return doc, where


def _download(url: str, timeout: float) -> bytes:
    """The document at ``url``, read up to ``MAX_DOWNLOAD_BYTES`` and within ``timeout`` in all,
    from the connection to the last byte (a server streaming without end, a byte at a time, or
    sending its headers and then nothing, is refused at ``timeout``, not waited for). Read on an
    event loop of its own; refused in a coroutine, whose loop a download would stall for its
    whole length (every other task on it waiting): ``await Server.from_openapi_async`` is this
    call on a thread of its own."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_fetch(url, timeout))
    raise RuntimeError(
        "Server.from_openapi(URL) in a coroutine would block its event loop for the whole download; "
        "use await Server.from_openapi_async(URL, ...) there"
    )


async def _fetch(url: str, timeout: float) -> bytes:
    import asyncio

    import httpx  # the http extra

    from ._redact import redact_http_log

    redact_http_log()  # httpx logs the URL of each request: shown without its credentials
    chunks: list[bytes] = []
    size = 0
    where = shown(url)
    try:
        async with (
            asyncio.timeout(timeout),  # the whole download's, connection to last byte (httpx's are per read)
            httpx.AsyncClient(timeout=timeout, follow_redirects=True) as client,
            client.stream("GET", url) as r,
        ):
            if r.status_code != 200:
                raise OpenAPIError(f"{where}: the server answered {r.status_code} instead of the OpenAPI document")
            async for chunk in r.aiter_bytes():
                size += len(chunk)
                if size > MAX_DOWNLOAD_BYTES:
                    raise OpenAPIError(
                        f"{where}: the OpenAPI document is over {MAX_DOWNLOAD_BYTES // 2**20} MiB; download it "
                        "and pass the file (or check the URL)"
                    )
                chunks.append(chunk)
    except (TimeoutError, httpx.TimeoutException):  # the deadline, or a read's timeout at the same moment
        raise OpenAPIError(
            f"{where}: the OpenAPI document did not arrive within {timeout} s; download it and pass "
            "the file (or check the URL)"
        ) from None
    except httpx.HTTPError as exc:
        raise OpenAPIError(f"{where}: cannot download the OpenAPI document ({type(exc).__name__}: {exc})") from None
    return b"".join(chunks)


def parse(data: bytes | str, where: str) -> dict[str, Any]:
    """JSON when it looks like JSON (``{`` first), else YAML."""
    raw = data.encode() if isinstance(data, str) else data.removeprefix(b"\xef\xbb\xbf")  # no BOM
    if raw.lstrip()[:1] == b"{":
        try:
            doc = msgspec.json.decode(raw)  # GitHub's 13 MB: ~3x faster than the json module
        except msgspec.DecodeError as exc:
            raise OpenAPIError(f"{where}: not valid JSON ({exc})") from None
        except RecursionError:
            raise OpenAPIError(f"{where}: {TOO_DEEP}") from None
    else:
        doc = _yaml(raw.decode("utf-8", "replace"), where)
        _check_expansion(doc, where)
    if not isinstance(doc, dict):
        raise OpenAPIError(f"{where}: an OpenAPI document is an object, not {type(doc).__name__}")
    return doc


def _yaml(text: str, where: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise OpenAPIError(f"{where}: reading a YAML document needs PyYAML: pip install 'mcpio[openapi]'") from None
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when the wheel has it (10x faster)
    # JSON's values only: a date stays the string it is (YAML 1.1 would make it a datetime, which no
    # JSON Schema holds)
    loader: Any = type("Loader", (base,), {})
    loader.yaml_implicit_resolvers = {
        k: [r for r in v if r[0] != "tag:yaml.org,2002:timestamp"] for k, v in base.yaml_implicit_resolvers.items()
    }
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise OpenAPIError(f"{where}: not valid JSON or YAML ({exc})") from None
    except RecursionError:
        raise OpenAPIError(f"{where}: {TOO_DEEP}") from None


def _check_expansion(doc: Any, where: str) -> None:
    """Refuse YAML whose aliases make a cycle or expand past ``MAX_VALUES`` (module docstring):
    each shared node is sized once (depth first, iteratively), so the check costs the document's
    own size, not its expansion."""
    size: dict[int, int] = {}
    open_: set[int] = set()  # the nodes whose children are being sized: the current path
    stack: list[tuple[Any, bool]] = [(doc, False)]
    while stack:
        node, sized = stack.pop()
        key = id(node)
        children = list(node.values() if isinstance(node, dict) else node)
        if sized:
            open_.discard(key)
            size[key] = 1 + sum(size.get(id(c), 1) for c in children)
            if size[key] > MAX_VALUES:
                raise OpenAPIError(
                    f"{where}: its YAML aliases expand to over {MAX_VALUES:,} values; write the document without "
                    "repeating aliases (or as JSON)"
                )
        elif key in open_:
            raise OpenAPIError(
                f"{where}: a YAML alias refers to a node that contains it; an OpenAPI document has no cycles"
            )
        elif key not in size:
            open_.add(key)
            stack.append((node, True))
            stack.extend((c, False) for c in children if isinstance(c, (dict, list)))


def check_version(doc: dict[str, Any], where: str) -> None:
    if "swagger" in doc:
        raise OpenAPIError(
            f"{where} is a Swagger {doc['swagger']} document; mcpio reads OpenAPI 3.0 and 3.1: convert it "
            "first (for example with the swagger2openapi tool), then pass the converted document"
        )
    version = doc.get("openapi")
    if not isinstance(version, str) or not version.startswith(("3.0", "3.1")):
        raise OpenAPIError(f"{where}: its openapi field is {version!r}; mcpio reads OpenAPI 3.0.x and 3.1.x documents")
    if not isinstance(doc.get("paths", {}), dict):
        raise OpenAPIError(f"{where}: its paths field is not an object")
