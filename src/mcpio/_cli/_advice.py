"""What the command line says where the library's words do not fit a command line (used by
``report``, the one mapping from failures to messages):

* :func:`in_cli_words`: the library's advice names Python keywords (``era='legacy'``); on a
  command line it names the flags (``--era legacy``);
* :func:`unauthorized`: an HTTP server that refuses for want of a bearer token is one line,
  ``this server wants a bearer token: -H 'Authorization: Bearer …'`` (details with ``-v``);
* :func:`not_found`: a URL whose path serves no MCP endpoint (HTTP 404) gets the URL to try.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._client._target import is_url
from .._errors import MCPError
from ._output import clean

#: The library's advice names Python keywords; on a command line it names the flags
_CLI_WORDS = [
    (re.compile(r"\bera=['\"](legacy|modern|auto)['\"]"), r"--era \1"),
    (
        re.compile(r"\bpass client_id= \(and client_secret=\)"),
        "log in: mcpio login URL --client-id ID (--client-secret-env VAR)",
    ),
    (re.compile(r"\bpass client_id="), "log in: mcpio login URL --client-id ID"),
    (re.compile(r"Client\(\.\.\., verify='ca\.pem'\), or (SSL_CERT_FILE=ca\.pem) for mcpio commands"), r"\1 mcpio …"),
]


def in_cli_words(text: str) -> str:
    """``text`` with the Python API's keywords (``era='legacy'``) as this command's flags (``--era legacy``)."""
    for pattern, words in _CLI_WORDS:
        text = pattern.sub(words, text)
    return text


#: The first line for a server that wants a token the CLI cannot obtain by itself
WANTS_TOKEN = "this server wants a bearer token: -H 'Authorization: Bearer …'"


def unauthorized(exc: MCPError, args: Any) -> tuple[str, str, str] | None:
    """(message, hint, details shown with -v) for an HTTP server's refusal for want of a token,
    in the command line's terms; None for any other error."""
    if not is_url(str(getattr(args, "target", "") or "")):
        return None
    from .._auth._discovery import WANTS_TOKEN as NO_OAUTH  # the OAuth client's "no usable metadata"

    data = exc.data if isinstance(exc.data, dict) else {}
    if NO_OAUTH in exc.message:
        return (
            WANTS_TOKEN,
            "ask the server's operator for one (-v says why it cannot be obtained by OAuth)",
            exc.message,
        )
    if data.get("status") != 401:
        return None
    said = exc.message.partition(": ")[2]
    try:  # RFC 6750's JSON body: {"error": …, "error_description": …}
        said = str(json.loads(said).get("error_description") or said)
    except (ValueError, AttributeError):
        pass
    said = clean(said, multiline=False)
    sent = any(h.partition(":")[0].strip().lower() == "authorization" for h in getattr(args, "header", None) or [])
    if sent:
        hint = "send -H 'Authorization: Bearer <token>' with a token its operator gave you"
        return f"the server refused the Authorization header (HTTP 401): {said}", hint, exc.message
    return WANTS_TOKEN, f"the server says: {said}", exc.message


def not_found(exc: MCPError, args: Any) -> str | None:
    """The hint for an HTTP 404 answer to a URL TARGET (:func:`.._client._target.endpoint_hint`)."""
    from .._client._target import endpoint_hint

    return endpoint_hint(str(getattr(args, "target", "") or ""), exc)
