"""More of a new user's first hour, with real ``mcpio`` subprocesses: the slips met walking the
quick start, the gateway recipes, the OpenAPI guide and the missing extras (each test names
the message the user must get instead of a traceback or a puzzle)."""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.cli.test_first_hour import MCPIO, lines, mcpio


def test_a_script_that_raises_is_one_line_naming_its_file(tmp_path):
    """A file run as a script (another SDK's server: it never imports mcpio) that raises, at
    import or while serving, is the user's code failing: one line naming the file and line, as
    for an mcpio server, not a traceback through mcpio's own frames."""
    (tmp_path / "other.py").write_text("import json\n\nimport no_such_module_here\n")
    expected = "other.py:3: ModuleNotFoundError: No module named 'no_such_module_here' (in your server's code)"
    hint = "  fix it and run the command again; -v shows the full traceback"
    run = mcpio("run", "other.py", cwd=tmp_path)
    assert (run.returncode, lines(run.stderr)) == (3, [f"mcpio: error: {expected}", hint]), run.stderr
    listed = mcpio("list", "other.py", cwd=tmp_path)
    assert listed.returncode == 3 and lines(listed.stderr) == [
        f"mcpio: error: the server did not start: {expected}",
        hint,
    ], listed.stderr
    verbose = mcpio("run", "other.py", "-v", cwd=tmp_path)
    assert "Traceback (most recent call last)" in verbose.stderr and expected in verbose.stderr


MOUNTED = """\
from mcpio import Server

math = Server("math")
more = Server("more")


@math.tool
def add(a: int, b: int) -> int:
    return a + b


@more.tool
def add(a: int, b: int) -> int:  # noqa: F811
    return a + b


app = Server("app")
app.mount(math, namespace="math")
app.mount(more, namespace="more")
"""


def test_a_tool_called_by_its_name_before_namespacing_gets_the_namespaced_names(tmp_path):
    """``mcpio call app.py add`` where the tool is served as ``math__add`` (a mount, a gateway's
    entry): the suggestion names each namespaced tool, in the CLI's refusal and in the server's
    own error (``--no-validate`` sends the call), not only the list of every tool."""
    (tmp_path / "app.py").write_text(MOUNTED)
    out = mcpio("call", "app.py", "add", "a=1", "b=2", cwd=tmp_path)
    assert out.returncode == 2 and lines(out.stderr)[0] == (
        "mcpio: error: the server has no tool 'add' (did you mean 'math__add' or 'more__add'?)"
    ), out.stderr
    sent = mcpio("call", "app.py", "add", "a=1", "b=2", "--no-validate", cwd=tmp_path)
    assert "Unknown tool: 'add' (did you mean 'math__add' or 'more__add'?)" in sent.stderr, sent.stderr
    assert mcpio("call", "app.py", "math__add", "a=1", "b=2", cwd=tmp_path).stdout == "3\n"


def bare_mcpio(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess]:
    """``python -m mcpio ARGS`` in ``tmp_path`` with a fresh virtual environment's python that
    has mcpio (this tree's src) and msgspec only: no extra installed (no httpx, uvicorn, PyJWT,
    redis, PyYAML), as after ``pip install mcpio``."""
    python, env = _bare_python(tmp_path)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [python, "-m", "mcpio", *argv],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=90,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **env},
        )

    return run


def _bare_python(tmp_path: Path) -> tuple[str, dict[str, str]]:
    import msgspec

    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True, timeout=120)
    deps = tmp_path / "deps"
    deps.mkdir()
    (deps / "msgspec").symlink_to(Path(msgspec.__file__).parent)
    src = Path(__import__("mcpio").__file__).parents[1]
    return str(tmp_path / "venv" / "bin" / "python"), {"PYTHONPATH": f"{deps}{os.pathsep}{src}"}


def test_a_command_whose_extra_is_missing_names_the_extra(tmp_path):
    """``mcpio inspect`` without uvicorn, ``mcpio login`` without httpx (``mcpio`` installed
    without ``[http]``): one line naming the missing package and the extra that brings it, exit
    status 2, not a traceback."""
    bare = bare_mcpio(tmp_path)
    (tmp_path / "server.py").write_text("from mcpio import Server\n\nserver = Server('x')\n")

    inspect = bare("inspect", "server.py", "--no-browser")
    assert (inspect.returncode, lines(inspect.stderr)) == (
        2,
        [
            "mcpio: error: mcpio inspect needs uvicorn, which is not installed",
            "  install mcpio with its 'http' extra: pip install 'mcpio[http]'",
        ],
    ), inspect.stderr
    login = bare("login", "http://127.0.0.1:9/mcp")
    assert login.returncode == 2 and lines(login.stderr)[0] == (
        "mcpio: error: mcpio login needs httpx, which is not installed"
    ), login.stderr
    assert bare("call", "server.py", "nothing").returncode == 2  # the rest works without the extras


