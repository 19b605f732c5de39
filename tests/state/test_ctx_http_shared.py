"""ctx.http on a process serving a shared legacy session it did not open: the current POST's
request (its headers), never the one that opened the session, on every process (two real
server processes on one real redis-server, round robin)."""

from __future__ import annotations

import httpx

from tests.state.test_shared_sessions import RoundRobin, cluster  # noqa: F401  (the fixture)


def test_each_process_sees_the_post_it_serves(cluster):  # noqa: F811
    urls, _ = cluster
    with httpx.Client(timeout=30) as c:
        s = RoundRobin(c, urls)  # opened on A, without X-Tenant
        seen = {}
        for at, tenant in ((1, "b1"), (0, "a1"), (1, "b2")):
            s.headers = {**s.headers, "x-tenant": tenant}
            pid, header = s.call("tenant", at=at)["content"][0]["text"].split()
            assert header == tenant
            seen.setdefault(at, set()).add(pid)
        assert len(seen[0]) == len(seen[1]) == 1 and seen[0] != seen[1]  # two processes, one session
