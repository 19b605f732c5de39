"""``mcpio run TARGET`` alone, the command ``mcpio install`` writes into every host config, is
parsed without building argparse's parser (cold start): the result must be exactly argparse's,
and every other command line must still go to argparse."""

from __future__ import annotations

import pytest

from mcpio.cli import RUN_DEFAULTS, build_parser, parse_plain_run

TARGETS = [
    "server.py",
    "examples/weather.py:server",
    "pkg.module:make_server",
    r"C:\servers\server.py",
    "https://example.com/mcp",
    "npx -y some-server",
    "claude:filesystem",
    "",
    "=",
    "café.py",
]


@pytest.mark.parametrize("target", TARGETS)
def test_run_target_alone_parses_as_argparse_does(target: str) -> None:
    plain = parse_plain_run(["run", target])
    assert plain is not None
    assert vars(plain) == vars(build_parser().parse_args(["run", target]))
    assert vars(plain) == vars(build_parser("run").parse_args(["run", target]))  # what main() builds


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["run"],
        ["run", "-v"],
        ["run", "--help"],
        ["run", "-"],
        ["run", "--", "server.py"],
        ["run", "server.py", "-v"],
        ["run", "server.py", "-t", "http"],
        ["run", "-t", "http", "server.py"],
        ["list", "server.py"],
        ["--version"],
        ["install", "server.py"],
    ],
)
def test_every_other_command_line_goes_to_argparse(argv: list[str]) -> None:
    assert parse_plain_run(argv) is None


def test_every_run_default_names_an_option_of_run(capsys: pytest.CaptureFixture[str]) -> None:
    """The run parser takes its defaults from ``RUN_DEFAULTS`` (``set_defaults``: one statement
    of each), so a stale entry there would reach argparse's result as silently as the fast
    path's: each must name an option ``run --help`` lists."""
    with pytest.raises(SystemExit):
        build_parser("run").parse_args(["run", "--help"])
    listed = capsys.readouterr().out
    assert [k for k in RUN_DEFAULTS if f"--{k.replace('_', '-')} " not in listed] == []
