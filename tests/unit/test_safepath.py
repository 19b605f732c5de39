"""SafePath: client-chosen paths stay inside the declared roots (links, .., absolute, NUL)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpio import SafePath, SafePathError


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    base = tmp_path.resolve()
    root, other, outside = base / "root", base / "other", base / "outside"
    for d in (root / "sub" / "deep", other, outside / "dir"):
        d.mkdir(parents=True)
    (root / "a.txt").write_text("alpha")
    (root / "sub" / "b.txt").write_text("beta")
    (root / "sub" / "deep" / "c.bin").write_bytes(b"\0\1\2")
    (other / "o.txt").write_text("other")
    (outside / "secret.txt").write_text("secret")
    (outside / "dir" / "deep.txt").write_text("deep secret")
    os.symlink(outside / "secret.txt", root / "link-out.txt")
    os.symlink(outside / "dir", root / "link-out-dir")
    os.symlink(root / "a.txt", root / "sub" / "link-in.txt")
    os.symlink(root / "sub", root / "link-in-dir")
    os.symlink(root, root / "sub" / "loop")  # a cycle
    os.mkfifo(root / "fifo")
    return {"root": root, "other": other, "outside": outside, "base": base}


def test_relative_paths_resolve_inside(tree):
    sp = SafePath(tree["root"])
    assert sp.resolve("a.txt") == tree["root"] / "a.txt"
    assert sp.resolve("sub/../a.txt") == tree["root"] / "a.txt"  # .. that stays inside is fine
    assert sp.resolve("") == tree["root"] == sp.resolve(".")
    assert sp.resolve("not/yet/there.txt") == tree["root"] / "not/yet/there.txt"  # for writing
    assert sp.read_text("sub/b.txt") == "beta"
    assert sp.relative(tree["root"] / "sub" / "b.txt") == "sub/b.txt"


@pytest.mark.parametrize(
    "bad",
    [
        "..",
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "/etc/passwd",
        "//etc/passwd",
        "link-out.txt",
        "link-out-dir/deep.txt",
        "link-out-dir",
        "sub/../link-out.txt",
    ],
)
def test_escapes_are_refused_with_a_clear_error(tree, bad):
    sp = SafePath(tree["root"])
    with pytest.raises(SafePathError, match="outside the allowed folder") as info:
        sp.resolve(bad)
    assert str(tree["outside"]) not in str(info.value)  # where a link points is not revealed
    assert not sp.contains(bad)
    with pytest.raises(SafePathError):
        sp.read_text(bad)


def test_nul_bytes_are_refused(tree):
    sp = SafePath(tree["root"])
    for bad in ("a.txt\0.png", "\0", "sub/\0/../a.txt"):
        with pytest.raises(SafePathError, match="NUL"):
            sp.resolve(bad)


def test_absolute_paths_inside_a_root_are_accepted(tree):
    sp = SafePath(tree["root"], tree["other"])
    assert sp.resolve(str(tree["other"] / "o.txt")) == tree["other"] / "o.txt"
    assert sp.resolve(tree["root"] / "sub") == tree["root"] / "sub"
    with pytest.raises(SafePathError, match="outside the allowed folders"):
        sp.resolve(tree["base"])
    assert sp.resolve("a.txt") == tree["root"] / "a.txt"  # relative: the first root
    assert sp.resolve("b.txt", root="sub") == tree["root"] / "sub" / "b.txt"
    with pytest.raises(SafePathError):
        sp.resolve("x", root="../outside")


def test_links_inside_are_followed_unless_disabled(tree):
    sp = SafePath(tree["root"])
    assert sp.resolve("sub/link-in.txt") == tree["root"] / "a.txt"
    assert sp.read_text("link-in-dir/b.txt") == "beta"
    strict = SafePath(tree["root"], follow_symlinks=False)
    for linked in ("sub/link-in.txt", "link-in-dir/b.txt", "link-in-dir"):
        with pytest.raises(SafePathError, match="symbolic link"):
            strict.resolve(linked)
    assert strict.read_text("sub/b.txt") == "beta"


def test_a_root_named_through_a_link_still_works(tree):
    alias = tree["base"] / "alias"
    os.symlink(tree["root"], alias)
    for sp in (SafePath(alias), SafePath(alias, follow_symlinks=False)):
        assert sp.roots == (tree["root"],)
        assert sp.resolve(str(alias / "a.txt")) == tree["root"] / "a.txt"
        assert sp.read_text("a.txt") == "alpha"


def test_reading_refuses_non_regular_files_and_caps_size(tree):
    sp = SafePath(tree["root"])
    with pytest.raises(SafePathError, match="not a regular file"):
        sp.read_bytes("fifo")  # opened non-blocking: never hangs
    with pytest.raises(SafePathError, match="not a regular file"):
        sp.read_bytes("sub")
    with pytest.raises(SafePathError, match="cannot be read"):
        sp.read_bytes("missing.txt")
    assert sp.read_bytes("sub/deep/c.bin", max_bytes=3) == b"\0\1\2"
    with pytest.raises(SafePathError, match="larger than 2 bytes"):
        sp.read_bytes("sub/deep/c.bin", max_bytes=2)


def test_iterdir_and_walk_never_leave_the_roots(tree):
    sp = SafePath(tree["root"])
    listed = {p.name for p in sp.iterdir()}
    assert "link-out.txt" not in listed and "link-out-dir" not in listed
    assert {"a.txt", "sub", "fifo"} <= listed and "sub" in {p.name for p in sp.iterdir("link-in-dir/..")}
    strict = SafePath(tree["root"], follow_symlinks=False)
    assert {p.name for p in strict.iterdir()} == {"a.txt", "sub", "fifo"}
    walked = sorted(sp.relative(p) for p in sp.walk())
    assert walked == ["a.txt", "sub/b.txt", "sub/deep/c.bin"]  # no links, no FIFO, no loop
    assert sorted(sp.relative(p) for p in sp.walk("sub", skip_dirs={"deep"})) == ["sub/b.txt"]
    with pytest.raises(SafePathError):
        list(sp.walk("link-out-dir"))


def test_roots_must_be_folders(tree):
    with pytest.raises(ValueError, match="at least one root"):
        SafePath()
    with pytest.raises(ValueError, match="not a folder"):
        SafePath(tree["root"] / "a.txt")
    with pytest.raises(ValueError, match="not a folder"):
        SafePath(tree["root"] / "nope")


segment = st.sampled_from(
    ["..", ".", "a.txt", "sub", "link-out.txt", "link-out-dir", "link-in-dir", "loop", "", "x", "/"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(segment, min_size=1, max_size=8), st.booleans())
def test_any_path_resolves_inside_or_is_refused(tmp_path_factory, parts, absolute):
    # A fixed tree per run (hypothesis reuses the function-scoped fixture): build it once.
    base = tmp_path_factory.getbasetemp() / "safepath-prop"
    root = base / "root"
    if not root.exists():
        (root / "sub").mkdir(parents=True)
        (base / "outside").mkdir()
        (root / "a.txt").write_text("a")
        os.symlink(base / "outside", root / "link-out-dir")
        os.symlink(base / "outside" / "x", root / "link-out.txt")
        os.symlink(root / "sub", root / "link-in-dir")
        os.symlink(root, root / "sub" / "loop")
    root = root.resolve()
    sp = SafePath(root)
    raw = "/".join(parts)
    if absolute:
        raw = str(root) + "/" + raw
    try:
        got = sp.resolve(raw)
    except SafePathError:
        real = os.path.realpath(os.path.join(root, raw))
        assert not (real == str(root) or real.startswith(str(root) + os.sep))
    else:
        assert got == Path(os.path.realpath(os.path.join(root, raw)))
        assert got == root or root in got.parents
