"""Issue 12 properties under hypothesis: the SSE parser is linear and chunking-blind and never
buffers past its cap; MRTR never takes ``inputResponses`` as answers without the state that
asked; only literal loopback addresses are loopback."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpio._protocol._http import SSEParser, SSETooLarge, is_loopback
from mcpio._server._mrtr import InputRequired, Rounds, StateCodec

pieces = st.lists(
    st.sampled_from(
        [
            b"data: ",
            b"x" * 50,
            b"\n",
            b"\r",
            b"\r\n",
            b": c",
            b"id: 1-2",
            b"event: e",
            b"retry: 9",
            b"\xff",
            b"data:",
            b"\n\n",
        ]
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(pieces, st.lists(st.integers(1, 64), min_size=1, max_size=20))
def test_the_sse_parser_is_linear_and_blind_to_chunking(parts, sizes):
    stream = b"".join(parts)
    whole = SSEParser()
    expected = [(e.data, e.event, e.id) for e in whole.feed(stream)]
    p = SSEParser()
    got, i, k = [], 0, 0
    while i < len(stream):
        n = sizes[k % len(sizes)]
        got += [(e.data, e.event, e.id) for e in p.feed(stream[i : i + n])]
        i, k = i + n, k + 1
    assert got == expected
    assert p.scanned <= len(stream) and whole.scanned <= len(stream)


@settings(max_examples=120, deadline=None)
@given(st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=20), st.integers(16, 400))
def test_the_sse_parser_never_holds_more_than_its_cap(chunks, cap):
    p = SSEParser(max_event_size=cap)
    try:
        for c in chunks:
            p.feed(c)
            assert len(p._buf) <= cap and p._size <= cap
    except SSETooLarge as exc:
        assert exc.limit == cap


answers = st.dictionaries(
    st.sampled_from(["elicit-0", "elicit-1", "sample-0", "x"]),
    st.fixed_dictionaries({"action": st.sampled_from(["accept", "decline", "cancel"])}),
)


@settings(max_examples=120, deadline=None)
@given(answers, st.sampled_from([None, "", "v1.a.b", 0, [], {}]))
def test_input_responses_without_a_valid_state_are_never_answers(responses, state):
    codec = StateCodec(b"s" * 32, 60)
    params = {"name": "t", "arguments": {}, "inputResponses": responses}
    if state is not None:
        params["requestState"] = state
    try:
        rounds = Rounds.from_request(codec, "tools/call", params)
    except Exception as exc:  # a bad state is -32602, never accepted
        assert type(exc).__name__ == "InvalidParams"
        return
    assert rounds.answers == {} and rounds.round == 0
    with pytest.raises(InputRequired):
        rounds.ask("elicitation/create", {"message": "sure?"})


@settings(max_examples=150, deadline=None)
@given(st.from_regex(r"(127|localhost|::1)[.a-z0-9-]{1,20}\.[a-z]{2,6}", fullmatch=True))
def test_names_that_start_like_loopback_are_not_loopback(name):
    assert not is_loopback(name)
