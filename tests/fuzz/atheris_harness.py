#!/usr/bin/env python
"""Coverage-guided fuzzing of mcpio's input handling with atheris (libFuzzer).

    pip install atheris
    python tests/fuzz/atheris_harness.py TARGET [libFuzzer options] [CORPUS_DIR ...]
    python tests/fuzz/atheris_harness.py framing -atheris_runs=200000
    python tests/fuzz/atheris_harness.py all -max_total_time=60      # each target for 60 s

TARGET is ``framing``, ``jsonrpc``, ``connection``, ``session`` (see tests/fuzz/targets.py for
what each checks) or ``all`` (each in turn, in its own process). Without a corpus folder the
run starts from the regression corpus (tests/fuzz/corpus.py) in a temporary folder. A failure
leaves ``crash-*`` files in the current folder: add the input to tests/fuzz/corpus.py.
The test suite runs the same targets over the corpus and hypothesis input (test_targets.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMES = ("framing", "jsonrpc", "connection", "session")


def seed_corpus() -> str:
    sys.path.insert(0, str(ROOT))
    from tests.fuzz.corpus import CORPUS

    folder = tempfile.mkdtemp(prefix="mcpio-fuzz-corpus-")
    init = (
        b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26",'
        b'"capabilities":{},"clientInfo":{"name":"f","version":"1"}}}\n'
    )
    seeds = [line for line, _ in CORPUS if len(line) < 10_000]
    seeds += [init + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n' + line for line in seeds]
    seeds.append(
        init + b'[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call",'
        b'"params":{"name":"echo","arguments":{"text":"hi"}}}]\n'
    )
    for i, seed in enumerate(seeds):
        Path(folder, f"seed-{i:03d}").write_bytes(seed)
    return folder


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in (*NAMES, "all"):
        sys.exit(__doc__)
    name, options = sys.argv[1], sys.argv[2:]
    if name == "all":
        codes = [subprocess.call([sys.executable, __file__, n, *options]) for n in NAMES]
        sys.exit(max(codes))
    import atheris

    if not any(not o.startswith("-") for o in options):
        options.append(seed_corpus())
    sys.path.insert(0, str(ROOT))
    with atheris.instrument_imports(include=["mcpio"]):
        from tests.fuzz import targets
    target = targets.TARGETS[name]
    if name == "session":  # keep the server's own error logging off the fuzzer's output
        import logging

        logging.getLogger("mcpio").setLevel(logging.CRITICAL)
    atheris.Setup([sys.argv[0], *options], target)
    os.environ.setdefault("PYTHONHASHSEED", "0")
    atheris.Fuzz()


if __name__ == "__main__":
    main()
