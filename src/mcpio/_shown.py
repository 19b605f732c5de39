"""How mcpio shows a URL it was given: one rule for every error text, log line, ``mcpio doctor``
and ``mcpio inspect`` report and child command line that names one.

:func:`shown` is the URL without the ``user:password@`` of its userinfo (RFC 3986 §3.2.1: a
password there is deprecated, and showing one is a leak) and with the value of each query (and
fragment) parameter whose name looks like a credential (:data:`SECRET_KEY`: ``api_key``,
``access_token``, ``key``, ``sig``, ``X-Amz-Signature``…) replaced by ``[redacted]``. The URL
itself is still what mcpio connects to, resolves against and sends: only its shown form changes.

httpx logs each request at INFO with its whole URL: :func:`show_urls_in_httpx_log` (called by
whatever makes an httpx client for a URL it was given) makes that line show it so too.
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"
# A name (a query parameter's, an argument's, a header's) whose value is a credential.
SECRET_KEY = re.compile(
    r"passw|passphrase|^pass$|pwd|secret|token|^auth$|authoriz|cookie|credential|api[-_]?key|private[-_]?key"
    r"|session|signature|^pin$|^key$|^sig$",
    re.IGNORECASE,
)


def shown(url: str) -> str:
    """``url`` as mcpio shows it (module docstring); a text that is no URL is returned as it is."""
    from urllib.parse import unquote_plus, urlsplit, urlunsplit  # not on `import mcpio`'s path

    try:
        parts = urlsplit(url)
    except ValueError:  # an invalid IPv6 literal, say: no userinfo, query or fragment told apart
        scheme, sep, rest = url.partition("://")
        return scheme + sep + rest[: min(i for i in (rest.find("/"), len(rest)) if i >= 0)].rpartition("@")[2] + "/…"
    netloc = parts.netloc.rpartition("@")[2]

    def hidden(pairs: str) -> str:
        out = []
        for pair in pairs.split("&"):
            name, eq, _ = pair.partition("=")
            out.append(name + eq + REDACTED if eq and SECRET_KEY.search(unquote_plus(name)) else pair)
        return "&".join(out)

    query, fragment = hidden(parts.query), hidden(parts.fragment)
    if (netloc, query, fragment) == (parts.netloc, parts.query, parts.fragment):
        return url  # as given, to the character
    return urlunsplit(parts._replace(netloc=netloc, query=query, fragment=fragment))


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
