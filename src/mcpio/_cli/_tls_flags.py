"""``mcpio run -t http … --http2 --certfile CERT --keyfile KEY``: HTTP/2 and TLS without code.

``add_tls_flags`` adds the options to a parser; ``tls_options`` checks them (one usage line for
a missing file, a key that does not match, or HTTP/2 without its extra) and returns the
``Server.run("http", …)`` options:

* ``--http2`` — serve HTTP/2 beside HTTP/1.1 with hypercorn (``pip install 'mcpio[http2]'``):
  h2 through ALPN with a certificate, h2c (prior knowledge or ``Upgrade: h2c``) without;
* ``--certfile PEM`` / ``--keyfile PEM`` — serve HTTPS (with or without ``--http2``; uvicorn
  serves it over HTTP/1.1 alone).
"""

from __future__ import annotations

from typing import Any


def add_tls_flags(p: Any) -> None:
    g = p.add_argument_group("HTTP/2 and TLS (http)", "many SSE streams over one connection; HTTPS")
    g.add_argument(
        "--http2",
        action="store_true",
        help="serve HTTP/2 too (h2 over TLS, h2c in cleartext) with hypercorn: pip install 'mcpio[http2]'",
    )
    g.add_argument("--certfile", metavar="PEM", help="serve HTTPS with this certificate (chain), PEM")
    g.add_argument("--keyfile", metavar="PEM", help="the certificate's private key, PEM (unencrypted)")


def tls_options(args: Any) -> dict[str, Any]:
    """The ``Server.run("http", …)`` options of the flags (empty when none is given), checked:
    :class:`UsageError` names what is wrong and how to fix it."""
    http2, certfile, keyfile = (
        getattr(args, "http2", False),
        getattr(args, "certfile", None),
        getattr(args, "keyfile", None),
    )
    if not (http2 or certfile or keyfile):
        return {}
    from ._exit import UsageError  # not at import: `mcpio --help` builds this parser and stays fast

    if args.transport != "http":
        raise UsageError("--http2, --certfile and --keyfile serve HTTP: add -t http")
    from .._transports._tls import check_certificate

    try:
        check_certificate(certfile, keyfile)
    except ValueError as exc:
        raise UsageError(f"--certfile/--keyfile: {exc}") from None
    if http2:
        try:
            import h2  # noqa: F401
            import hypercorn  # noqa: F401
        except ImportError:
            raise UsageError("--http2 needs hypercorn and h2: pip install 'mcpio[http2]'") from None
    options: dict[str, Any] = {"certfile": certfile, "keyfile": keyfile} if certfile else {}
    if http2:
        options["http2"] = True
    return options
