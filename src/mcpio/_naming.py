"""The one naming rule for items served under a namespace: ``Server.mount``, ``Host`` and the
gateway built on them.

- A tool or prompt ``add`` under namespace ``math`` is ``math__add``: the namespace, the
  separator ``__``, the name. Namespaces are ``[A-Za-z0-9_-]`` (``namespace_of`` reduces any
  other character to ``_``), so a namespaced tool name stays within the 2025-11-25 tool-name
  characters (``[A-Za-z0-9_.-]``) whenever the original was, and within the stricter
  ``[A-Za-z0-9_-]`` that several model APIs impose on function names.
- A resource URI or template ``scheme://rest`` is ``scheme://math/rest``: the namespace is the
  first segment after ``scheme://`` (``greeting://{name}`` → ``greeting://math/{name}``,
  ``file:///notes.txt`` → ``file://math//notes.txt``). A URI without ``://`` gets
  ``math/`` in front. The rule is reversible: :func:`strip_uri` gives the original back.
"""

from __future__ import annotations

import re

SEPARATOR = "__"
_NAMESPACE = re.compile(r"[A-Za-z0-9_-]+")


def namespace_of(name: str) -> str:
    """``name`` reduced to a namespace: characters outside ``[A-Za-z0-9_-]`` become ``_``."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", name) or "server"


def check_namespace(namespace: str) -> str:
    """``namespace`` if it is one (``[A-Za-z0-9_-]+``), else ValueError saying what to pass."""
    if not isinstance(namespace, str) or not _NAMESPACE.fullmatch(namespace):
        raise ValueError(
            f"namespace {namespace!r} is not valid: use letters, digits, '_' and '-' only "
            f"(e.g. {namespace_of(str(namespace))!r}); it prefixes tool and prompt names and resource URIs"
        )
    return namespace


def join_name(namespace: str, name: str, separator: str = SEPARATOR) -> str:
    """The namespaced name of a tool or prompt: ``math__add``."""
    return f"{namespace}{separator}{name}"


def split_name(namespaced: str, namespace: str, separator: str = SEPARATOR) -> str | None:
    """The original name behind ``namespaced`` under ``namespace``, or None when it is not one of its."""
    prefix = namespace + separator
    return namespaced[len(prefix) :] if namespaced.startswith(prefix) and len(namespaced) > len(prefix) else None


def join_uri(namespace: str, uri: str) -> str:
    """The namespaced resource URI or template: ``scheme://namespace/rest``."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return f"{namespace}/{uri}"
    return f"{scheme}://{namespace}/{rest}"


def strip_uri(namespaced: str, namespace: str) -> str | None:
    """The original URI behind ``namespaced`` under ``namespace``, or None when it is not one of its."""
    scheme, sep, rest = namespaced.partition("://")
    if not sep:
        return namespaced[len(namespace) + 1 :] if namespaced.startswith(namespace + "/") else None
    if not rest.startswith(namespace + "/"):
        return None
    return f"{scheme}://{rest[len(namespace) + 1 :]}"
