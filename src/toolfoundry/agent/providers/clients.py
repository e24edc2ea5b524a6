"""SDK clients: keys and base URLs from options or the environment, retries and timeouts.

Kept apart from the wire adapters: an adapter only translates a conversation, this module only
knows how to reach a vendor.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from toolfoundry.agent.providers.base import ProviderError
from toolfoundry.base.extras import MissingExtra

if TYPE_CHECKING:
    import anthropic
    import openai

DEFAULT_TIMEOUT_S = 120.0
DEFAULT_RETRIES = 2
# Ollama's OpenAI-compatible endpoint; vLLM and llama.cpp server are one --base-url away.
DEFAULT_COMPAT_BASE_URL = "http://127.0.0.1:11434/v1"


def openai_client(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_RETRIES,
) -> openai.OpenAI:
    """A client for api.openai.com (or ``base_url`` / ``OPENAI_BASE_URL``).

    A missing SDK is said before a missing key: a key set would not help without it.
    """
    client = _openai_sdk()
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        raise ProviderError(
            "configuration",
            "OPENAI_API_KEY is not set: export it (or pass api_key=...) to use an openai model",
        )
    url = base_url or os.environ.get("OPENAI_BASE_URL")
    return client(api_key=key, base_url=url, timeout=timeout, max_retries=max_retries)


def compat_client(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_RETRIES,
) -> openai.OpenAI:
    """A client for an OpenAI-compatible server (Ollama, vLLM, llama.cpp server).

    The base URL comes from ``base_url``, else ``TOOLFOUNDRY_COMPAT_BASE_URL``, else Ollama's
    default; such servers rarely check the key, so a placeholder is sent when none is set.
    """
    url = base_url or os.environ.get("TOOLFOUNDRY_COMPAT_BASE_URL") or DEFAULT_COMPAT_BASE_URL
    key = api_key or os.environ.get("TOOLFOUNDRY_COMPAT_API_KEY") or "not-needed"
    return _openai_sdk()(api_key=key, base_url=url, timeout=timeout, max_retries=max_retries)


def _openai_sdk() -> type[openai.OpenAI]:
    try:
        import openai
    except ImportError as exc:  # the [agents] extra is missing
        missing = MissingExtra("agents", "an openai model", exc.name)
        raise ProviderError("configuration", str(missing)) from exc
    return openai.OpenAI


def anthropic_client(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    max_retries: int = DEFAULT_RETRIES,
) -> anthropic.Anthropic:
    """A client for api.anthropic.com (or ``base_url`` / ``ANTHROPIC_BASE_URL``); a missing SDK
    is said before a missing key."""
    try:
        import anthropic
    except ImportError as exc:  # the [agents] extra is missing
        missing = MissingExtra("agents", "an anthropic model", exc.name)
        raise ProviderError("configuration", str(missing)) from exc
    key = api_key or os.environ.get("ANTHROPIC_API_KEY")
    if not key:
        raise ProviderError(
            "configuration",
            "ANTHROPIC_API_KEY is not set: export it (or pass api_key=...) "
            "to use an anthropic model",
        )
    return anthropic.Anthropic(
        api_key=key,
        base_url=base_url or os.environ.get("ANTHROPIC_BASE_URL"),
        timeout=timeout,
        max_retries=max_retries,
    )
