"""Capability policy decisions and approval binding."""

from __future__ import annotations

import pytest

from toolfoundry.forge import (
    ApprovalBinding,
    CapabilityPolicy,
    CapabilityPolicyError,
    capabilities_hash,
    check_approval,
    code_diff,
    code_sha256,
    explain_capabilities,
)
from toolfoundry.spec import Capabilities, StorageScope

PURE = Capabilities()
NET = Capabilities(network=("api.example.com",))


@pytest.mark.parametrize(
    ("caps", "language", "needs"),
    [
        (PURE, "javascript", False),
        (Capabilities(storage=StorageScope.TOOL), "javascript", False),
        (Capabilities(storage=StorageScope.SHARED), "javascript", True),
        (NET, "javascript", True),
        (Capabilities(credentials=("api.example.com",)), "javascript", True),
        (Capabilities(system=True), "javascript", True),
        (PURE, "python", True),
    ],
)
def test_default_policy(caps: Capabilities, language: str, needs: bool) -> None:
    decision = CapabilityPolicy().decide(caps, language)
    assert decision.needs_approval is needs
    assert bool(decision.reasons) is needs


def test_reasons_name_each_risky_capability() -> None:
    caps = Capabilities(
        network=("a.example.com", "b.example.com"),
        credentials=("a.example.com",),
        storage=StorageScope.SHARED,
    )
    reasons = CapabilityPolicy().decide(caps).reasons
    assert len(reasons) == 4
    assert any("b.example.com" in r for r in reasons)
    assert CapabilityPolicy().decide(caps).to_dict()["needs_approval"] is True


def test_stricter_policy_sends_everything_to_a_human() -> None:
    policy = CapabilityPolicy.from_config({"approve": "all"})
    decision = policy.decide(PURE)
    assert decision.needs_approval
    assert "approve" in decision.reasons[0]


def test_looser_policy_per_capability() -> None:
    policy = CapabilityPolicy.from_config(
        {
            "auto_approve_network": ["api.example.com", "*.trusted.example"],
            "auto_approve_credentials": ["api.example.com"],
            "auto_approve_shared_storage": True,
            "auto_approve_python": True,
        }
    )
    assert not policy.decide(NET).needs_approval
    assert not policy.decide(Capabilities(network=("x.trusted.example",))).needs_approval
    assert not policy.decide(Capabilities(network=("*.x.trusted.example",))).needs_approval
    assert policy.decide(Capabilities(network=("trusted.example",))).needs_approval
    assert policy.decide(Capabilities(network=("api.example.com:8443",))).needs_approval
    assert policy.decide(Capabilities(network=("evil-api.example.com",))).needs_approval
    assert not policy.decide(Capabilities(credentials=("api.example.com",))).needs_approval
    assert not policy.decide(Capabilities(storage=StorageScope.SHARED)).needs_approval
    assert not policy.decide(PURE, "python").needs_approval
    mixed = Capabilities(network=("api.example.com", "other.example.org"))
    assert policy.decide(mixed).reasons == (
        "network: the tool may send requests to other.example.org",
    )


def test_absent_policy_table_gives_defaults() -> None:
    assert CapabilityPolicy.from_config(None) == CapabilityPolicy()
    assert CapabilityPolicy.from_config({}) == CapabilityPolicy()


def test_bad_policy_table_lists_every_problem() -> None:
    with pytest.raises(CapabilityPolicyError) as info:
        CapabilityPolicy.from_config(
            {
                "approve": "never",
                "auto_approve_network": "api.example.com",
                "auto_approve_credentials": ["https://x/"],
                "auto_approve_python": "yes",
                "allow_everything": True,
            }
        )
    text = str(info.value)
    for fragment in (
        "policy.approve",
        "auto_approve_network",
        "https://x/",
        "auto_approve_python",
        "allow_everything",
    ):
        assert fragment in text


CODE = "export function handler({ q }) { return fetch('https://api.example.com/?q=' + q) }"


def test_hashes_are_stable_and_sensitive() -> None:
    assert code_sha256(CODE) == code_sha256(str(CODE))
    assert code_sha256(CODE) != code_sha256(CODE + " ")
    assert len(code_sha256(CODE)) == 64
    same = Capabilities(network=("b.example.com", "a.example.com"))
    assert capabilities_hash(same) == capabilities_hash(
        Capabilities(network=("a.example.com", "b.example.com"))
    )
    assert capabilities_hash(NET) != capabilities_hash(PURE)
    assert capabilities_hash(NET) != capabilities_hash(
        Capabilities(network=("api.example.com",), storage=StorageScope.TOOL)
    )
    assert capabilities_hash(PURE, "python") != capabilities_hash(PURE, "javascript")


def test_approval_binds_exact_code_and_capabilities() -> None:
    record = {
        "decision": "approved",
        "approver": "alice",
        **ApprovalBinding.of(CODE, NET).to_dict(),
    }
    assert check_approval(record, code=CODE, capabilities=NET).valid
    changed_code = check_approval(record, code=CODE.replace("q", "query"), capabilities=NET)
    assert not changed_code.valid
    assert changed_code.problems == ("the code changed since the approval (sha256 differs)",)
    wider = Capabilities(network=("api.example.com", "evil.example"))
    assert check_approval(record, code=CODE, capabilities=wider).problems == (
        "the capability set changed since the approval",
    )
    rejected = {**record, "decision": "rejected"}
    assert not check_approval(rejected, code=CODE, capabilities=NET).valid


def test_approval_record_may_be_an_object() -> None:
    class Row:
        decision = "approved"
        code_sha256 = code_sha256(CODE)
        capabilities_hash = capabilities_hash(NET)

    assert check_approval(Row(), code=CODE, capabilities=NET).valid
    assert not check_approval(object(), code=CODE, capabilities=NET).valid


def test_reviewer_sees_code_diff_capabilities() -> None:
    # The parts the review page (toolfoundry.foundry.review) shows a reviewer.
    previous = CODE.replace("q }", "q, page }")
    diff = code_diff(previous, CODE)
    assert diff.startswith("--- a/handler.js\n+++ b/handler.js")
    assert "-export function handler({ q, page })" in diff
    capabilities = explain_capabilities(NET)
    assert capabilities[0]["capability"] == "network"
    assert "api.example.com" in capabilities[0]["meaning"]
    assert ApprovalBinding.of(CODE, NET).to_dict()["code_sha256"] == code_sha256(CODE)


def test_capabilities_explained_for_reviewers() -> None:
    caps = Capabilities(
        network=("a.example",), credentials=("a.example",), storage=StorageScope.SHARED, system=True
    )
    kinds = [c["capability"] for c in explain_capabilities(caps)]
    assert kinds == ["network", "credentials", "storage", "system"]
    assert explain_capabilities(PURE) == []
