"""TLS for the HTTP server (``serve_http(certfile=…, keyfile=…)``, ``mcpio run --certfile``):
the certificate and key are checked before anything listens, so a wrong path, a key that does
not match the certificate or a passphrase-protected key is one line naming the file, not a
traceback from inside the ASGI server. Standard library only."""

from __future__ import annotations

import os
import ssl


def check_certificate(
    certfile: str | os.PathLike[str] | None, keyfile: str | os.PathLike[str] | None
) -> tuple[str | None, str | None]:
    """``(certfile, keyfile)`` as paths (None, None without TLS) once they load together into a
    server TLS context; :class:`ValueError` (one line: which file, what is wrong, what to do)
    otherwise. ``keyfile`` may be left out when ``certfile`` holds the key too (PEM)."""
    if certfile is None:
        if keyfile is not None:
            raise ValueError("a keyfile needs its certfile: pass both (the certificate chain and its private key)")
        return None, None
    cert, key = os.fspath(certfile), None if keyfile is None else os.fspath(keyfile)
    for what, path in (("certfile", cert), ("keyfile", key)):
        if path is not None and not os.path.isfile(path):
            raise ValueError(f"{what} {path}: no such file (a PEM file is expected)")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key, password=_no_password)
    except (ssl.SSLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", None) or str(exc) or type(exc).__name__
        raise ValueError(
            f"cannot use the TLS certificate {cert}" + (f" with the key {key}" if key else "") + f": {reason} "
            "(expected PEM files: the certificate chain, and its unencrypted private key)"
        ) from None
    return cert, key


def _no_password() -> str:
    raise ValueError("the private key is encrypted: give an unencrypted key (e.g. openssl pkey -in KEY -out KEY2)")
