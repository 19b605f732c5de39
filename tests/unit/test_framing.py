"""Sans-IO framing: no event loop, arbitrary chunking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpio._protocol._framing import LineBuffer, Oversized


def test_splits_lines_and_keeps_partial():
    b = LineBuffer()
    assert b.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert b.buffered == 4
    assert b.feed(b":2}\n") == [b'{"b":2}']
    assert b.buffered == 0


def test_blank_and_whitespace_lines_are_dropped_and_crlf_is_stripped():
    b = LineBuffer()
    assert b.feed(b"\n  \n\t\r\n{}\r\n") == [b"{}"]


def test_oversized_line_is_replaced_by_marker_and_service_continues():
    b = LineBuffer(max_line_size=10)
    out = b.feed(b"x" * 8)
    assert out == []
    out = b.feed(b"y" * 8)  # now 16 > 10: discarding starts, nothing buffered
    assert out == [] and b.buffered == 0
    out = b.feed(b"zz\n{}\n")
    assert out == [Oversized(18, 10), b"{}"]


def test_oversized_in_one_chunk():
    b = LineBuffer(max_line_size=4)
    assert b.feed(b"123456\n12\n") == [Oversized(6, 4), b"12"]


def test_final_line_without_newline_is_delivered_on_close():
    b = LineBuffer()
    assert b.feed(b'{}\n{"x":1}') == [b"{}"]
    assert b.close() == [b'{"x":1}']


def test_large_line_in_small_chunks_is_linear():
    b = LineBuffer()
    line = b"a" * (8 * 1024 * 1024)
    chunk = 65536
    out = []
    for i in range(0, len(line), chunk):
        out += b.feed(line[i : i + chunk])
    out += b.feed(b"\n")
    assert out == [line]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.binary(min_size=1, max_size=40).filter(
            lambda x: b"\n" not in x and not x.isspace() and not x.endswith(b"\r")
        ),
        max_size=20,
    ),
    st.data(),
)
def test_any_chunking_gives_the_same_lines(lines, data):
    stream = b"".join(line + b"\n" for line in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    b = LineBuffer()
    out = []
    prev = 0
    for c in cuts + [len(stream)]:
        out += b.feed(stream[prev:c])
        prev = c
    assert out == lines


def _reference(stream: bytes, limit: int) -> list[bytes | Oversized]:
    """What the module docstring promises, computed on the whole stream at once."""
    out: list[bytes | Oversized] = []
    for line in stream.split(b"\n"):
        if len(line) > limit:
            out.append(Oversized(len(line), limit))
            continue
        line = line[:-1] if line.endswith(b"\r") else line
        if line and not line.isspace():
            out.append(line)
    return out


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(st.binary(max_size=12), st.sampled_from([b"", b" ", b"\r", b"ab\r", b"x" * 9])), max_size=12),
    st.booleans(),
    st.data(),
)
def test_any_chunking_with_oversized_lines_matches_the_whole_stream(lines, final_newline, data):
    stream = b"\n".join(lines) + (b"\n" if final_newline else b"")
    limit = 6
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=12)))
    b = LineBuffer(max_line_size=limit)
    out: list[bytes | Oversized] = []
    prev = 0
    for c in cuts + [len(stream)]:
        out += b.feed(stream[prev:c])
        prev = c
    out += b.close()
    assert out == _reference(stream, limit)
