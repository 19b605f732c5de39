"""How a browser gets into the inspector without a secret on any command line.

The inspector's API can start any command (``/api/connect``), so whoever holds its credential
owns the user's account. A credential in the browser's argv (``/proc/PID/cmdline``) is readable
by every local user; so the page is opened this way instead:

1. :class:`SignIn` makes a **one-time code** (192 bits): it works once, and only within
   :data:`CODE_SECONDS` of being made.
2. The browser is started on a **launcher file** (:func:`write_launcher`: ``open.html`` in a
   fresh 0700 directory, the file 0600): a page that moves to ``/?code=…``. The browser's argv
   holds the file's path only; the code is in the file, which only this user can read.
3. ``GET /?code=…`` redeems the code for the **session cookie**: a random value, ``HttpOnly``
   (no script sees it), ``SameSite=Strict`` (no other site's page sends it), named after the
   port (inspectors on other ports keep theirs). A used or expired code is refused.
4. Cookies are not isolated by port: a browser sends this one to any server on 127.0.0.1
   (another local user's, say) that it visits by a typed URL or from another 127.0.0.1 page.
   So the API also needs the **page key**, handed to the page once, in the fragment of the
   address the sign-in moves to (``/#k=…``: never sent to a server), kept by the page in
   ``localStorage`` (which *is* isolated by port) and sent as ``X-Inspector-Key``.
5. The page needs the cookie; the API and the event poll need the cookie and the key; the
   ``Host`` and ``Origin`` checks of :mod:`._app` apply as before.

The printed URL (``--no-browser``) carries the same one-time code: the first use wins.
"""

from __future__ import annotations

import hmac
import os
import tempfile
import time
from http.cookies import SimpleCookie
from pathlib import Path

CODE_SECONDS = 300.0  # how long the one-time code of the link works (unless used before)


def new_secret() -> str:
    """A random URL-safe secret (192 bits)."""
    return os.urandom(24).hex()


class SignIn:
    """The one-time code and the session cookie of one inspector (see the module docstring)."""

    def __init__(self, port: int, *, code_seconds: float = CODE_SECONDS) -> None:
        self.cookie_name = f"mcpio_inspect_{port}"
        self.code_seconds = code_seconds
        self._session = new_secret()
        self.page_key = new_secret()
        self._code: str | None = None
        self._code_deadline = 0.0

    def new_code(self) -> str:
        """A fresh one-time code (the previous one stops working)."""
        self._code = new_secret()
        self._code_deadline = time.monotonic() + self.code_seconds
        return self._code

    def redeem(self, code: str | None) -> str | None:
        """None if ``code`` is the live one-time code (now used up); else why it is refused."""
        live = self._code
        if not code or live is None or not hmac.compare_digest(code.encode(), live.encode()):
            return "this link's code is wrong or was already used (each link opens the inspector once)"
        self._code = None  # used, even if it turns out late: a code never works twice
        if time.monotonic() > self._code_deadline:
            return f"this link expired (it works within {self.code_seconds:.0f} s of being printed)"
        return None

    def has_session(self, cookie_header: str | None) -> bool:
        """Whether the request's ``Cookie`` header carries this inspector's session cookie."""
        if not cookie_header:
            return False
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(cookie_header)
        except Exception:  # a malformed Cookie header (another site's cookies for 127.0.0.1)
            return False
        morsel = jar.get(self.cookie_name)
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), self._session.encode())

    def has_key(self, given: str | None) -> bool:
        """Whether ``given`` (the ``X-Inspector-Key`` header) is this inspector's page key."""
        return bool(given) and hmac.compare_digest((given or "").encode(), self.page_key.encode())

    def set_cookie(self) -> bytes:
        """The ``Set-Cookie`` value that gives the browser its session (ends with the browser)."""
        return f"{self.cookie_name}={self._session}; Path=/; HttpOnly; SameSite=Strict".encode()


def write_launcher(url: str) -> Path:
    """``open.html`` in a new private directory: a page that moves the browser to ``url``.
    The caller removes the directory (``path.parent``) when the inspector stops."""
    folder = Path(tempfile.mkdtemp(prefix="mcpio-inspect-"))  # 0700
    path = folder / "open.html"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    page = (
        '<!doctype html><meta charset="utf-8"><meta name="referrer" content="no-referrer">'
        f'<meta http-equiv="refresh" content="0;url={url}"><title>mcpio inspect</title>'
        f'<p>Opening <a href="{url}">mcpio inspect</a>…</p>\n'
    )
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(page)
    return path
