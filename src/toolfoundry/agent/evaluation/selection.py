"""Which model an evaluation runs: a ``provider:model`` string, scripted models included."""

from __future__ import annotations

from toolfoundry.agent.evaluation.scripted import POLICIES, ScriptedProvider
from toolfoundry.agent.providers.base import Provider


class ModelSelectionError(ValueError):
    """A model string that names no usable model; the message says what would."""


def select_model(model: str) -> Provider:
    """The provider for ``model``.

    ``scripted:correct``, ``scripted:naive`` and ``scripted:silent`` are the evaluation's own
    fixed policies; every other string goes to
    :func:`toolfoundry.agent.providers.provider_for` (``openai:...``, ``anthropic:...``, ...).

    Raises:
        ModelSelectionError: an unknown scripted model, or a string the providers refuse.
    """
    kind, sep, name = model.partition(":")
    if kind == "scripted":
        if name not in POLICIES:
            raise ModelSelectionError(
                f"unknown scripted model {model!r}; use one of "
                + ", ".join(f"scripted:{p}" for p in POLICIES)
            )
        return ScriptedProvider(name)
    if not sep or not name:
        raise ModelSelectionError(
            f"model {model!r} must be 'provider:model', e.g. anthropic:claude-sonnet-4-5 "
            "or scripted:correct"
        )
    try:
        from toolfoundry.agent.providers import provider_for
    except ImportError as exc:  # the vendor adapters land separately from this evaluation
        raise ModelSelectionError(f"no provider adapters are available for {model!r}") from exc
    try:
        return provider_for(model)
    except Exception as exc:
        if getattr(exc, "kind", None) == "configuration":
            raise ModelSelectionError(str(exc)) from exc
        raise
