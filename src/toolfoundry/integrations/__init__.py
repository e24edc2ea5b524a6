"""Native adapters for agent frameworks: the foundry's tools as each framework's own tool objects.

Each adapter is one module with its own extra, importing its framework only when imported:

- ``pydantic_ai``: ``FoundryToolset`` (``toolfoundry[pydantic-ai]``)
- ``openai_agents``: ``foundry_tools``, Agents SDK ``FunctionTool`` s
  (``toolfoundry[openai-agents]``)
- ``langchain``: ``FoundryMiddleware`` and ``foundry_tools``, ``StructuredTool`` s
  (``toolfoundry[langchain]``)
- ``smolagents``: ``FoundryTools`` and ``foundry_tools``, smolagents ``Tool`` s
  (``toolfoundry[smolagents]``)
- ``bridge``: the framework-neutral half they share (which tools, how a call runs and fails)

Every adapter offers the meta-tools plus the registry's active tools with their own JSON Schema,
calls through :meth:`toolfoundry.Foundry.call`, and reports failures the way its framework
expects a tool error, so the model sees the kind and the problems. Traces and metrics of those
calls come from :mod:`toolfoundry.foundry.telemetry` when OpenTelemetry is installed
(``toolfoundry[otel]``). See docs/integrations.md.
"""