def test_an_openapi_file_without_httpx_is_refused_at_start(tmp_path):
    """``mcpio run --openapi openapi.json`` (a local document: nothing to download) without httpx
    is refused at start with the extra to install, as a URL's is: not served, to fail every call
    with "ModuleNotFoundError: No module named 'httpx'"."""
    bare = bare_mcpio(tmp_path)
    doc = {
        "openapi": "3.1.0",
        "info": {"title": "Pets", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:9"}],
        "paths": {"/pets": {"get": {"operationId": "list_pets", "responses": {"200": {"description": "ok"}}}}},
    }
    (tmp_path / "openapi.json").write_text(json.dumps(doc))
    done = bare("run", "--openapi", "openapi.json")
    assert (done.returncode, lines(done.stderr)) == (
        2,
        ["mcpio: error: --openapi needs httpx: pip install 'mcpio[openapi]'"],
    ), done.stderr


def test_a_url_without_its_scheme_gets_the_url_to_try(tmp_path):
    """``mcpio list 127.0.0.1:8000`` or ``localhost:8000/mcp`` (the ``http://`` left out) was
    a program not found on PATH, or a file that does not exist: now it is refused, naming the
    URL to try, for every command that takes a TARGET (list, call, run, install …)."""
    for typed, url in (
        ("127.0.0.1:8000", "http://127.0.0.1:8000/mcp"),
        ("localhost:8000/mcp", "http://localhost:8000/mcp"),
    ):
        for argv in (["list", typed], ["call", typed, "add"], ["run", typed]):
            out = mcpio(*argv, cwd=tmp_path)
            assert (out.returncode, lines(out.stderr)) == (
                2,
                [f"mcpio: error: {typed}: a server's URL starts with http:// or https://: try {url}"],
            ), out.stderr
    (tmp_path / "a:1").write_text("")  # an existing file of that shape is still a file
    assert "URL starts with" not in mcpio("list", "a:1", cwd=tmp_path).stderr


def _terminal_banner(argv: list[str], cwd: Path) -> str:
    """What ``mcpio run …`` prints on a terminal (stdin and stderr a pty) up to "Ctrl-C"."""
    main, child = pty.openpty()
    proc = subprocess.Popen([*MCPIO, *argv], cwd=cwd, stdin=child, stderr=child, stdout=subprocess.DEVNULL)
    os.close(child)
    seen = b""
    try:
        while b"Ctrl-C" not in seen:
            ready, _, _ = select.select([main], [], [], 30)
            assert ready, f"no banner; got {seen!r}"
            seen += os.read(main, 4096)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(30)
        os.close(main)
    return seen.decode()


def test_the_banner_of_a_proxy_names_its_target_not_an_empty_catalog(tmp_path):
    """``mcpio run "python server.py"`` (a proxy) and ``mcpio run mcp.json`` (a gateway) on a
    terminal said "serving 'python' (0 tools, 0 resources, 0 prompts)": the catalog and the name
    are the upstream's, unknown until it connects. The banner names the TARGET and says what it
    serves; so does the one line of ``-t http`` on a pipe."""
    (tmp_path / "server.py").write_text(
        "from mcpio import Server\n\nserver = Server('demo')\n\n\n@server.tool\ndef add(a: int) -> int:\n"
        "    return a\n\n\nserver.run()\n"
    )
    command = f"{sys.executable} server.py"
    proxy = _terminal_banner(["run", command], tmp_path)
    assert f"mcpio: serving '{command}' (a proxy: what its upstream serves) over stdio" in proxy, proxy
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"demo": {"command": sys.executable, "args": ["server.py"]}}})
    )
    gateway = _terminal_banner(["run", "mcp.json"], tmp_path)
    assert "mcpio: serving 'mcp.json' (a gateway: what its upstreams serve) over stdio" in gateway, gateway
    assert "0 tools" not in proxy + gateway
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    http = subprocess.Popen(
        [*MCPIO, "run", command, "-t", "http", "--port", str(port)],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert http.stderr is not None
        line = http.stderr.readline()
    finally:
        http.send_signal(signal.SIGINT)
        http.communicate(timeout=30)
    assert line.startswith(f"serving {command} on http://127.0.0.1:{port}/mcp"), line


def test_the_banners_commands_work_as_typed_for_a_command_line(tmp_path):
    """The banner of ``mcpio run "python server.py"`` says how to try it: ``mcpio list python
    server.py`` was two words a shell passes as TARGET and a stray argument. Each command it
    shows is quoted, and runs as shown."""
    (tmp_path / "server.py").write_text(
        "from mcpio import Server\n\nserver = Server('demo')\n\n\n@server.tool\ndef add(a: int) -> int:\n"
        "    return a\n\n\nserver.run()\n"
    )
    command = f"{sys.executable} server.py"
    banner = _terminal_banner(["run", command], tmp_path)
    quoted = shlex.quote(command)
    assert f"try it:    mcpio list {quoted}    |" in banner and f"mcpio install {quoted} --host" in banner, banner
    shown = banner.split("try it:    mcpio ", 1)[1].split("    |")[0]
    done = mcpio(*shlex.split(shown), "tools", cwd=tmp_path)
    assert done.returncode == 0 and "add" in done.stdout, done.stderr


def test_install_into_a_broken_config_file_says_what_to_do_with_that_file(tmp_path):
    """``mcpio install`` into a host file with a JSON typo said "…; fix it first" and then "fix
    the configuration file, or name the server another way (mcpio --help lists the TARGET
    forms)": advice about TARGETs, for the file install writes. Now: where the typo is, that
    the file is untouched, and what to do."""
    (tmp_path / "server.py").write_text("from mcpio import Server\n\nserver = Server('x')\n")
    config = tmp_path / "claude.json"
    broken = '{\n  "mcpServers": {\n    "a": {"command": "x", args": []}\n  }\n}\n'
    config.write_text(broken)
    out = mcpio("install", "server.py", "--host", "claude", "--config", str(config), "--no-check", cwd=tmp_path)
    assert (out.returncode, lines(out.stderr)) == (
        2,
        [
            f"mcpio: error: {config}: not valid JSON (Expecting property name enclosed in double quotes at line 3, column 27)",
            "  the file was left as it was: fix it, or write to another file with --config FILE",
        ],
    ), out.stderr
    assert config.read_text() == broken


def test_a_misspelt_entry_name_gets_a_suggestion(tmp_path):
    """``mcpio call mcp.json:tickts …`` (CONFIG:NAME, the name misspelt) listed the file's
    servers but suggested none, unlike a misspelt tool or prompt: the one "did you mean" rule
    holds for entry names too."""
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"tickets": {"command": "x"}, "time": {"command": "y"}}})
    )
    out = mcpio("call", "mcp.json:tickts", "add", cwd=tmp_path)
    assert out.returncode == 2 and lines(out.stderr)[0] == (
        "mcpio: error: no server 'tickts' in mcp.json (did you mean 'tickets'?); servers there: tickets, time"
    ), out.stderr


