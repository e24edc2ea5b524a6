"""The registry's tables, as SQLAlchemy Core metadata.

The Alembic migrations under ``migrations/`` create these tables; this module is what the
queries use. A test checks that the migrated database and this metadata agree.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    TypeDecorator,
    UniqueConstraint,
)

from toolfoundry.registry.codecs import bindable_name

metadata = MetaData()


class ToolNameText(TypeDecorator[str]):
    """A column holding tool names: the one gate for names that reach a query.

    Stored names are portable ASCII (``spec.names.NAME_PATTERN``), but a name to look up can
    come from anywhere, such as a non-UTF-8 byte of argv, which Python decodes to a lone
    surrogate. No database driver can encode that, so it is bound with U+FFFD instead: no
    stored name contains that character, so the lookup finds nothing and the caller reports
    ``not_found`` as for any unknown name, instead of a UnicodeEncodeError from the driver.
    Raw SQL on the hot call path (registry/calls.py) binds through :func:`bindable_name`.
    """

    impl = String
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None or not isinstance(value, str):
            return value
        return bindable_name(value)


# One row per tool name. ``current_version`` is the pointer; ``current_status`` mirrors the
# status of the version it points to, so search and listings filter without a join.
tools = Table(
    "tf_tools",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", ToolNameText(64), nullable=False, unique=True),
    Column("current_version", Integer, nullable=True),
    Column("current_status", String(32), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

# Immutable versions: only ``status`` changes after insert (the lifecycle, not the content).
versions = Table(
    "tf_versions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("tool_id", Integer, ForeignKey("tf_tools.id"), nullable=False),
    Column("version", Integer, nullable=False),
    Column("language", String(32), nullable=False),
    Column("code", Text, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("description", Text, nullable=False),
    Column("parameters", JSON, nullable=False),
    Column("returns", JSON, nullable=True),
    Column("tests", JSON, nullable=False),
    Column("fixtures", JSON, nullable=False),
    Column("capabilities", JSON, nullable=False),
    Column("capability_hash", String(64), nullable=False),
    Column("level", String(16), nullable=False),
    Column("status", String(32), nullable=False),
    Column("author", String(200), nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("parent_version", Integer, nullable=True),
    Column("findings", JSON, nullable=False),
    Column("test_results", JSON, nullable=False),
    Column("extra", JSON, nullable=False),
    UniqueConstraint("tool_id", "version", name="uq_tf_versions_tool_version"),
)
Index("ix_tf_versions_sha256", versions.c.sha256)

# One row per key and tool (a name has one or two keys; lookalike names share one). Migration
# 0007 creates it; registry/lookalikes.py writes and reads it. A key is a
# folded name, bound like one (ToolNameText: a lone surrogate cannot reach the driver).
name_keys = Table(
    "tf_name_keys",
    metadata,
    Column("key", ToolNameText(), primary_key=True),
    Column("tool_id", Integer, ForeignKey("tf_tools.id"), primary_key=True),
)
Index("ix_tf_name_keys_tool", name_keys.c.tool_id)

# Each tool's search vector (registry/vectors.py), written with its search document: the
# embedding model's id, the current version's status, and the vector as float32 bytes (model
# and vector NULL when the writing process had none: a process with a model fills it in).
# ``generation`` orders the changes (``search_clock``); migration 0009.
search_vectors = Table(
    "tf_search_vectors",
    metadata,
    Column("tool_id", Integer, ForeignKey("tf_tools.id"), primary_key=True),
    Column("generation", BigInteger, nullable=False),
    Column("model", String(64), nullable=True),
    Column("status", String(32), nullable=False),
    Column("vector", LargeBinary, nullable=True),
)
Index("ix_tf_search_vectors_generation", search_vectors.c.generation)

# One row (id 1): the generation of the newest change to ``tf_search_vectors``. A writer takes
# its row lock, so generations commit in their order: a reader that has read generation N
# has every change up to N.
search_clock = Table(
    "tf_search_clock",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("generation", BigInteger, nullable=False),
)


# One row per tool a version's code calls (code mode): the callee (a registry tool's name, or
# an upstream server's ``UPSTREAM.TOOL``), the callee's version its tests ran against (registry
# tools) or its input schema's hash (upstream tools), and whether the forge read it from the
# code or the draft's ``uses``. Written with the version, never changed (migration 0012); the
# callee index answers "what uses this tool".
dependencies = Table(
    "tf_dependencies",
    metadata,
    Column("version_id", Integer, ForeignKey("tf_versions.id"), primary_key=True),
    Column("callee", ToolNameText(64), primary_key=True),
    Column("callee_version", Integer, nullable=True),
    Column("schema_hash", String(64), nullable=True),
    Column("found", String(8), nullable=False),
)
Index("ix_tf_dependencies_callee", dependencies.c.callee)

approvals = Table(
    "tf_approvals",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("version_id", Integer, ForeignKey("tf_versions.id"), nullable=False),
    Column("approver", String(200), nullable=False),
    Column("decided_at", DateTime(timezone=True), nullable=False),
    Column("decision", String(16), nullable=False),
    Column("reason", Text, nullable=False),
    Column("code_sha256", String(64), nullable=False),
    Column("capability_hash", String(64), nullable=False),
)
Index("ix_tf_approvals_version", approvals.c.version_id)

# Append-only: triggers installed by the migration refuse UPDATE and DELETE. ``caller`` names
# who made a call through code mode's ``tools`` (``run:<id>`` for a run_js snippet,
# ``name@version`` for a tool's code; migration 0008); NULL for everything else.
CALLER_CHARS = 200
audit = Table(
    "tf_audit",
    metadata,
    Column(
        "id", BigInteger().with_variant(Integer, "sqlite"), primary_key=True, autoincrement=True
    ),
    Column("at", DateTime(timezone=True), nullable=False),
    Column("tool", ToolNameText(64), nullable=False),
    Column("version", Integer, nullable=True),
    Column("event", String(32), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("detail", JSON, nullable=False),
    Column("caller", String(CALLER_CHARS), nullable=True),
)
Index("ix_tf_audit_tool", audit.c.tool, audit.c.id)
Index("ix_tf_audit_caller", audit.c.caller, audit.c.id)

# Usage as counters: "calls", "failed:<kind>", "ms:<bucket>" (a log-scaled histogram), and
# "by:<caller>" for calls made through ``tools`` (the calling tool's name, or ``run_js``).
usage = Table(
    "tf_usage",
    metadata,
    Column("tool", ToolNameText(64), primary_key=True),
    Column("counter", String(80), primary_key=True),
    Column("n", BigInteger, nullable=False),
    Column("total_ms", Float, nullable=False),
    Column("last_at", DateTime(timezone=True), nullable=False),
)

# Per journal of call records (registry/call_journal.py, PostgreSQL registries): the last
# sequence number written, in the same transaction as the records (migration 0011).
journal_marks = Table(
    "tf_journal_marks",
    metadata,
    Column("journal", String(64), primary_key=True),
    Column("seq", BigInteger, nullable=False),
)

storage = Table(
    "tf_storage",
    metadata,
    Column("namespace", String(200), primary_key=True),
    Column("key", Text, primary_key=True),
    Column("value", Text, nullable=False),
)

# One row per agent run: its outcome and the transcript of every turn (written after each turn).
MODEL_CHARS = 200  # longer "provider:model" strings are stored cut to this
agent_runs = Table(
    "tf_agent_runs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("task", Text, nullable=False),
    Column("model", String(MODEL_CHARS), nullable=False),
    Column("stop_reason", String(32), nullable=True),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("turns", Integer, nullable=False),
    Column("input_tokens", BigInteger, nullable=False),
    Column("output_tokens", BigInteger, nullable=False),
    Column("transcript", JSON, nullable=False),
)
Index("ix_tf_agent_runs_started", agent_runs.c.started_at)

# One row per run_js snippet run through a foundry (code mode): what it ran, how it ended, and
# its recording (arguments, result, each inner call's answer, each fetch), from which
# ``create_tool(from_run=...)`` makes a tool and its first test. Kept bounded in count and age
# (registry/code_runs.py); migration 0008.
code_runs = Table(
    "tf_code_runs",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(200), nullable=False),
    Column("ok", Boolean, nullable=False),
    Column("error_kind", String(32), nullable=True),
    Column("duration_ms", Float, nullable=False),
    Column("inner_calls", Integer, nullable=False),
    Column("code", Text, nullable=False),
    Column("recording", JSON, nullable=True),
)
Index("ix_tf_code_runs_started", code_runs.c.started_at)

# One row per review of the library that ``serve`` ran by itself (foundry/review_schedule.py):
# when and why it ran, the runtime it ran under, and what it found (registry/reviews.py keeps
# the newest 100). ``finished_at`` is NULL while it runs, or when its process stopped first.
reviews = Table(
    "tf_reviews",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=True),
    Column("trigger", String(32), nullable=False),
    Column("runner", String(200), nullable=False),
    Column("fingerprint", String(64), nullable=False),
    Column("runtime", JSON, nullable=False),
    Column("summary", JSON, nullable=True),
    Column("findings", JSON, nullable=True),
)
