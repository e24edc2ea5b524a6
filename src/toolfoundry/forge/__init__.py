"""The forge: turns an agent's draft into a tested, policy-checked tool version, or refuses it.

from toolfoundry.forge import forge_draft
report = forge_draft({"name": "slugify", ...})
report.status          # active | pending_approval | rejected
report.step.blockers   # e.g. ("tests_failed",)

Every name loads its module on first use (the forge brings pydantic, tree-sitter, the test
runner): ``toolfoundry.config`` needs only the capability policy and the draft limits, and
``tools list`` or ``serve`` should not pay for the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry.base.lazy import lazy_names
from toolfoundry.spec import VersionStatus

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.forge.approval import (
        ApprovalBinding,
        ApprovalCheck,
        capabilities_hash,
        check_approval,
        code_diff,
        code_sha256,
        explain_capabilities,
    )
    from toolfoundry.forge.cases import TestCase, parse_test_cases
    from toolfoundry.forge.checks.js import bundled_libraries, check_javascript
    from toolfoundry.forge.checks.python import check_python
    from toolfoundry.forge.draft import RESERVED_NAMES, RESERVED_PREFIXES, Draft, parse_draft
    from toolfoundry.forge.draft_fields import DraftError
    from toolfoundry.forge.draft_json import DraftJson, Language
    from toolfoundry.forge.findings import Finding, Severity
    from toolfoundry.forge.fixtures import Fixture
    from toolfoundry.forge.pipeline import ForgeReport, forge_draft, invalid_draft, parse_or_report
    from toolfoundry.forge.policy import (
        CapabilityDecision,
        CapabilityPolicy,
        CapabilityPolicyError,
    )
    from toolfoundry.forge.regression import (
        ExistingTool,
        RegressionOutcome,
        behaves_like,
        behavioural_duplicates,
        regression_gate,
    )
    from toolfoundry.forge.testrun import TestResult, ToolRunner, json_diff, json_equal, run_cases
    from toolfoundry.spec.limits import DraftLimits

_LAZY = {
    "ApprovalBinding": "toolfoundry.forge.approval",
    "ApprovalCheck": "toolfoundry.forge.approval",
    "capabilities_hash": "toolfoundry.forge.approval",
    "check_approval": "toolfoundry.forge.approval",
    "code_diff": "toolfoundry.forge.approval",
    "code_sha256": "toolfoundry.forge.approval",
    "explain_capabilities": "toolfoundry.forge.approval",
    "Fixture": "toolfoundry.forge.fixtures",
    "TestCase": "toolfoundry.forge.cases",
    "parse_test_cases": "toolfoundry.forge.cases",
    "RESERVED_NAMES": "toolfoundry.forge.draft",
    "RESERVED_PREFIXES": "toolfoundry.forge.draft",
    "Draft": "toolfoundry.forge.draft",
    "DraftLimits": "toolfoundry.spec.limits",
    "parse_draft": "toolfoundry.forge.draft",
    "DraftError": "toolfoundry.forge.draft_fields",
    "DraftJson": "toolfoundry.forge.draft_json",
    "Language": "toolfoundry.forge.draft_json",
    "Finding": "toolfoundry.forge.findings",
    "Severity": "toolfoundry.forge.findings",
    "bundled_libraries": "toolfoundry.forge.checks.js",
    "check_javascript": "toolfoundry.forge.checks.js",
    "ForgeReport": "toolfoundry.forge.pipeline",
    "forge_draft": "toolfoundry.forge.pipeline",
    "invalid_draft": "toolfoundry.forge.pipeline",
    "parse_or_report": "toolfoundry.forge.pipeline",
    "CapabilityDecision": "toolfoundry.forge.policy",
    "CapabilityPolicy": "toolfoundry.forge.policy",
    "CapabilityPolicyError": "toolfoundry.forge.policy",
    "check_python": "toolfoundry.forge.checks.python",
    "ExistingTool": "toolfoundry.forge.regression",
    "RegressionOutcome": "toolfoundry.forge.regression",
    "behaves_like": "toolfoundry.forge.regression",
    "behavioural_duplicates": "toolfoundry.forge.regression",
    "regression_gate": "toolfoundry.forge.regression",
    "TestResult": "toolfoundry.forge.testrun",
    "ToolRunner": "toolfoundry.forge.testrun",
    "json_diff": "toolfoundry.forge.testrun",
    "json_equal": "toolfoundry.forge.testrun",
    "run_cases": "toolfoundry.forge.testrun",
}
__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "RESERVED_NAMES",
    "RESERVED_PREFIXES",
    "ApprovalBinding",
    "ApprovalCheck",
    "CapabilityDecision",
    "CapabilityPolicy",
    "CapabilityPolicyError",
    "Draft",
    "DraftError",
    "DraftJson",
    "DraftLimits",
    "ExistingTool",
    "Finding",
    "Fixture",
    "ForgeReport",
    "Language",
    "RegressionOutcome",
    "Severity",
    "TestCase",
    "TestResult",
    "ToolRunner",
    "VersionStatus",
    "behaves_like",
    "behavioural_duplicates",
    "bundled_libraries",
    "capabilities_hash",
    "check_approval",
    "check_javascript",
    "check_python",
    "code_diff",
    "code_sha256",
    "explain_capabilities",
    "forge_draft",
    "invalid_draft",
    "json_diff",
    "json_equal",
    "parse_draft",
    "parse_or_report",
    "parse_test_cases",
    "regression_gate",
    "run_cases",
]