def test_a_missing_tool_name_is_the_one_argument_said_to_be_required(tmp_path):
    """``mcpio call server.py`` (no TOOL) said "the following arguments are required: TOOL,
    KEY=VALUE", though a tool's arguments are optional; so did ``mcpio prompt`` for NAME."""
    for command, missing in (("call", "TOOL"), ("prompt", "NAME")):
        out = mcpio(command, "server.py", cwd=tmp_path)
        assert out.returncode == 2 and lines(out.stderr)[-1] == (
            f"mcpio {command}: error: the following arguments are required: {missing}"
        ), out.stderr


def test_an_http_option_without_t_http_is_refused(tmp_path):
    """``mcpio run server.py --port 8000`` (``-t http`` forgotten) served stdio and ignored the
    port without a word (exit 0 at the end of input), as did --host, --path, --allow-remote,
    --legacy-sse, --redis and --grace, where --workers, the auth and TLS flags were refused."""
    (tmp_path / "server.py").write_text("from mcpio import Server\n\nserver = Server('x')\n")
    for given, said in (
        (["--port", "8000"], "--port is"),
        (["--host", "127.0.0.1", "--allow-remote"], "--host, --allow-remote are"),
    ):
        out = mcpio("run", "server.py", *given, cwd=tmp_path)
        assert (out.returncode, lines(out.stderr)) == (
            2,
            [
                f"mcpio: error: {said} for Streamable HTTP: add -t http (without it mcpio run serves stdio, to the host that starts it)"
            ],
        ), out.stderr
    assert mcpio("run", "server.py", cwd=tmp_path).returncode == 0  # stdio alone: served, then end of input


