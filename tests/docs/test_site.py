"""The documentation's structure: the README is a short front page from which every page is
reachable, every page is in the site's nav, and the API reference covers every public name.

(`mkdocs build --strict`, run by scripts/test, checks the links inside docs/; this checks what
it cannot see: README.md lives outside docs/.)
"""

from __future__ import annotations

import re
from pathlib import Path

import mcpio

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
_LINK = re.compile(r"\]\(([^)\s]+)\)")


def doc_pages() -> set[str]:
    return {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}


def nav_pages() -> list[str]:
    """The pages named in mkdocs.yml's nav (entries like `- Title: path.md`; comments are not entries)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text.split("\nnav:", 1)[1].split("\nplugins:", 1)[0]
    return re.findall(r"^\s*-\s+[^:#\n]+:\s+(\S+\.md)\s*$", nav, flags=re.M)


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) < 200, f"README.md has {len(lines)} lines: move the detail to a page under docs/"


def test_readme_links_every_page_and_only_existing_ones():
    targets = {m.split("#")[0] for m in _LINK.findall(README.read_text(encoding="utf-8"))}
    local = {t for t in targets if not re.match(r"[a-z]+:", t)}
    missing = sorted(t for t in local if not (ROOT / t).exists())
    assert not missing, f"README.md links to files that do not exist: {missing}"
    linked = {t.removeprefix("docs/") for t in local if t.startswith("docs/")}
    unlinked = sorted(doc_pages() - linked)
    assert not unlinked, f"pages not linked from README.md's Documentation list: {unlinked}"


def test_every_page_is_in_the_nav_once():
    nav = nav_pages()
    assert len(nav) == len(set(nav)), f"pages listed twice in mkdocs.yml's nav: {nav}"
    assert set(nav) == doc_pages(), (
        f"not in the nav: {sorted(doc_pages() - set(nav))}; in the nav but missing: {sorted(set(nav) - doc_pages())}"
    )


def test_api_reference_covers_every_public_name():
    text = (DOCS / "reference" / "api.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^::: mcpio\.(\w+)\s*$", text, flags=re.M))
    public = {name for name in mcpio.__all__ if not name.startswith("_")}
    assert public - documented == set(), (
        f"public names missing from docs/reference/api.md: {sorted(public - documented)}"
    )
    assert documented - public == set(), f"documented names that mcpio does not export: {sorted(documented - public)}"
