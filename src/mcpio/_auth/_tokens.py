"""Where a client keeps what authorization produced, so tokens survive restarts.

A :class:`TokenStore` is a small key-value store of JSON objects. The OAuth client keeps:

* ``token <resource> <issuer>``: one entry per resource and issuer: the access token, the
  refresh token, ``expires_at``, the granted and requested scopes, the server URL it was for,
  and the authorization server metadata and PRM it came with (so nothing is re-discovered
  while the token is good);
* ``client <issuer>``: a client registered dynamically with that issuer (credentials are per
  authorization server: 2026-07-28, SEP-2352).

:class:`FileTokenStore` (the default) is one JSON file, mode 0600, written atomically, that
refuses to follow a symlink; :class:`MemoryTokenStore` keeps nothing past the process. Any
object with ``load``/``save``/``delete``/``keys`` will do (a keyring, a database).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
import threading
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class TokenStore(Protocol):
    """Storage for tokens and client registrations (JSON objects by string key)."""

    def load(self, key: str) -> dict[str, Any] | None: ...

    def save(self, key: str, value: dict[str, Any]) -> None: ...

    def delete(self, key: str) -> None: ...

    def keys(self) -> list[str]: ...


class MemoryTokenStore:
    """A :class:`TokenStore` in memory (nothing survives the process)."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, Any]] = {}

    def load(self, key: str) -> dict[str, Any] | None:
        value = self._data.get(key)
        return json.loads(json.dumps(value)) if value is not None else None

    def save(self, key: str, value: dict[str, Any]) -> None:
        self._data[key] = json.loads(json.dumps(value))

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def keys(self) -> list[str]:
        return list(self._data)

    def __repr__(self) -> str:
        return f"MemoryTokenStore({len(self._data)} entries)"


def default_store_path() -> Path:
    """``$MCPIO_TOKEN_STORE``, else ``$XDG_STATE_HOME/mcpio/tokens.json`` (``~/.local/state``)."""
    explicit = os.environ.get("MCPIO_TOKEN_STORE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "mcpio" / "tokens.json"


class TokenStoreError(OSError):
    """The token file cannot be used safely (a symlink, another owner, loose permissions)."""


class FileTokenStore:
    """A :class:`TokenStore` in one JSON file (default :func:`default_store_path`).

    The file and its directory are created private (0600 / 0700). A symlink at the path, a file
    other users may read or write, or one owned by another user is refused with
    :class:`TokenStoreError` (fix or remove the file). Writes go to a temporary file in the same
    directory, then replace the file, so a crash never leaves half a file.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_store_path()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FileTokenStore({str(self.path)!r})"

    def _read(self) -> dict[str, Any]:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return {}
        except OSError as exc:
            if self.path.is_symlink():
                raise TokenStoreError(
                    f"the token store {self.path} is a symlink; refusing to follow it (remove it, or give a real file)"
                ) from None
            raise TokenStoreError(f"cannot read the token store {self.path}: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if hasattr(os, "getuid") and st.st_uid != os.getuid():
                raise TokenStoreError(f"the token store {self.path} belongs to another user; refusing it")
            if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise TokenStoreError(
                    f"the token store {self.path} is readable or writable by others "
                    f"(mode {stat.S_IMODE(st.st_mode):o}); run: chmod 600 {self.path}"
                )
            raw = f.read()
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            raise TokenStoreError(f"the token store {self.path} is not JSON; move it away to start afresh") from None
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        directory = self.path.parent
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self.path.is_symlink():
            raise TokenStoreError(f"the token store {self.path} is a symlink; refusing to write through it")
        fd, tmp = tempfile.mkstemp(prefix=".tokens-", dir=directory)  # created 0600 (mkstemp)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(data, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def load(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            value = self._read().get(key)
        return value if isinstance(value, dict) else None

    def save(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            data = self._read()
            data[key] = value
            self._write(data)

    def delete(self, key: str) -> None:
        with self._lock:
            data = self._read()
            if data.pop(key, None) is not None:
                self._write(data)

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._read())
