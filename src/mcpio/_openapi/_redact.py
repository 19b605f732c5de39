"""No configured credential reaches the model: every text a generated tool or resource returns
(the API's answers, success or error, and mcpio's own messages) has each configured value replaced
by ``[redacted]``.

An API that echoes its request (the URL in a 404, the headers in a debug answer, an httpbin-like
service) would otherwise put the query ``apiKey``, the bearer token or the ``headers=`` key into
the model's context, which the credentials exist to keep out (spec 2025-11-25 basic/authorization
§Token Passthrough: the model's side never holds the API's token). Redacted are the values of
``headers=``, of the credentials (``secrets=`` / ``MCPIO_OPENAPI_*``), the base URL's
``user:password``, and what else the request carried as it went out but for what the arguments
put there (``_call._carried``: the ``credentials=`` hook's headers, a ``client=``'s own headers,
query and cookies, what its auth flow added), but for headers that carry no credential
(:func:`credential_headers`); also the token of an ``Authorization: <scheme> <token>``
value, a Basic value's ``user:password`` and password, and each cookie's value of a ``Cookie``
header.

One rule spells each value as an echo may: every character other than an ASCII letter or digit
may appear as itself or escaped, in any mix: percent-encoded (its UTF-8 bytes, ``%2F`` or
``%2f``; ``+`` for a space), JSON-escaped (``\\u002F`` or ``\\u002f``, ``\\/``, ``\\"``…), as
an HTML character reference (``&amp;``, ``&#38;``, ``&#x26;``), Python-escaped (``\\x2f``:
a ``bytes`` or ``ascii()`` repr, escaped bytes; ``\\'``), and a percent-encoding's ``%``
escaped in turn (``\\u00252F``: the URL inside a JSON answer of an encoder that escapes every
symbol). Letters and digits are matched as themselves or Python-escaped (``\\x73``: bytes
escaped every one), no more. A second form has every
percent-encoding twice encoded (``%252F``: a URL in another URL's query, a redirect's ``next=``).
The value's base64 (standard or URL alphabet, padded or not) is redacted too, and so is a value's
UTF-8 read as Latin-1 (a non-ASCII header value echoed by a server that reads header bytes so, as
ASGI and WSGI servers do). A value shorter than ``MIN_SECRET`` characters is not redacted: it
would blank out ordinary words (a tenant, a version) and is no credential.

Matching is linear in the text: each character's spellings are an atomic group (``(?>…)``, the
longest first) of fixed strings, so no match backtracks into a character already matched; the
first character's are alternatives of the whole pattern instead, each starting with a fixed
character, which the regex engine's scan for where a match may start needs. The
price: a value whose own characters read as an escape (``%25``, ``\\\\``, ``&amp;`` in the secret
itself) is found as it is, but not when the echo also escapes another of its characters.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from .._shown import show_urls_in_httpx_log

MIN_SECRET = 8
REDACTED = "[redacted]"
_AUTHORIZATION = re.compile(r"([A-Za-z][A-Za-z0-9_-]*) +(\S+)")  # "<scheme> <token>" (RFC 9110 §11.4)
_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NO_CREDENTIAL = frozenset(
    ("accept", "accept-charset", "accept-encoding", "accept-language", "cache-control", "connection",
     "content-language", "content-length", "content-type", "host", "prefer", "transfer-encoding", "user-agent")
)  # fmt: skip
_HTML_NAMED = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}
_PY_SHORT = {"'": "\\'"}  # Python's own short escape beyond JSON's (repr of a str holding both quotes)


def credential_headers(
    headers: Mapping[str, Any] | Iterable[tuple[str, Any]], public: frozenset[str] = frozenset()
) -> list[str]:
    """The values of configured ``headers`` that may be credentials: all but those of the headers
    HTTP defines for content negotiation, the connection, framing, caching, preferences, the host
    and the client's name (RFC 9110 §12.5, §7.6.1, §8.3, §8.6, §7.2, §10.1.5; RFC 9112 §6.1;
    RFC 9111 §5.2; RFC 7240), which carry none (``application/json`` is no secret to blank out of
    every answer), and those the operator named ``public`` (lower case; ``public_headers=``: an
    ``X-Env: production``). A ``Cookie`` header's cookie values count each on its
    own too (RFC 6265 §4.2.1: ``name=value; name=value``): an echo may show the cookies it read."""
    found: list[str] = []
    for key, value in headers.items() if isinstance(headers, Mapping) else headers:
        if isinstance(value, str) and key.lower() not in _NO_CREDENTIAL and key.lower() not in public:
            found.append(value)
            if key.lower() == "cookie":
                found += [pair.partition("=")[2].strip() for pair in value.split(";")]
    return found


def header_text(value: bytes) -> str:
    """A header value's bytes as text: UTF-8, else Latin-1 (RFC 9110 §5.5: obs-text)."""
    try:
        return value.decode()
    except UnicodeDecodeError:
        return value.decode("latin-1")


