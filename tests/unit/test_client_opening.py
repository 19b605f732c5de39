"""``Client`` declares itself through ``_opening.Declaring`` (what a gateway's early first request
is built from): the options they share have the same defaults."""

from __future__ import annotations

import inspect

from mcpio import Client
from mcpio._client._opening import DECLARING, Declaring


def test_client_and_declaring_share_their_defaults() -> None:
    client = inspect.signature(Client).parameters
    declaring = inspect.signature(Declaring).parameters
    assert set(declaring) == DECLARING
    for name in DECLARING:
        assert client[name].default == declaring[name].default, name


def test_the_opening_is_the_request_the_era_choice_sends_first() -> None:
    assert Declaring().opening(None)[0] == "server/discover"
    assert Declaring().opening("legacy")[0] == "initialize"
    assert Declaring(era="modern").opening("legacy")[0] == "server/discover"
    method, params = Declaring(protocol_version="2025-06-18", sampling=print).opening(None)
    assert method == "initialize" and params["protocolVersion"] == "2025-06-18"
    assert params["capabilities"] == {"sampling": {}}


def test_options_a_client_refuses_write_nothing_early() -> None:
    """send_first leaves the refusal to the Client (made later, where it always said so)."""
    import sys

    from mcpio._client._opening import send_first
    from mcpio._transports._spawn import adopt, spawn

    process = spawn(sys.executable, ["-c", "import sys; sys.stdout.write(sys.stdin.read())"])
    send_first(process, {"era": "bogus"})
    adopt(process)  # taken over here: not ended at exit
    out, _ = process.communicate(timeout=30)  # it echoes what it was sent
    assert out == b""
