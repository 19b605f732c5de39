"""A request in flight on a process killed with SIGKILL (issue 14): the client that resumes
its stream on another process gets an answer, not keep-alives for ever. The running process
holds its lease (the per-process task lease, 2 s here) while the request runs; the process
following the resumed stream sees the lease pass, answers the request id with -32603 ("the
server process running this request died"), and ends the stream. Real redis-server, real
server processes (``shared_server.py``)."""

from __future__ import annotations

import signal

import httpx
import redis

from tests.state.test_shared_sessions import ACCEPT, RoundRobin, sse_read, start, wait_baseline


def test_a_request_whose_process_is_killed_is_answered_with_an_error_where_it_resumes(redis_url, tmp_path):
    urls, procs = start(redis_url, 2, "1800", "10000", "2")
    db = redis.Redis.from_url(redis_url)
    gate = str(tmp_path / "gate")  # never opened: staged waits after its first two progress events
    try:
        with httpx.Client(timeout=30) as c:
            s = RoundRobin(c, urls)
            call = {"jsonrpc": "2.0", "id": "k", "method": "tools/call",
                    "params": {"name": "staged", "arguments": {"gate": gate}, "_meta": {"progressToken": "t"}}}  # fmt: skip
            seen, last = [], ""
            with c.stream("POST", urls[0], json=call, headers={**ACCEPT, **s.headers}) as r:  # on A
                for eid, m in sse_read(r):
                    last = eid
                    seen.append(m["params"]["progress"])
                    if len(seen) == 2:
                        break
            procs[0].send_signal(signal.SIGKILL)  # A dies with the request in flight
            procs[0].wait(10)

            headers = {**s.headers, "accept": "text/event-stream", "last-event-id": last}
            with c.stream("GET", urls[1], headers=headers) as r:  # resumed on B
                assert r.status_code == 200
                got = [m for _, m in sse_read(r)]  # until B ends the stream
            assert seen == [1, 2]
            assert len(got) == 1, got
            [answer] = got
            assert answer["id"] == "k" and "result" not in answer
            assert answer["error"]["code"] == -32603
            assert "server process running this request died" in answer["error"]["message"]
            assert "send the request again" in answer["error"]["message"]
            assert answer["error"]["data"]["reason"] == "server process died"

            # The session lives on (on B), and the same call there runs again.
            assert s.call("where", at=1)["structuredContent"]["result"] == procs[1].pid
            assert c.delete(urls[1], headers=s.headers).status_code == 200
        wait_baseline(db, 20)  # A's lease and the stream's events are gone too
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            proc.wait(10)
        db.close()