def secret_values(configured: Iterable[str]) -> frozenset[str]:
    """The values :class:`Redactor` hides for the ``configured`` ones (module docstring)."""
    plain: set[str] = set()
    for value in configured:
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
    return frozenset(s for s in plain if len(s) >= MIN_SECRET)


def _anycase(hexdigits: str) -> str:
    return "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in hexdigits)


def _alone(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _python(ch: str) -> str:
    """A regex of ``ch`` as a Python (or C) string or bytes literal escapes it: ``\\xHH`` below
    U+0100, which for a value's UTF-8 read as Latin-1 is each UTF-8 byte (``b'\\xc3\\xa4'``),
    else ``\\U`` and eight hex digits past the BMP (``\\u`` within it is JSON's)."""
    code = ord(ch)
    return r"\\x" + _anycase(f"{code:02x}") if code < 0x100 else r"\\U" + _anycase(f"{code:08x}")


def _escapes(ch: str) -> list[str]:
    """Regexes of ``ch`` as text spells it: itself, JSON-escaped, an HTML character reference,
    Python-escaped (letters and digits: only so, and as themselves)."""
    if _alone(ch):
        return [re.escape(ch), _python(ch)]
    units = ch.encode("utf-16-be")  # a JSON \\u escape per UTF-16 code unit (RFC 8259 §7)
    json_u = "".join(r"\\u" + _anycase(units[i : i + 2].hex()) for i in range(0, len(units), 2))
    found = [re.escape(ch), json_u, f"&#{ord(ch)};", f"&#[xX]{_anycase(f'{ord(ch):x}')};", _python(ch)]
    found += [re.escape(e) for e in (_JSON_SHORT.get(ch), _HTML_NAMED.get(ch), _PY_SHORT.get(ch)) if e]
    return found


def _group(options: Iterable[str]) -> str:
    """An atomic group of ``options``, the longest first (a shorter one may be a prefix of it)."""
    return "(?>" + "|".join(sorted(set(options), key=len, reverse=True)) + ")"


def _char(ch: str, twice: bool) -> list[str]:
    """Regexes of every spelling of ``ch`` (module docstring): its text escapes, or its
    percent-encoding (``twice``: encoded again, ``%252F``) with each of those characters
    text-escaped, or ``+`` for a space. Each begins with a fixed character (the ``%``'s spellings
    are one each), so a pattern's first character's may be alternatives of the whole pattern, as
    the regex engine's scan for where a match may start needs (an atomic group defeats it)."""
    if _alone(ch):
        return _escapes(ch)
    hexes = [("25" if twice else "") + _anycase(f"{b:02X}") for b in ch.encode()]
    after = "".join(_group(_escapes("%")) + h for h in hexes[1:])  # a UTF-8 sequence's later bytes
    options = [*_escapes(ch), *(p + hexes[0] + after for p in _escapes("%"))]
    if ch == " ":
        options += _escapes("+")
    return options


def _pattern(value: str) -> set[tuple[int, str]]:
    """(the shortest text it matches, regex) for each form of ``value``: as it is, spelled with
    percent-encodings once or twice (an echo encodes a URL whole, never half of it twice; and
    ``%25`` read as once or twice in one pattern would need backtracking), both also for its UTF-8
    read as Latin-1 (as servers read header bytes), and its base64. A spelled form is one regex per
    spelling of its first character, each followed by an atomic group per later character."""
    raw = value.encode()
    forms = {(len(v), re.escape(v)) for v in (value, raw.decode("latin-1"))}
    for v in (value, raw.decode("latin-1")):
        for twice in (False, True):
            first, *later = (_char(c, twice) for c in v)
            rest = "".join(_group(options) for options in later)
            forms |= {(len(v), head + rest) for head in first}
    for encoded in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode()):
        bare = encoded.rstrip("=")
        forms.add((len(bare), re.escape(bare) + "={0,2}"))
    return forms


