"""``mcpio install`` as a user meets it: the real CLI, a temporary HOME, real files.

How it writes (issue 32, item 5): a 0600 host config stays 0600 and keeps its owner, its backup
too; a symlinked ``FILE.bak`` or ``FILE`` is refused, never written through. What it writes
(issue 34): relative paths resolved or flagged, the check run from ``/`` as a GUI host runs it,
``--header`` for a URL entry with ``${VAR}`` so the token is not in argv."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES
from tests.support.http import free_port, wait_port

QUICKSTART = str(EXAMPLES / "quickstart.py")
SERVER = str(Path(__file__).resolve().parents[1] / "auth" / "protected_server.py")
TOKEN = "team-s3cret-token-for-install-01"


def mcpio(home: Path, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None):
    full = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "mcpio", *args], capture_output=True, text=True, timeout=120, env=full, cwd=cwd or home
    )


def cursor_config(home: Path, text: str = '{"mcpServers": {"other": {"command": "x", "env": {"KEY": "k"}}}}') -> Path:
    config = home / ".cursor" / "mcp.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text)
    return config


def test_a_private_config_stays_private_with_its_owner(tmp_path):
    config = cursor_config(tmp_path)
    os.chmod(config, 0o600)
    owner = (os.getuid(), os.getgid())
    if os.getuid() == 0:  # root installs into another user's file (sudo): the file stays theirs
        os.chown(config, 4321, 4321)
        owner = (4321, 4321)
    done = mcpio(tmp_path, "install", QUICKSTART, "--host", "cursor", "--no-check", "--name", "calc")
    assert done.returncode == 0, done.stderr
    for path in (config, config.with_name("mcp.json.bak")):
        st = path.stat()
        assert stat.S_IMODE(st.st_mode) == 0o600, (path, oct(st.st_mode))
        assert (st.st_uid, st.st_gid) == owner
    assert set(json.loads(config.read_text())["mcpServers"]) == {"other", "calc"}
    assert [p.name for p in config.parent.iterdir() if p.name.endswith(".tmp")] == []


def test_a_new_config_is_created_private(tmp_path):
    done = mcpio(tmp_path, "install", QUICKSTART, "--host", "cursor", "--no-check", "--env", "API_KEY=k1")
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE((tmp_path / ".cursor" / "mcp.json").stat().st_mode) == 0o600


def test_a_symlinked_backup_is_refused_and_its_target_untouched(tmp_path):
    config = cursor_config(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.chmod(victim, 0o644)
    config.with_name("mcp.json.bak").symlink_to(victim)
    before = config.read_text()
    done = mcpio(tmp_path, "install", QUICKSTART, "--host", "cursor", "--no-check", "--name", "calc")
    assert done.returncode == 3 and "symlink" in done.stderr and "mcp.json.bak" in done.stderr, done.stderr
    assert victim.read_text() == "precious\n" and config.read_text() == before


def test_a_symlinked_config_is_refused_with_the_real_path_to_use(tmp_path):
    real = tmp_path / "dotfiles" / "mcp.json"
    real.parent.mkdir()
    real.write_text('{"mcpServers": {}}')
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").symlink_to(real)
    done = mcpio(tmp_path, "install", QUICKSTART, "--host", "cursor", "--no-check", "--name", "calc")
    assert done.returncode == 3 and f"--config {real}" in done.stderr, done.stderr
    assert real.read_text() == '{"mcpServers": {}}'
    ok = mcpio(
        tmp_path, "install", QUICKSTART, "--host", "cursor", "--no-check", "--name", "calc", "--config", str(real)
    )
    assert ok.returncode == 0 and "calc" in json.loads(real.read_text())["mcpServers"]


def test_relative_env_paths_are_made_absolute_or_flagged(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    done = mcpio(
        tmp_path,
        "install",
        QUICKSTART,
        "--host",
        "cursor",
        "--no-check",
        "--env",
        "DB=./notes.db",
        "--env",
        "CACHE=cache.sqlite",
        "--env",
        "MODEL=gpt-4.1",
        cwd=project,
    )
    assert done.returncode == 0, done.stderr
    env = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]["demo"]["env"]
    assert env == {"DB": str(project / "notes.db"), "CACHE": "cache.sqlite", "MODEL": "gpt-4.1"}
    assert f"written as {project / 'notes.db'}" in done.stderr
    assert "CACHE=cache.sqlite looks like a file name" in done.stderr and "MODEL" not in done.stderr


def test_the_check_runs_the_server_from_the_root_as_a_host_does(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "greeting.txt").write_text("hello")
    server = project / "server.py"
    server.write_text(
        "from mcpio import Server\n"
        "GREETING = open('greeting.txt').read()  # relative: works only from the project folder\n"
        "server = Server('greeter')\n\n"
        "@server.tool\ndef greet() -> str:\n    return GREETING\n"
    )
    done = mcpio(tmp_path, "install", str(server), "--host", "claude", cwd=project)
    assert done.returncode == 3 and "not installed" in done.stderr and "greeting.txt" in done.stderr, done.stderr
    assert not (tmp_path / ".config" / "Claude").exists()


@pytest.fixture
def shared_server():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpio", "run", "-t", "http", SERVER, "--port", str(port)]
        + ["--auth-token-env", "TEAM_TOKEN"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TEAM_TOKEN": TOKEN},
    )
    try:
        wait_port(port, proc=proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


def test_install_a_url_with_a_header_from_the_environment(tmp_path, shared_server):
    refused = mcpio(tmp_path, "install", shared_server, "--host", "cursor", "--name", "team")
    assert refused.returncode == 3 and "wants a bearer token" in refused.stderr, refused.stderr
    done = mcpio(
        tmp_path,
        "install",
        shared_server,
        "--host",
        "cursor",
        "--name",
        "team",
        "--header",
        "Authorization: Bearer ${TEAM_TOKEN}",
        env={"TEAM_TOKEN": TOKEN},
    )
    assert done.returncode == 0 and "lists 2 tools" in done.stderr, done.stderr
    entry = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]["team"]
    assert entry == {"url": shared_server, "headers": {"Authorization": f"Bearer {TOKEN}"}}
    called = mcpio(tmp_path, "call", "cursor:team", "whoami", "--json")  # read back and used
    assert called.returncode == 0 and "token-1" in called.stdout, called.stderr


def test_what_install_prints_holds_no_token_and_what_it_writes_does(tmp_path):
    """``--dry-run`` and ``--json`` print the entry (stdout is often kept: a CI log) with the values
    of its headers and env redacted and its URL shown without credentials; the host's file gets
    them as they are."""
    url = f"http://ada:{TOKEN}@127.0.0.1:9/mcp"
    header = ["--header", "Authorization: Bearer ${TEAM_TOKEN}"]
    dry = mcpio(
        tmp_path, "install", url, "--host", "cursor", "--no-check", "--dry-run", *header, env={"TEAM_TOKEN": TOKEN}
    )
    assert dry.returncode == 0 and TOKEN not in dry.stdout + dry.stderr, dry.stdout
    assert '"Authorization": "[redacted]"' in dry.stdout and "http://127.0.0.1:9/mcp" in dry.stdout, dry.stdout
    done = mcpio(
        tmp_path, "install", QUICKSTART, "--host", "cursor", "--no-check", "--json", "--env", f"API_KEY={TOKEN}"
    )
    assert done.returncode == 0 and TOKEN not in done.stdout, done.stdout
    assert json.loads(done.stdout)["entry"]["env"] == {"API_KEY": "[redacted]"}
    written = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert [entry["env"] for entry in written.values()] == [{"API_KEY": TOKEN}]


def test_header_usage_errors(tmp_path):
    r = mcpio(tmp_path, "install", QUICKSTART, "--host", "cursor", "--header", "X-A: b", "--no-check")
    assert r.returncode == 2 and "--header is for a URL entry" in r.stderr
    r = mcpio(tmp_path, "install", "http://127.0.0.1:1/mcp", "--host", "cursor", "--header", "Authorization: ${NOPE}")
    assert r.returncode == 2 and "${NOPE} names a variable that is not set" in r.stderr
