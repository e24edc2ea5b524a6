"""Examples in docs/ stay true: the documented configuration loads and means what it says."""

import json
import re
import tomllib
from pathlib import Path

from toolfoundry.config import parse_config
from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.host.netguard import parse_url

DOCS = Path(__file__).resolve().parents[1] / "docs"


def fenced(name: str, lang: str) -> list[str]:
    text = (DOCS / name).read_text(encoding="utf-8")
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_documented_configuration_loads_with_every_section():
    (toml,) = fenced("configuration.md", "toml")
    config = parse_config(tomllib.loads(toml))
    assert config.registry_url.startswith("postgresql+psycopg://")
    assert config.policy.approve == "risky"
    assert config.policy.auto_approve_network == ("api.github.com",)
    assert config.fetch.credentials[0].env == "GITHUB_TOKEN"
    assert config.limits.memory_mib == 64
    assert config.provider["model"] == "openai:gpt-4o-mini"
    assert config.catalog.sources[1] == "shop.cli:build_parser"
    assert [(str(a.path), a.format) for a in config.catalog.out or ()][2] == (
        "docs/openai.json",
        "openai",
    )


def test_documented_host_patterns_mean_what_the_doc_says():
    policy = FetchPolicy(allow=("*.example.com", "api.example.com:8443"))

    def allows(url: str) -> bool:
        return policy.allows(parse_url(url))

    assert allows("https://a.example.com/x")
    assert not allows("https://example.com/x")
    assert not allows("https://badexample.com/x")
    assert allows("https://api.example.com:8443/")
    assert not allows("https://a.example.com:8443/")
    assert not FetchPolicy(allow=("api.example.com:8443",)).allows(
        parse_url("https://api.example.com/")
    )


def test_documented_mcp_client_configuration_is_json():
    (block,) = fenced("mcp.md", "json")
    server = json.loads(block)["mcpServers"]["toolfoundry"]
    assert server["args"][0] == "serve"
