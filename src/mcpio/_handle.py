"""``mcpio.StateHandle``: a tool parameter the client fills with a handle the server minted.

The 2026-07-28 revision has no protocol session (SEP-2567, "Sessionless MCP via Explicit State
Handles"): state that must carry across calls is named by a server-minted handle that the model
passes back as an ordinary tool argument. A tool parameter annotated ``StateHandle`` is that
argument: in the input schema it is an optional string whose description tells the model to pass
back the handle it was given; the framework verifies it, or mints a new one when it is absent, and
scopes ``ctx.session_state`` to it (``mcpio._server._session_state``).
"""

from __future__ import annotations

from typing import Annotated, NewType

import msgspec

HANDLE_DESCRIPTION = (
    "State handle: pass back, unchanged, the handle an earlier call of this server returned to continue "
    "with its state; leave it out to start new state (the result then gives the new handle)."
)


StateHandle = NewType("StateHandle", str)
StateHandle.__doc__ = """An opaque, unguessable handle naming state the server keeps (``ctx.session_state``).

Declare it as a tool parameter (``cart: mcpio.StateHandle``, no default): the client passes back a
handle the server returned earlier, or leaves it out and the server mints a new one; return
``ctx.session_state.handle`` (or the parameter itself: at run time it is the handle's ``str``) so
the client can pass it back. With authorization a handle is bound to the principal it was minted
for: another principal's call with it is refused as an unknown handle."""


# A minted handle (``_session_state.open_handle``): the prefix and 24 random bytes, URL-safe
# base64. A bearer secret without auth: StructuredLogging redacts values of this shape.
HANDLE_PREFIX = "sh_"
HANDLE_PATTERN = HANDLE_PREFIX + r"[A-Za-z0-9_-]{32}"


# What the input schema shows for it (``_schema._normalize``); the field is optional (the
# framework mints a handle when it is absent).
HANDLE_TYPE = Annotated[str, msgspec.Meta(description=HANDLE_DESCRIPTION, min_length=1, max_length=256)]
