"""How mcpio shows a URL it was given: one rule for every error text, log line, ``mcpio doctor``
and ``mcpio inspect`` report and child command line that names one.

:func:`shown` is the URL without the ``user:password@`` of its userinfo (RFC 3986 §3.2.1: a
password there is deprecated, and showing one is a leak) and with the value of each query (and
fragment) parameter whose name looks like a credential (:data:`SECRET_KEY`: ``api_key``,
``access_token``, ``key``, ``sig``, ``X-Amz-Signature``…, read as the server decodes it)
replaced by ``[redacted]``; every other character is the one given. The URL
itself is still what mcpio connects to, resolves against and sends: only its shown form changes.

httpx logs each request at INFO with its whole URL: :func:`show_urls_in_httpx_log` (called by
whatever makes an httpx client for a URL it was given) makes that line show it so too.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "[redacted]"
# A name (a query parameter's, an argument's, a header's) whose value is a credential.
SECRET_KEY = re.compile(
    r"passw|passphrase|^pass$|pwd|secret|token|^auth$|authoriz|cookie|credential|api[-_]?key|private[-_]?key"
    r"|session|signature|^pin$|^key$|^sig$",
    re.IGNORECASE,
)


def shown(url: str) -> str:
    """``url`` as mcpio shows it (module docstring): the text given, character for character,
    without its userinfo and with each credential-named parameter's value replaced. A parameter's
    name is matched as the server reads it (``application/x-www-form-urlencoded``: ``+`` is a space,
    ``%XX`` the byte: ``%74oken`` is ``token``); in a text of several words (a command line), each
    URL loses its userinfo; a text that is no URL is returned as it is."""
    from urllib.parse import unquote_plus  # not on `import mcpio`'s path

    def hidden(pairs: str) -> str:
        # "&" separates parameters, and ";" too for servers that still split on it (HTML 4.01
        # §B.2.2): a value is redacted when either reading makes its name a credential's.
        out = _SEPARATOR.split(pairs)
        for i in range(0, len(out), 2):  # the separators are at the odd indexes
            name, eq, _ = out[i].partition("=")
            if eq and SECRET_KEY.search(unquote_plus(name)):
                out[i] = name + eq + REDACTED
        return "".join(out)

    # RFC 3986 §3: the fragment follows the first "#", the query the first "?" before it.
    head, hash_mark, fragment = url.partition("#")
    head, question_mark, query = head.partition("?")
    return _USERINFO.sub(r"\1", head + question_mark + hidden(query) + hash_mark + hidden(fragment))


_SEPARATOR = re.compile(r"([&;])")  # kept by re.split: the text shown is the text given
# RFC 3986 §3.2: the authority follows "//" (after a scheme, §3.1) up to "/", "?" or "#", and its
# userinfo ends at its last "@". At the start of the text or of any word in it (after a space, a
# quote or an "="): a command line naming a URL (``npx mcp-remote "https://user:pw@host/mcp"``,
# ``--url=https://…``) is shown so too.
_USERINFO = re.compile(r"((?<![^\s\"'=])(?:[A-Za-z][A-Za-z0-9+.-]*:)?//)[^/?#\s]*@")


class _ShownInHttpxLog:
    """A filter of the ``httpx`` logger (``logging.Filter``'s protocol): the URL of its request
    line (``HTTP Request: %s %s "%s %d %s"``: method, URL, version, status, reason) as shown."""

    def filter(self, record: object) -> bool:
        args = getattr(record, "args", None)
        if str(getattr(record, "msg", "")).startswith("HTTP Request:") and isinstance(args, tuple) and len(args) > 1:
            record.args = (args[0], shown(str(args[1])), *args[2:])  # type: ignore[attr-defined]
        return True


_in_httpx_log = _ShownInHttpxLog()


def show_urls_in_httpx_log() -> None:
    """Install the filter that shows the URL of each line httpx logs (module docstring); once."""
    import logging

    httpx_log = logging.getLogger("httpx")
    if _in_httpx_log not in httpx_log.filters:
        httpx_log.addFilter(_in_httpx_log)


def shown_repr(obj: Any) -> str:
    """The ``repr`` of dataclass ``obj`` as ``dataclass`` writes it (each field with ``repr=True``),
    each text shown by :func:`shown`: the repr of a configuration holding URLs (an OAuth
    proxy's upstream endpoints) names them without their credentials. For ``@dataclass(repr=False)``
    classes: ``__repr__ = shown_repr``."""
    import dataclasses  # at first use: not on `import mcpio`'s path

    def value(v: Any) -> str:
        return repr(shown(v)) if isinstance(v, str) else repr(v)

    fields = ", ".join(f"{f.name}={value(getattr(obj, f.name))}" for f in dataclasses.fields(obj) if f.repr)
    return f"{type(obj).__qualname__}({fields})"
