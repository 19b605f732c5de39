"""Paths and commands the way each OS expects (issue 19): host config locations, the
interpreter ``mcpio install`` writes, batch-file arguments, executable lookup, and no
``fcntl``/``termios`` (POSIX-only modules) imported by any mcpio module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcpio._host._config import known_files
from mcpio._platform import check_batch_args, interpreter, stdio_mode
from mcpio._transports._spawn import ServerNotFound, find_executable

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("platform", ["win32", "darwin", "linux"])
def test_host_config_files_are_where_each_os_keeps_them(platform, monkeypatch, tmp_path):
    home, appdata = tmp_path / "home", tmp_path / "AppData" / "Roaming"
    monkeypatch.setattr(sys, "platform", platform)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("APPDATA", str(appdata))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    app = {"win32": appdata, "darwin": home / "Library" / "Application Support", "linux": home / ".config"}[platform]
    files = known_files()
    assert files["claude"] == [app / "Claude" / "claude_desktop_config.json"]
    assert files["vscode"][1] == app / "Code" / "User" / "mcp.json"
    assert files["cursor"][1] == home / ".cursor" / "mcp.json"
    assert files["windsurf"] == [home / ".codeium" / "windsurf" / "mcp_config.json"]
    assert files["claude-code"][1] == home / ".claude.json"
    assert files["zed"] == [(appdata / "Zed" if platform == "win32" else home / ".config" / "zed") / "settings.json"]


def test_windows_without_appdata_uses_the_roaming_folder(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("APPDATA", "")
    assert known_files()["claude"] == [tmp_path / "AppData" / "Roaming" / "Claude" / "claude_desktop_config.json"]


def test_the_interpreter_is_absolute_and_never_pythonw(monkeypatch, tmp_path):
    assert os.path.isabs(interpreter()) and os.path.samefile(interpreter(), sys.executable)
    (tmp_path / "python.exe").write_bytes(b"")
    (tmp_path / "pythonw.exe").write_bytes(b"")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "pythonw.exe"))
    assert interpreter() == str(tmp_path / "python.exe")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "executable", "python.exe")  # relative: made absolute
    assert interpreter() == str(tmp_path / "python.exe")


def test_batch_files_refuse_arguments_cmd_exe_would_reinterpret():
    check_batch_args(r"C:\nodejs\npx.cmd", ["-y", "@modelcontextprotocol/server-everything", "C:\\data dir"])
    check_batch_args("/usr/bin/npx", ["a&b"])  # not a batch file: passed as is
    for bad in ["a&calc", "x|y", "%PATH%", 'say "hi"', "a\nb", "^", "!x!"]:
        with pytest.raises(ValueError, match="cmd.exe"):
            check_batch_args(r"C:\tools\RUN.BAT", ["ok", bad])


def test_a_relative_command_with_a_slash_is_found_from_cwd(tmp_path):
    exe = tmp_path / "bin" / "server"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    assert os.path.samefile(find_executable(os.path.join("bin", "server"), os.defpath, tmp_path), exe)
    exe.chmod(0o644)
    if sys.platform != "win32":  # not executable: Windows has no such bit
        with pytest.raises(ServerNotFound, match="does not exist or is not executable"):
            find_executable(os.path.join("bin", "server"), os.defpath, tmp_path)


@pytest.mark.skipif(sys.platform != "win32", reason="PATHEXT lookup is Windows behaviour (runs in CI)")
def test_npx_and_uvx_resolve_to_their_cmd_and_exe_files(tmp_path):
    (tmp_path / "npx.cmd").write_text("@echo off\n")
    (tmp_path / "uvx.exe").write_bytes(b"MZ")
    assert find_executable("npx", str(tmp_path)).lower() == str(tmp_path / "npx.cmd").lower()
    assert find_executable("uvx", str(tmp_path)).lower() == str(tmp_path / "uvx.exe").lower()
    assert find_executable(str(tmp_path / "npx"), "").lower() == str(tmp_path / "npx.cmd").lower()


def test_the_stdio_mode_comes_from_the_argument_then_the_environment(monkeypatch):
    monkeypatch.setenv("MCPIO_STDIO_MODE", "threads")
    assert stdio_mode() == "threads" and stdio_mode("loop") == "loop"
    monkeypatch.delenv("MCPIO_STDIO_MODE")
    assert stdio_mode() == ("threads" if sys.platform == "win32" else "loop")
    with pytest.raises(ValueError, match="MCPIO_STDIO_MODE"):
        stdio_mode("fibers")


# Every mcpio module imported with fcntl and termios missing, as on Windows.
NO_POSIX_TTY = r"""
import importlib, importlib.abc, pkgutil, sys
BLOCKED = {"fcntl", "termios"}
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED:
            raise ImportError(f"{name} is blocked (Windows has no {name})")
for name in BLOCKED:
    sys.modules.pop(name, None)
sys.meta_path.insert(0, Block())
import mcpio
failed, count = [], 0
for info in pkgutil.walk_packages(mcpio.__path__, "mcpio."):
    if info.name.endswith("__main__") or info.name.startswith("mcpio._platform._"):
        continue  # the CLI's entry point; the platform package imports the implementation for this OS
    count += 1
    try:
        importlib.import_module(info.name)
    except ImportError as exc:
        failed.append(f"{info.name}: {exc}")
print(count, failed)
assert count > 50 and not failed, failed
assert not BLOCKED & set(sys.modules), BLOCKED & set(sys.modules)
"""


def test_no_mcpio_module_needs_fcntl_or_termios():
    proc = subprocess.run([sys.executable, "-c", NO_POSIX_TTY], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