class Redactor:
    """``redact(text)``: ``text`` with every spelling of each value given (:func:`secret_values`)
    replaced by ``[redacted]``, the longest value first (a value's forms before a shorter value
    inside it)."""

    def __init__(self, values: Iterable[str]) -> None:
        forms = sorted({f for v in values for f in _pattern(v)}, key=lambda f: f[0], reverse=True)
        self._pattern = re.compile("|".join(f[1] for f in forms)) if forms else None

    def __call__(self, text: str) -> str:
        return text if self._pattern is None else self._pattern.sub(REDACTED, text)

    def json(self, data: Any) -> Any:
        """Parsed JSON ``data`` (changed in place) with each string redacted, object keys included,
        and a number whose JSON text holds a value replaced by ``"[redacted]"``: value by value, so
        the answer keeps its structure (a redaction of the JSON text could take a closing quote, or
        leave ``[redacted]`` where a number was). A value an output schema constrains (``pattern``,
        ``format``, ``enum``, a number's type) may so become one that the schema refuses: the
        answer still goes out, as keeping the credential out is what redaction is for."""
        top = [data]
        todo: list[list[Any] | dict[str, Any]] = [top]  # no recursion: any depth json.loads accepts
        while todo:
            node = todo.pop()
            pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
            if isinstance(node, dict):
                node.clear()
            for key, value in pairs:
                if isinstance(value, (list, dict)):
                    todo.append(value)
                elif isinstance(value, str):
                    value = self(value)
                elif isinstance(value, (int, float)) and not isinstance(value, bool):
                    value = REDACTED if self(spelled := json.dumps(value)) != spelled else value
                node[self(key) if isinstance(key, str) else key] = value  # type: ignore[index]
        return top[0]


class _LogRedaction:
    """A filter of the ``httpx`` logger (``logging.Filter``'s protocol): httpx logs each request at
    INFO with its whole URL, a query credential included; each record leaves with the credentials
    of every live :class:`Redactor` given to :func:`redact_http_log` redacted (a process may serve
    several APIs, and log records do not say which client sent them)."""

    def __init__(self) -> None:
        self.redactors: weakref.WeakSet[Redactor] = weakref.WeakSet()

    def filter(self, record: Any) -> bool:
        redactors = list(self.redactors)
        if redactors:
            message = redacted = record.getMessage()
            for redact in redactors:
                redacted = redact(redacted)
            if redacted != message:  # a record without a credential keeps its template and args
                record.msg, record.args = redacted, None
        return True


_log_redaction = _LogRedaction()


def redact_http_log(redact: Redactor | None = None) -> None:
    """Show each URL httpx logs as :func:`.._shown.shown` does, and keep ``redact``'s credentials
    out of httpx's log lines while ``redact`` lives."""
    import logging

    show_urls_in_httpx_log()
    httpx_log = logging.getLogger("httpx")
    if _log_redaction not in httpx_log.filters:
        httpx_log.addFilter(_log_redaction)
    if redact is not None:
        _log_redaction.redactors.add(redact)
