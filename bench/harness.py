"""How the bench scripts measure: one home for what several of them need.

- the environment of a measured child process (``child_env``): bytecode kept, as an installed
  wheel keeps it, and optionally another source tree first on ``PYTHONPATH`` (a before/after);
  ``before_tree`` puts such a tree (``git archive`` of a revision) in a directory:

      .venv/bin/python bench/harness.py HEAD~1 /tmp/<you>-before   # prints its src/ to pass on

- interleaved rounds (``interleaved``: every side once a round, ABAB or ABBA), medians and
  percentiles, the timing of one call or a batch;
- the load average lines, ratio tables and Markdown rows the scripts print, and their goal
  lines (``goal_line``: the headline results docs/benchmarks.md's summary is made of);
- scratch PostgreSQL schemas and databases, ``serve --http`` processes on free ports.

Scripts run as ``.venv/bin/python bench/x.py``, so this directory is first on ``sys.path`` and
``from harness import ...`` finds this module.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from summary import RATIO, goal_text  # bench/summary.py: the one form of a goal line

CACHE = Path.home() / ".cache" / "toolfoundry-bench"
REPO = Path(__file__).resolve().parent.parent
PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
# the CLI as the console script runs it, from whichever tree PYTHONPATH puts first
CLI = [sys.executable, "-c", "from toolfoundry.cli import main; main()"]


def child_env(src: str | Path | None = None, without: Iterable[str] = ()) -> dict[str, str]:
    """This process's environment as a measured child process should have it.

    Bytecode is kept between processes, as in an installed package (pip compiles on install):
    with ``PYTHONDONTWRITEBYTECODE`` (set in some environments, e.g. this repository's CI
    sandbox) every process would compile toolfoundry's ~90 modules again (~0.2 s). It is kept
    under ``CACHE``, not beside the sources; a changed source is compiled again. The first
    process of a kind compiles (every module under the prefix, the standard library too): run
    one untimed first. ``src`` goes first on ``PYTHONPATH`` (another tree's ``src/``);
    ``without`` names variables to leave out.
    """
    dropped = {"PYTHONDONTWRITEBYTECODE", *without}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    if src is not None:
        env["PYTHONPATH"] = str(src)
    return env


def before_tree(rev: str, into: Path) -> Path:
    """``git archive`` of ``rev``'s ``src/`` extracted into ``into``; returns that ``src/``.

    The sandbox's build outputs are not in git (the guest and the bundled libraries): this
    checkout's are copied in, then the guest is built from the tree's own sources (its build
    returns at once when they are the same; the libraries are this checkout's)."""
    from toolfoundry.sandbox.js.guest import build

    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev, "src"], cwd=REPO, capture_output=True, check=True
    ).stdout
    tar = into / f"{rev.replace('/', '_')}.tar"
    tar.write_bytes(archive)
    with tarfile.open(tar) as opened:
        opened.extractall(into, filter="data")
    tar.unlink()
    src = into / "src"
    outputs = build.OUT_DIR
    shutil.copytree(outputs, src / outputs.relative_to(REPO / "src"), dirs_exist_ok=True)
    guest = [sys.executable, "-m", "toolfoundry.sandbox.js.guest.build"]
    subprocess.run(guest, env=child_env(src), capture_output=True, check=True)
    return src


