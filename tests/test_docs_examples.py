"""Examples in docs/ stay true: the documented configuration loads and means what it says."""

import json
import re
import tomllib
from dataclasses import fields
from pathlib import Path

from toolfoundry.config import CATALOG_KEYS, FETCH_KEYS, LIMIT_KEYS, SECTIONS, parse_config
from toolfoundry.forge.policy import POLICY_KEYS
from toolfoundry.sandbox.host.credentials import Credential
from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.host.netguard import parse_url

DOCS = Path(__file__).resolve().parents[1] / "docs"


def fenced(name: str, lang: str) -> list[str]:
    text = (DOCS / name).read_text(encoding="utf-8")
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def test_documented_configuration_loads_with_every_section() -> None:
    (toml,) = fenced("configuration.md", "toml")
    config = parse_config(tomllib.loads(toml))
    assert (config.registry_url or "").startswith("postgresql+psycopg://")
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


def test_documented_configuration_shows_every_key_the_loader_accepts() -> None:
    (toml,) = fenced("configuration.md", "toml")
    data = tomllib.loads(toml)
    shown = set(re.findall(r"^#?\s*(\w+) =", toml, re.M))  # set, or a commented alternative
    shown |= set(re.findall(r"^\[\[\w+\.(\w+)\]\]", toml, re.M))  # [[fetch.credentials]]
    assert set(data) == set(SECTIONS)
    accepted = {
        "registry": {"url"},
        "policy": set(POLICY_KEYS),
        "fetch": set(FETCH_KEYS),
        "limits": set(LIMIT_KEYS),
        "catalog": set(CATALOG_KEYS),
        "provider": {"model", "base_url"},  # what `toolfoundry agent` reads
    }
    for section, keys in accepted.items():
        assert keys <= shown, f"docs/configuration.md does not show [{section}] {keys - shown}"
        assert set(data[section]) <= keys, f"[{section}] shows keys nothing reads"
    credential = {f.name for f in fields(Credential) if f.init}
    assert credential <= shown, f"[[fetch.credentials]] misses {credential - shown}"


def test_documented_host_patterns_mean_what_the_doc_says() -> None:
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


def test_documented_mcp_client_configuration_is_json() -> None:
    documents = [json.loads(block) for block in fenced("mcp.md", "json")]  # each one parses
    (config,) = [doc for doc in documents if "mcpServers" in doc]
    server = config["mcpServers"]["toolfoundry"]
    assert server["args"][0] == "serve"
