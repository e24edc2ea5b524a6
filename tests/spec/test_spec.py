import pytest

from toolfoundry.spec import (
    CallResult,
    Capabilities,
    ErrorKind,
    InvalidName,
    Level,
    StepResult,
    StepStatus,
    StorageScope,
    ToolSpec,
    UnknownCapability,
)

SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}


@pytest.mark.parametrize("name", ["a", "_x", "slug-ify", "A9_b-c", "x" * 64])
def test_portable_names_accepted(name: str) -> None:
    assert ToolSpec(name, "d", SCHEMA).name == name


@pytest.mark.parametrize("name", ["", "9a", "-a", "a.b.c", "a b", "x" * 65, "é", "a/b", None])
def test_unportable_names_refused(name: str | None) -> None:
    with pytest.raises(InvalidName, match="invalid tool name"):
        ToolSpec(name, "d", SCHEMA)  # type: ignore[arg-type]  # None is refused too


def test_spec_is_immutable_even_through_its_schema() -> None:
    spec = ToolSpec("t", "d", SCHEMA)
    spec.parameters["properties"]["text"]["type"] = "integer"
    assert spec.parameters["properties"]["text"]["type"] == "string"
    with pytest.raises(AttributeError):
        spec.name = "other"  # type: ignore[misc]


def test_params_view_and_replace() -> None:
    spec = ToolSpec("t", "d", SCHEMA, level="workflow")
    assert spec.level is Level.WORKFLOW
    (param,) = spec.params
    assert (param.name, param.required, param.schema["type"]) == ("text", True, "string")
    assert spec.replace(version=3).version == 3
    assert spec.version is None


def test_parameters_must_be_an_object_schema() -> None:
    with pytest.raises(ValueError, match="type 'object'"):
        ToolSpec("t", "d", {"type": "string"})


def test_capabilities_from_draft_form() -> None:
    caps = Capabilities.from_dict({"network": ["b.com", "a.com"], "storage": True})
    assert caps.network == ("a.com", "b.com")
    assert caps.storage is StorageScope.TOOL
    assert not caps.is_pure
    assert Capabilities.from_dict(None).is_pure
    assert caps.to_dict() == {"network": ["a.com", "b.com"], "storage": True}
    with pytest.raises(UnknownCapability, match="unknown capabilities"):
        Capabilities.from_dict({"filesystem": True})
    with pytest.raises(UnknownCapability, match="list of strings"):
        Capabilities.from_dict({"network": "a.com"})


def test_blocked_needs_blockers_and_only_blocked_has_them() -> None:
    assert StepResult(StepStatus.BLOCKED, blockers=("tests_failed",)).to_dict() == {
        "status": "blocked",
        "blockers": ["tests_failed"],
    }
    with pytest.raises(ValueError, match="at least one blocker"):
        StepResult(StepStatus.BLOCKED)
    with pytest.raises(ValueError, match="only a blocked step"):
        StepResult(StepStatus.SKIPPED, blockers=("x",))
    assert [s.value for s in StepStatus] == [
        "completed",
        "empty",
        "ready",
        "skipped",
        "unavailable",
        "blocked",
    ]


def test_call_result_shape_and_unwrap() -> None:
    ok = CallResult.success({"a": 1}, logs=["hi"], duration_ms=1.23456)
    assert ok.to_dict() == {
        "ok": True,
        "value": {"a": 1},
        "error": None,
        "logs": ["hi"],
        "duration_ms": 1.235,
    }
    bad = CallResult.failure("timeout", "took too long")
    assert bad.error is not None
    assert bad.error.kind is ErrorKind.TIMEOUT
    with pytest.raises(Exception, match="timeout: took too long"):
        bad.unwrap()
    with pytest.raises(ValueError):
        CallResult(ok=True, error=bad.error)


def test_read_only_hint_is_explicit_or_derived_from_capabilities() -> None:
    assert ToolSpec("t", "d", SCHEMA).is_read_only
    assert not ToolSpec("t", "d", SCHEMA, capabilities={"storage": True}).is_read_only
    explicit = ToolSpec("t", "d", SCHEMA, read_only=False)
    assert not explicit.is_read_only
    assert explicit.to_dict()["read_only"] is False
    assert explicit.replace(version=2).read_only is False
