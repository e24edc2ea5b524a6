"""The forge: turns an agent's draft into a tested, policy-checked tool version, or refuses it.

from toolfoundry.forge import forge_draft
report = forge_draft({"name": "slugify", ...})
report.status          # active | pending_approval | rejected
report.step.blockers   # e.g. ("tests_failed",)
"""

from toolfoundry.forge.approval import (
    ApprovalBinding,
    ApprovalCheck,
    capabilities_hash,
    check_approval,
    code_diff,
    code_sha256,
    explain_capabilities,
)
from toolfoundry.forge.cases import Fixture, TestCase, parse_test_cases
from toolfoundry.forge.draft import (
    RESERVED_NAMES,
    RESERVED_PREFIXES,
    Draft,
    DraftLimits,
    parse_draft,
)
from toolfoundry.forge.draft_fields import DraftError
from toolfoundry.forge.draft_json import DraftJson, Language
from toolfoundry.forge.findings import Finding, Severity
from toolfoundry.forge.jscheck import bundled_libraries, check_javascript
from toolfoundry.forge.pipeline import ForgeReport, forge_draft, invalid_draft, parse_or_report
from toolfoundry.forge.policy import CapabilityDecision, CapabilityPolicy, CapabilityPolicyError
from toolfoundry.forge.pycheck import check_python
from toolfoundry.forge.regression import (
    ExistingTool,
    RegressionOutcome,
    behaves_like,
    behavioural_duplicates,
    regression_gate,
)
from toolfoundry.forge.testrun import (
    TestResult,
    ToolRunner,
    json_diff,
    json_equal,
    run_cases,
)
from toolfoundry.spec import VersionStatus

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
