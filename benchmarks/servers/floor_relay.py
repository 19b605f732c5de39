"""The floor of a stdio hop in Python: ``floor_relay.py COMMAND...`` copies bytes both ways between
its stdio and COMMAND's, on asyncio's pipe callbacks, and does nothing else (no JSON, no MCP, no
ids: one client only). ``benchmarks/proxy_bench.py`` measures it as the ``floor hop``: what any
proxy process written in Python with asyncio costs a call at the least (two more pipe
transfers, two more wake-ups), against which the proxy's own work is read."""

import asyncio
import sys


async def main(argv: list[str]) -> None:
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    stdout, _ = await loop.connect_write_pipe(asyncio.Protocol, sys.stdout.buffer)

    class Up(asyncio.SubprocessProtocol):
        def pipe_data_received(self, fd: int, data: bytes) -> None:
            if fd == 1:
                stdout.write(data)

        def process_exited(self) -> None:
            if not done.done():
                done.set_result(None)

    upstream, _ = await loop.subprocess_exec(Up, *argv, stderr=None)
    upstream_stdin = upstream.get_pipe_transport(0)

    class Down(asyncio.Protocol):
        def data_received(self, data: bytes) -> None:
            upstream_stdin.write(data)

        def eof_received(self) -> None:
            upstream_stdin.close()

    await loop.connect_read_pipe(Down, sys.stdin.buffer)
    await done


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
