"""How mcpio shows a URL it was given: one rule for every error text, log line, ``mcpio doctor``
and ``mcpio inspect`` report and child command line that names one.

:func:`shown` is the URL without the ``user:password@`` of its userinfo (RFC 3986 §3.2.1: a
password there is deprecated, and showing one is a leak) and with the value of each query (and
fragment) parameter whose name looks like a credential (:data:`SECRET_KEY`: ``api_key``,
``access_token``, ``key``, ``sig``, ``X-Amz-Signature``…) replaced by ``[redacted]``. The URL
itself is still what mcpio connects to, resolves against and sends: only its shown form changes.
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