def test_doctor_of_a_url_without_the_endpoint_path_names_the_url_to_try():
    """``mcpio doctor http://host:port/`` said "cannot connect: HTTP 404 Not Found: Not Found"
    and no more, where ``mcpio list`` names the URL to try: doctor's problem line has the same
    hint (the one rule, ``_advice.not_found``), the URL without its credentials."""
    from mcpio import Server
    from tests.support.http import ServerThread

    with ServerThread(Server("here").http_app()) as srv:
        done = mcpio("doctor", f"{srv.base}/?api_key=s3cret")
    assert done.returncode != 0
    assert f"; nothing serves MCP at that path; most servers do at /mcp: try {srv.base}/mcp?api_key=[redacted]" in (
        done.stdout
    ), done.stdout + done.stderr
    assert "s3cret" not in done.stdout + done.stderr


def test_an_entry_with_a_misspelt_command_key_says_which_key(tmp_path):
    """An ``mcpServers`` entry whose ``"command"`` is misspelt (``"comand"``) said only "it has
    neither 'command' nor 'url'": the key the user typed is named, as the misspelling of
    ``command`` (or ``url``) it looks like; by the entry's own commands and by its gateway."""
    entries = {"demo": {"comand": sys.executable, "args": ["server.py"]}, "web": {"uri": "http://127.0.0.1:9/mcp"}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
    out = mcpio("list", "mcp.json:demo", cwd=tmp_path)
    assert out.returncode == 2 and lines(out.stderr)[0] == (
        "mcpio: error: server 'demo' in mcp.json: it has neither 'command' nor 'url' (is 'comand' a misspelt 'command'?)"
    ), out.stderr
    web = mcpio("list", "mcp.json:web", cwd=tmp_path)
    assert "(is 'uri' a misspelt 'url'?)" in web.stderr, web.stderr
    gateway = mcpio("list", "mcp.json", cwd=tmp_path)
    assert "upstream 'demo' did not start" in gateway.stderr and "(is 'comand' a misspelt 'command'?)" in gateway.stderr


def test_config_shows_an_entry_without_a_command_as_such(tmp_path):
    """``mcpio config mcp.json`` showed an entry whose "command" was misspelt as its arguments
    alone (``server.py`` in COMMAND OR URL, as if that were the command): it says what the entry
    lacks instead."""
    entries = {"demo": {"comand": "python", "args": ["server.py"]}, "ok": {"command": "python", "args": ["server.py"]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": entries}))
    out = mcpio("config", "mcp.json", "--json", cwd=tmp_path)
    runs = {row["name"]: row["run"] for row in json.loads(out.stdout)}
    assert runs == {
        "demo": "(it has neither 'command' nor 'url' (is 'comand' a misspelt 'command'?))",
        "ok": "python server.py",
    }, out.stdout


def test_a_resource_read_by_its_uri_before_namespacing_gets_the_namespaced_uris(tmp_path):
    """``mcpio read app.py greeting://Ada`` where the template is served as
    ``greeting://math/{name}`` (a mount, a gateway entry) said "Resource not found" and no
    more: the hint names the URI under each namespace that serves it (the naming rule), and
    ``--json`` keeps the error's code and data."""
    (tmp_path / "app.py").write_text(
        MOUNTED + '\n\n@math.resource("greeting://{name}")\ndef hello(name: str) -> str:\n    return name\n\n\n'
        '@more.resource("greeting://{name}")\ndef hi(name: str) -> str:\n    return name\n'
    )
    out = mcpio("read", "app.py", "greeting://Ada", cwd=tmp_path)
    assert out.returncode == 1 and lines(out.stderr)[-1] == (
        "  its resources are served under a namespace: did you mean 'greeting://math/Ada' or 'greeting://more/Ada'?"
    ), out.stderr
    body = json.loads(mcpio("read", "app.py", "greeting://Ada", "--json", cwd=tmp_path).stdout)["error"]
    assert body["data"] == {"uri": "greeting://Ada"} and "greeting://math/Ada" in body["hint"], body
    assert mcpio("read", "app.py", "greeting://math/Ada", cwd=tmp_path).stdout == "Ada\n"
    elsewhere = mcpio("read", "app.py", "nothing://x", cwd=tmp_path)
    assert elsewhere.returncode == 1 and "did you mean" not in elsewhere.stderr, elsewhere.stderr
