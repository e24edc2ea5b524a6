"""The shared vocabulary: ToolSpec, Param, Level, StepStatus, VersionStatus, CallResult,
CallError, and the code and capability-set hashes an approval binds.

Only the vocabulary lives here (the tool, its capabilities, limits, names, statuses, results,
binding hashes; ``declared_tool.py`` is the seam a declared tool meets). The code it stands on
(the JSON gate, the schema validator, caches, text display) is ``toolfoundry.base``, the layer
below. The public names are ``__all__``; the modules may change.
"""

from toolfoundry.base.problem import Problem
from toolfoundry.spec.binding import capabilities_hash, code_sha256, version_identity
from toolfoundry.spec.capabilities import Capabilities, StorageScope, UnknownCapability
from toolfoundry.spec.declared_tool import DeclaredTool
from toolfoundry.spec.limits import CallLimits
from toolfoundry.spec.names import NAME_PATTERN, InvalidName, validate_name
from toolfoundry.spec.result import CallError, CallResult, ErrorKind, ToolCallFailed
from toolfoundry.spec.status import StepResult, StepStatus, VersionStatus
from toolfoundry.spec.tool import JSON_SCHEMA_DIALECT, Level, Param, ToolSpec

__all__ = [
    "JSON_SCHEMA_DIALECT",
    "NAME_PATTERN",
    "CallError",
    "CallLimits",
    "CallResult",
    "Capabilities",
    "DeclaredTool",
    "ErrorKind",
    "InvalidName",
    "Level",
    "Param",
    "Problem",
    "StepResult",
    "StepStatus",
    "StorageScope",
    "ToolCallFailed",
    "ToolSpec",
    "UnknownCapability",
    "VersionStatus",
    "capabilities_hash",
    "code_sha256",
    "validate_name",
    "version_identity",
]
