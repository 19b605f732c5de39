"""The cap on the text of a tool result (``Server(max_result_bytes=…)``, ``@server.tool(max_result_bytes=…)``):
text past it is cut at a character boundary, the cut said in the text and in ``_meta``."""

from __future__ import annotations

from typing import Any

DEFAULT_MAX_RESULT_BYTES = 1024 * 1024
TRUNCATED_META = "io.mcpio/truncated"


def check_max_result_bytes(value: Any, allow_default: bool = False) -> None:
    if value is None or (allow_default and value is ...):
        return
    if type(value) is not int or value < 1:
        raise ValueError(f"max_result_bytes must be a positive int or None (no cap), not {value!r}")


def cap_text(result: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """``result`` with the text of its content cut to ``limit`` UTF-8 bytes (module docstring)."""
    content = result.get("content")
    if limit is None or not content:
        return result
    if len(content) == 1:  # one block, as most results: nothing built per call
        block = content[0]
        text = block.get("text") if type(block) is dict else None
        if type(text) is not str or block.get("type") != "text" or len(text) * 4 <= limit:
            return result  # no text to cut, or it cannot be over, whatever the characters
    texts = [b["text"] for b in content if type(b) is dict and b.get("type") == "text" and type(b.get("text")) is str]
    if sum(map(len, texts)) * 4 <= limit:  # the common case: cannot be over, whatever the characters
        return result
    total = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
    if total <= limit:
        return result
    marker = (
        f"\n\n[truncated: this result has {total:,} bytes of text, over the limit of {limit:,} "
        "(max_result_bytes); only the first part is shown, the rest was dropped]"
    )
    room = limit - len(marker.encode())
    out: list[Any] = []
    used = 0
    cut = False
    for block in content:
        if type(block) is not dict or block.get("type") != "text" or type(block.get("text")) is not str:
            out.append(block)
            continue
        if cut:
            continue  # text past the cut is dropped
        data = block["text"].encode("utf-8", "surrogatepass")
        if used + len(data) <= room:
            out.append(block)
            used += len(data)
            continue
        keep = data[: max(0, room - used)].decode("utf-8", "ignore")  # at a character boundary
        out.append({**block, "text": keep + marker if keep else marker.lstrip()})
        used += len(keep.encode("utf-8", "surrogatepass"))
        cut = True
    meta = dict(result.get("_meta") or {})
    meta[TRUNCATED_META] = {"textBytes": total, "shownBytes": used, "maxResultBytes": limit}
    return {**result, "content": out, "_meta": meta}
