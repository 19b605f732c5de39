"""No configured credential reaches the model: every text a generated tool or resource returns
(the API's answers, success or error, and mcpio's own messages) has each configured value replaced
by ``[redacted]``.

An API that echoes its request (the URL in a 404, the headers in a debug answer, an httpbin-like
service) would otherwise put the query ``apiKey``, the bearer token or the ``headers=`` key into
the model's context, which the credentials exist to keep out (spec 2025-11-25 basic/authorization
§Token Passthrough: the model's side never holds the API's token). Redacted are the values of
``headers=``, of the credentials (``secrets=`` / ``MCPIO_OPENAPI_*``), of the headers the
``credentials=`` hook returns on that call, and the base URL's ``user:password``; each as sent and
as an echo may spell it: percent-encoded (path, query or form), JSON-escaped, base64-encoded, the
token of an ``Authorization: <scheme> <token>`` value, and a Basic value's ``user:password`` and
password. A value shorter than ``MIN_SECRET`` characters is not redacted: it would blank out
ordinary words (a tenant, a version) and is no credential.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

MIN_SECRET = 8
REDACTED = "[redacted]"
_AUTHORIZATION = re.compile(r"([A-Za-z][A-Za-z0-9_-]*) +(\S+)")  # "<scheme> <token>" (RFC 9110 §11.4)


def spellings(values: Iterable[str]) -> frozenset[str]:
    """Every spelling of ``values`` that :class:`Redactor` hides (module docstring)."""
    plain: set[str] = set()
    for value in values:
        plain.add(value)
        scheme = _AUTHORIZATION.fullmatch(value)
        if scheme is None:
            continue
        plain.add(scheme[2])
        if scheme[1].lower() == "basic":
            try:
                pair = base64.b64decode(scheme[2], validate=True).decode()
            except (binascii.Error, ValueError):
                continue
            plain.update((pair, pair.partition(":")[2]))
    found: set[str] = set()
    for s in plain:
        if len(s) < MIN_SECRET:
            continue
        escaped = json.dumps(s)[1:-1]
        found.update((s, quote(s, safe=""), quote(s), quote_plus(s), escaped, escaped.replace("/", "\\/")))
        found.update((json.dumps(s, ensure_ascii=False)[1:-1], base64.b64encode(s.encode()).decode()))
    return frozenset(f for f in found if len(f) >= MIN_SECRET)


class Redactor:
    """``redact(text)``: ``text`` with every spelling given replaced by ``[redacted]``, the longest
    first (a value's encoded form before a shorter value inside it)."""

    def __init__(self, forms: Iterable[str]) -> None:
        ordered = sorted(set(forms), key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(REDACTED, text)
