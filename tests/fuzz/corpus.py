"""Known-nasty input lines: a deterministic regression corpus for the live server test and the
seeds of the atheris harness. Each entry is (line without newline, the id that must be
answered or None when only an id-null error or nothing may come back).

Add every input a fuzzer ever found here.
"""

from __future__ import annotations

CORPUS: list[tuple[bytes, object]] = [
    # found by tests/fuzz: msgspec raises RecursionError (not DecodeError) past ~1000 levels,
    # which ended the server (and a client reading such a line from its server)
    (b"[" * 5000, None),
    (b'{"a":' * 5000, None),
    (b"[" * 100_000 + b"]" * 100_000, None),
    (b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + b"[" * 3000 + b"]" * 3000 + b"}}", None),
    (b'{"jsonrpc":"2.0","id":"deep-ok","method":"ping","params":{"x":' + b"[" * 500 + b"]" * 500 + b"}}", "deep-ok"),
    # ids at and beyond 64 bits, and odd strings
    (b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}', 18446744073709551616),
    (b'{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}', -9223372036854775809),
    (b'{"jsonrpc":"2.0","id":1' + b"0" * 300 + b',"method":"ping"}', int("1" + "0" * 300)),
    (b'{"jsonrpc":"2.0","id":"","method":"ping"}', ""),
    (b'{"jsonrpc":"2.0","id":"\\u0000\\ud83d\\ude00","method":"ping"}', "\x00\U0001f600"),
    (b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None),
    (b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', None),  # a lone surrogate: not valid Unicode
    # a request whose id is readable but whose rest is wrong
    (b'{"jsonrpc":"2.0","id":"m","method":7}', "m"),
    (b'{"jsonrpc":"2.0","id":"p","method":"tools/list","params":"x"}', "p"),
    (b'{"jsonrpc":"1.0","id":"v","method":"ping"}', "v"),
    (b'{"id":"nov","method":"ping"}', "nov"),
    (
        b'{"jsonrpc":"2.0","id":"meta","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":{}}}}',
        "meta",
    ),
    (
        b'{"jsonrpc":"2.0","id":"meta2","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":["2026-07-28"]}}}',
        "meta2",
    ),
    (
        b'{"jsonrpc":"2.0","id":"bad-init","method":"initialize","params":{"protocolVersion":{},"capabilities":[],"clientInfo":7}}',
        "bad-init",
    ),
    (
        b'{"jsonrpc":"2.0","id":"cancel-as-request","method":"notifications/cancelled","params":{"requestId":"x"}}',
        "cancel-as-request",
    ),
    # found by atheris: an object with a readable id but neither method nor result nor error is
    # an invalid request, answered under its id (the fuzz oracle had missed that case)
    (b'{"jsonrpc":"2.0","id":"nobody","":"not an object"}', "nobody"),
    (b'{"jsonrpc":"2.0","id":"typo","}ethod":"ping"}', "typo"),
    (b'{"jsonrpc":"2.0","id":"nul-method","method":null}', "nul-method"),
    # notifications and responses with hostile members: nothing comes back
    (b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":[1]}}}', None),
    (b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":' + b"9" * 400 + b"}}", None),
    (b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[],"progress":"x"}}', None),
    (b'{"jsonrpc":"2.0","id":[1],"result":{}}', None),
    # found by atheris: a response without "jsonrpc" was refused under its id, which belongs to
    # the receiver's own requests (cross-talk); it is now refused with id null
    (b'{"js(nrpc":"2.0","id":"nobody2","error":"not an object"}', None),
    (b'{"jsonrpc":"1.0","id":"resp","result":{}}', None),
    (b'{"jsonrpc":"2.0","id":"nobody","error":"not an object"}', None),
    # not JSON, not UTF-8, not an object
    (b'{"jsonrpc":"2.0","id":1,"method":"ping","x":"\xff"}', None),
    (b"\xef\xbb\xbf{}", None),
    (b"\x00", None),
    (b"NaN", None),
    (b"[]", None),
    (b"[[]]", None),
    (b"[1,2,3]", None),
    (b'"just a string"', None),
    (b"{" * 40, None),
]