def process_seconds(argv: list[str], env: Mapping[str, str], cwd: Path | None = None) -> float:
    """Seconds from spawn to exit of ``argv``; a failure stops the bench with its stderr."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, env=env, cwd=cwd, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def cli_seconds(args: list[str], src: str | Path | None = None) -> float:
    """Seconds of one ``toolfoundry ARGS`` process (from ``src`` when given)."""
    return process_seconds([*CLI, *args], child_env(src))


def seconds(fn: Callable[[], object]) -> float:
    """Wall seconds of one call of ``fn``."""
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def timed(fn: Callable[[], object]) -> Callable[[], float]:
    """A side for ``interleaved``: the seconds of one call of ``fn``."""
    return lambda: seconds(fn)


def each(fn: Callable[[], object], n: int, pace_s: float = 0.0) -> list[float]:
    """Seconds of each of ``n`` calls of ``fn`` (``pace_s`` of sleep before each, not timed)."""
    out = []
    for _ in range(n):
        if pace_s:
            time.sleep(pace_s)
        out.append(seconds(fn))
    return out


def per_call(fn: Callable[[], object], n: int) -> float:
    """Mean seconds per call of ``n`` calls of ``fn`` timed as one batch."""
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def samples(
    sides: Mapping[str, Callable[[], float | None]],
    rounds: int,
    *,
    abba: bool = False,
    warm: int = 0,
) -> dict[str, list[float]]:
    """What each side measured in each of ``rounds`` rounds, every side once a round, so load
    from other processes moves every side alike. ``abba`` reverses the order every round
    (neither side always runs right after the other); ``warm`` untimed calls of each side come
    first. A side answering None (not available) has nothing kept for that round."""
    for side in sides.values():
        for _ in range(warm):
            side()
    got: dict[str, list[float]] = {name: [] for name in sides}
    order = list(sides.items())
    for _ in range(rounds):
        for name, side in order:
            value = side()
            if value is not None:
                got[name].append(value)
        if abba:
            order.reverse()
    return got


def interleaved(
    sides: Mapping[str, Callable[[], float | None]],
    rounds: int,
    *,
    abba: bool = False,
    warm: int = 0,
) -> dict[str, float]:
    """The median of each side over ``samples``' rounds; a side that never answered is left
    out."""
    got = samples(sides, rounds, abba=abba, warm=warm)
    return {name: statistics.median(values) for name, values in got.items() if values}


def percentile(values: Iterable[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (0.5: the upper of two middles) of ``values``."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def load() -> float:
    """The one-minute load average."""
    return os.getloadavg()[0]


def print_machine() -> None:
    print(f"machine: {os.cpu_count()} cpus, load average {load():.1f}")


def print_load_before() -> None:
    print(f"load average before: {load():.2f} ({os.cpu_count()} shared cores)")


def print_load_after() -> None:
    print(f"load average after: {load():.2f}")


class RatioTable:
    """Lines of a measure, ours, its baseline and their ratio, the measure ``width`` wide."""

    def __init__(self, width: int) -> None:
        self.width = width

    def head(self) -> None:
        print(f"{'measure':{self.width}} {'ours':>9} {'baseline':>9} {'ratio':>7}  baseline")

    def line(self, name: str, ours: float, base: float, what: str) -> None:
        print(f"{name:{self.width}} {ours:8.3f}s {base:8.3f}s {ours / base:6.2f}x  {what}")


def goal_line(
    measure: str, value: float, unit: str = RATIO, *, goal: str = "", met: bool | None = None
) -> None:
    """Print one of the script's headline results for the summary of docs/benchmarks.md,
    which reads these lines and nothing else of the output (bench/summary.py).

    Args:
        measure: what was measured, in words.
        value: ours / the baseline measured in the same run (``unit`` ``x``), or the figure
            in ``unit``.
        unit: ``x``, or the unit of an absolute figure (``ms``, ``µs``, ``MiB``, ``%``).
        goal: what the script holds it to, as written for people (``<= 1.5x``).
        met: whether this run met ``goal``; None when there is no goal.
    """
    print(goal_text(measure, value, unit, goal=goal, met=met))


def markdown_row(cells: Iterable[str]) -> str:
    return "| " + " | ".join(cells) + " |"


@contextmanager
def fresh_schema(base: str = PG_SERVER) -> Iterator[str]:
    """A URL to a new, empty schema of ``base``'s database; dropped afterwards."""
    from sqlalchemy import create_engine, text

    schema = f"tf_bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{base}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@contextmanager
def fresh_database(server: str = PG_SERVER) -> Iterator[str]:
    """A URL to a new database on ``server`` (no test shares it); dropped afterwards."""
    from sqlalchemy import create_engine, text

    name = f"tf_bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield server.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve_http(url: str, cwd: Path, n: int = 1) -> Iterator[list[tuple[str, int]]]:
    """``n`` ``toolfoundry serve --http`` processes on ``url`` (working directory ``cwd``, a
    log each there); yields (base URL, pid) of each once all have announced themselves."""
    env = child_env(without=("TOOLFOUNDRY_DB", "TOOLFOUNDRY_TOKEN"))
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    bases = []
    try:
        for _ in range(n):
            port = free_port()
            log = cwd / f"serve-{port}.log"
            command = [*CLI, "serve", "--db", url, "--http", f"127.0.0.1:{port}"]
            with log.open("w") as stderr:
                procs.append((subprocess.Popen(command, cwd=cwd, env=env, stderr=stderr), log))
            bases.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 180
        for proc, log in procs:
            # announced once it serves (the socket is bound, and accepts, before that)
            while "MCP at" not in log.read_text():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"serve did not start: {log.read_text()}")
                time.sleep(0.1)
        yield [(base, proc.pid) for base, (proc, _) in zip(bases, procs, strict=True)]
    finally:
        for proc, _ in procs:
            proc.terminate()
        for proc, _ in procs:
            proc.wait(timeout=30)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python bench/harness.py REV DIR  (prints DIR's src/)")
    print(before_tree(sys.argv[1], Path(sys.argv[2])))
