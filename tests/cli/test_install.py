"""``mcpio install``: a checked, absolute-path entry in each host's configuration file, which
mcpio's own config reader (and so ``mcpio call HOST:NAME``) reads back and can run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

MCPIO = [sys.executable, "-m", "mcpio"]
QUICKSTART = str(EXAMPLES / "quickstart.py")


def mcpio(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    return subprocess.run([*MCPIO, *args], capture_output=True, text=True, timeout=120, env=env, cwd=cwd or home)


@pytest.mark.parametrize(
    "host,relative,key",
    [
        ("claude", ".config/Claude/claude_desktop_config.json", "mcpServers"),
        ("cursor", ".cursor/mcp.json", "mcpServers"),
        ("vscode", ".config/Code/User/mcp.json", "servers"),
        ("zed", ".config/zed/settings.json", "context_servers"),
    ],
)
def test_install_writes_a_checked_entry_the_host_and_mcpio_can_run(tmp_path, host, relative, key):
    done = mcpio(tmp_path, "install", QUICKSTART, "--host", host, "--env", "API_KEY=k1")
    assert done.returncode == 0, done.stderr
    assert "checked: the server starts and lists 2 tools" in done.stderr
    entry = json.loads((tmp_path / relative).read_text())[key]["demo"]  # named after Server("demo"), not the file
    assert entry["command"] == sys.executable and Path(entry["command"]).is_absolute()
    assert entry["args"] == ["-m", "mcpio", "run", QUICKSTART] and entry["env"] == {"API_KEY": "k1"}
    assert entry.get("type") == ("stdio" if host == "vscode" else None)
    called = mcpio(tmp_path, "call", f"{host}:demo", "add", "a=2", "b=3")  # read back and run
    assert called.returncode == 0 and called.stdout.strip() == "5", called.stderr


def test_install_keeps_other_entries_refuses_duplicates_and_backs_up(tmp_path):
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}))
    assert mcpio(tmp_path, "install", QUICKSTART, "--host", "cursor", "--project", "--name", "calc").returncode == 0
    data = json.loads(config.read_text())
    assert data["theme"] == "dark" and set(data["mcpServers"]) == {"other", "calc"}
    assert json.loads((tmp_path / ".cursor" / "mcp.json.bak").read_text())["mcpServers"] == {"other": {"command": "x"}}
    again = mcpio(tmp_path, "install", QUICKSTART, "--host", "cursor", "--project", "--name", "calc", "--no-check")
    assert again.returncode == 2 and "--force" in again.stderr
    forced = mcpio(
        tmp_path, "install", QUICKSTART + ":server", "--host", "cursor", "--project", "--name", "calc", "--force"
    )
    assert forced.returncode == 0
    assert json.loads(config.read_text())["mcpServers"]["calc"]["args"][-1] == QUICKSTART + ":server"


def test_a_broken_server_is_not_installed(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit('this server cannot start')\n")
    done = mcpio(tmp_path, "install", str(broken), "--host", "claude")
    assert done.returncode == 3 and "not installed" in done.stderr
    assert not (tmp_path / ".config" / "Claude").exists()


def test_comments_are_not_destroyed_and_dry_run_writes_nothing(tmp_path):
    settings = tmp_path / ".config" / "zed" / "settings.json"
    settings.parent.mkdir(parents=True)
    original = '{\n  // my theme\n  "theme": "One Dark",\n}\n'
    settings.write_text(original)
    done = mcpio(tmp_path, "install", QUICKSTART, "--host", "zed", "--no-check")
    assert done.returncode == 1 and "add this entry by hand" in done.stderr and '"context_servers"' in done.stderr
    assert settings.read_text() == original
    dry = mcpio(tmp_path, "install", QUICKSTART, "--host", "claude", "--dry-run", "--no-check")
    assert dry.returncode == 0 and '"mcpServers"' in dry.stdout
    assert not (tmp_path / ".config" / "Claude").exists()


def test_a_module_name_is_kept_with_pythonpath(tmp_path):
    (tmp_path / "calc_server.py").write_text((EXAMPLES / "quickstart.py").read_text())
    done = mcpio(tmp_path, "install", "calc_server", "--host", "claude-code", "--project")
    assert done.returncode == 0, done.stderr
    entry = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["demo"]
    assert entry["args"][-1] == "calc_server" and entry["env"] == {"PYTHONPATH": str(tmp_path)}
