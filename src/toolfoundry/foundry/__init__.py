"""The orchestration: the only layer that sees the forge, the registry and the sandbox together.

- ``facade``: the public :class:`Foundry` (open, create, call, review, versions, search)
- ``create``: a draft through the forge into a registered version
- ``call``: a call through validation and the sandbox into usage
- ``review``: what a human reviewer is shown about a version
- ``meta_tools``: the foundry's own tools (create_tool, search_tools, ...) as declarations
"""

from toolfoundry.foundry.create import CreateResult
from toolfoundry.foundry.facade import Decision, Foundry

__all__ = ["CreateResult", "Decision", "Foundry"]
