"""Model vendors behind one small interface, chosen by one ``provider:model`` string.

    provider_for("openai:gpt-4o-mini")                 # Chat Completions
    provider_for("openai-responses:gpt-4.1-mini")      # Responses API (store=False)
    provider_for("anthropic:claude-sonnet-4-5")        # Messages API
    provider_for("compat:qwen2.5:7b", base_url="http://127.0.0.1:11434/v1")  # Ollama, vLLM, ...
    provider_for("replay:demo")                        # a recorded session, no model at all

Keys come from ``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY``; base URLs from ``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL`` and ``TOOLFOUNDRY_COMPAT_BASE_URL`` unless passed as ``base_url``.

The seam is ``base.py`` (``Provider`` and the neutral message types); every other module here
is one vendor's adapter behind it.
"""

from __future__ import annotations

from typing import Any

from toolfoundry.agent.providers.base import (
    Message,
    Provider,
    ProviderError,
    ToolCall,
    ToolChoice,
    Turn,
    Usage,
)
from toolfoundry.agent.providers.names import ToolNames
from toolfoundry.agent.providers.replay import ReplayProvider

PROVIDER_KINDS = ("openai", "openai-responses", "anthropic", "compat", "replay")
_CLIENT_OPTIONS = ("api_key", "base_url", "timeout", "max_retries")

__all__ = [
    "PROVIDER_KINDS",
    "Message",
    "Provider",
    "ProviderError",
    "ReplayProvider",
    "ToolCall",
    "ToolChoice",
    "ToolNames",
    "Turn",
    "Usage",
    "provider_for",
]


def provider_for(model: str, **options: Any) -> Provider:
    """The provider named by ``"kind:model"``.

    Args:
        model: ``openai:NAME``, ``openai-responses:NAME``, ``anthropic:NAME``,
            ``compat:NAME`` or ``replay:PATH[#SESSION]`` (PATH a file, or ``demo``).
        **options: ``api_key``, ``base_url``, ``timeout``, ``max_retries`` for the SDK
            clients; ``client`` to pass a ready SDK client; ``session`` for replay.

    Raises:
        ProviderError: ``configuration`` for an unknown kind, a missing key or bad options.
    """
    kind, sep, name = model.partition(":")
    if not sep or not name:
        raise ProviderError(
            "configuration",
            f"model {model!r} must be 'provider:model' with provider one of "
            f"{', '.join(PROVIDER_KINDS)} (e.g. openai:gpt-4o-mini)",
        )
    unknown = set(options) - {*_CLIENT_OPTIONS, "client", "session"}
    if unknown:
        raise ProviderError("configuration", f"unknown provider options: {sorted(unknown)}")
    if kind == "replay":
        path, _, session = name.partition("#")
        return ReplayProvider(path, session or options.get("session"))
    settings = {k: v for k, v in options.items() if k in _CLIENT_OPTIONS and v is not None}
    client = options.get("client")
    if kind in ("openai", "openai-responses", "compat"):
        from toolfoundry.agent.providers import clients
        from toolfoundry.agent.providers.openai_chat import OpenAIChatProvider
        from toolfoundry.agent.providers.openai_responses import OpenAIResponsesProvider

        if kind == "compat":
            return OpenAIChatProvider(
                name, client or clients.compat_client(**settings), compat=True, prefix="compat"
            )
        client = client or clients.openai_client(**settings)
        if kind == "openai":
            return OpenAIChatProvider(name, client)
        return OpenAIResponsesProvider(name, client)
    if kind == "anthropic":
        from toolfoundry.agent.providers import clients
        from toolfoundry.agent.providers.anthropic_messages import AnthropicMessagesProvider

        return AnthropicMessagesProvider(name, client or clients.anthropic_client(**settings))
    raise ProviderError(
        "configuration",
        f"unknown provider {kind!r} in {model!r}: use one of {', '.join(PROVIDER_KINDS)}",
    )
