#!/usr/bin/env bash
# The wheel as a library user gets it: built, installed into a fresh virtualenv, run with a PATH
# that has no node, npm or zig.
#
#   scripts/wheel_smoke.sh [DIST_DIR]   (default: build dist with uv into a temporary directory)
#
# Checks: the sdist builds the same wheel as the tree; pip refuses mcp<2 next to the wheel;
# js run with a bundled library, URL and TextEncoder; create + call; serve over stdio with the
# official MCP client; the demo; doctor; a PostgreSQL URL without the [postgres] extra; and,
# with a library altered and then the guest removed from the installed package, that create
# and serve answer sandbox_unavailable in one line with the fix.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
UV=$ROOT/.venv/bin/uv
PY=${PY:-python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
step() { echo "wheel smoke: [${SECONDS}s] $*"; }
fail() { echo "wheel smoke: FAILED: $*" >&2; exit 1; }

# The tree as it is now (the files git sees, plus the built sandbox), so that edits made while
# the smoke runs cannot make the two builds below differ.
TREE=$WORK/tree
"$PY" - "$TREE" <<'PY'
import shutil, subprocess, sys
from pathlib import Path
listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"],
                        capture_output=True, check=True).stdout.decode().split("\0")
built = [str(p) for p in Path("src/toolfoundry/sandbox/js/_build").rglob("*") if p.is_file()]
for name in [*filter(None, listed), *built]:
    if Path(name).is_file():
        (Path(sys.argv[1]) / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(name, Path(sys.argv[1]) / name)
PY
DIST=${1:-}
if [ -z "$DIST" ]; then
  DIST=$WORK/dist
  "$UV" build -q --out-dir "$DIST" "$TREE"
fi
WHEEL=$(ls "$DIST"/toolfoundry-*-py3-none-any.whl)
ls "$DIST"/toolfoundry-*.tar.gz >/dev/null

step "the wheel built from the sdist is the wheel built from the tree"
"$UV" build -q --wheel --out-dir "$WORK/from-tree" "$TREE"
record() { unzip -p "$1" '*.dist-info/RECORD' | sort; }
diff <(record "$WHEEL") <(record "$WORK"/from-tree/*.whl) >/dev/null \
  || fail "the sdist's wheel differs from the tree's: $(diff <(record "$WHEEL") <(record "$WORK"/from-tree/*.whl) | head -5)"
unzip -l "$WHEEL" | grep -q "_build/artifacts.json" || fail "the wheel has no _build/artifacts.json"

step "a fresh virtualenv with $(basename "$WHEEL")[server]"
"$PY" -m venv "$WORK/venv"
V=$WORK/venv/bin
# Copies, not uv's hard links into its cache: the steps below alter installed files, and an
# altered link would alter the cache, so every later install of this wheel on the machine.
"$UV" pip install -q --link-mode copy --python "$V/python" "$WHEEL[server]"
mkdir -p "$WORK/home" "$WORK/run"
# Only the virtualenv's bin on PATH: no node, npm, npx or zig can be found.
RUN=(env -i "HOME=$WORK/home" "PATH=$V" "XDG_CACHE_HOME=$WORK/cache" "LANG=C.UTF-8")
"${RUN[@]}" "$V/python" -c "import shutil, sys; sys.exit(any(map(shutil.which, ['node', 'npm', 'npx', 'zig'])))" \
  || fail "node, npm or zig is reachable from the smoke's PATH"

step "pip refuses mcp<2 next to the wheel"
if "$V/python" -m pip install -q --dry-run "$WHEEL[server]" "mcp<2" >"$WORK/pip.log" 2>&1; then
  fail "pip accepted mcp<2 with toolfoundry[server]"
fi
grep -qiE "conflict|ResolutionImpossible" "$WORK/pip.log" || fail "pip failed otherwise: $(tail -3 "$WORK/pip.log")"

cd "$WORK/run"
# A generous time budget, so a loaded CI machine does not turn a slow test run into a refusal.
printf '[limits]\ntimeout_s = 20.0\n' >toolfoundry.toml
step "js run: decimal.js, URL, TextEncoder (first run prepares the module cache)"
cat >probe.js <<'EOF'
import Decimal from "decimal.js";
export default {
  sum: new Decimal("0.1").plus("0.2").toString(),
  port: new URL("https://example.com:8443/a?b=1").port,
  bytes: new TextEncoder().encode("héllo").length,
};
EOF
"${RUN[@]}" toolfoundry js run probe.js >probe.out
"$V/python" -c "import json, sys; v = json.load(open('probe.out')); sys.exit(v != {'sum': '0.3', 'port': '8443', 'bytes': 6})" \
  || fail "js run printed $(cat probe.out)"

step "create + call"
cat >draft.json <<'EOF'
{"name": "word_count", "description": "Count the words of a text.",
 "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
 "code": "export function handler({ text }) { return text.split(/\\s+/).filter(Boolean).length }",
 "tests": [{"input": {"text": "one two  three"}, "expected": 3}]}
EOF
DB=sqlite:///$WORK/run/registry.db
"${RUN[@]}" toolfoundry create draft.json --db "$DB" >create.log 2>&1 || true
grep -q "word_count v1: active" create.log || fail "create: $(cat create.log)"
[ "$("${RUN[@]}" toolfoundry call word_count --args '{"text": "a b c"}' --db "$DB")" = 3 ] || fail "call"

step "serve over stdio with the official MCP client"
"${RUN[@]}" "$V/python" "$ROOT/scripts/mcp_smoke.py" "$V/toolfoundry" "sqlite:///$WORK/run/mcp.db"

step "demo"
"${RUN[@]}" toolfoundry demo >demo.log 2>&1 || fail "demo: $(tail -5 demo.log)"

step "doctor"
"${RUN[@]}" toolfoundry doctor >doctor.log || fail "doctor: $(cat doctor.log)"

step "a PostgreSQL URL without the [postgres] extra"
if "${RUN[@]}" toolfoundry tools list --db postgresql://nobody@127.0.0.1:1/x 2>pg.err; then fail "no error"; fi
grep -q "install toolfoundry\[postgres\]" pg.err || fail "postgres: $(cat pg.err)"

step "agent without [agents], serve without [server]: the same one-line message"
if "${RUN[@]}" OPENAI_API_KEY=unused toolfoundry agent "x" --model openai:gpt-4o-mini \
  --db "sqlite:///$WORK/run/agent.db" >agent.out 2>&1; then fail "agent ran without openai"; fi
grep -q "needs the \[agents\] extra: install toolfoundry\[agents\]" agent.out || fail "agent: $(cat agent.out)"
"$UV" pip uninstall -q --python "$V/python" mcp
if "${RUN[@]}" toolfoundry serve --db "sqlite:///$WORK/run/serve.db" </dev/null >serve.out 2>&1; then
  fail "serve ran without mcp"
fi
[ "$(wc -l <serve.out)" = 1 ] || fail "serve said more than one line: $(cat serve.out)"
grep -q "^Error: toolfoundry serve needs the \[server\] extra: install toolfoundry\[server\]" serve.out \
  || fail "serve: $(cat serve.out)"

SITE=$("$V/python" -c "import pathlib, toolfoundry; print(pathlib.Path(toolfoundry.__file__).parent)")
BUILT=$SITE/sandbox/js/_build
one_line_unavailable() {  # $1: what the line must also say
  if "${RUN[@]}" toolfoundry create draft.json --db "sqlite:///$WORK/run/broken.db" >out.log 2>err.log; then
    fail "create succeeded with a damaged sandbox"
  fi
  [ "$(wc -l <err.log)" = 1 ] || fail "create said more than one line: $(cat err.log)"
  grep -q "^error (sandbox_unavailable): .*$1.*fix: reinstall toolfoundry" err.log || fail "create: $(cat err.log)"
  if "${RUN[@]}" toolfoundry serve --db "sqlite:///$WORK/run/broken.db" </dev/null >out.log 2>err.log; then
    fail "serve started with a damaged sandbox"
  fi
  grep -q "^Error: the sandbox cannot run: " err.log || fail "serve: $(cat err.log)"
}
step "an altered library in the installed package: sandbox_unavailable"
cp "$BUILT/libs/decimal_js.mjs" "$WORK/decimal.bak"
echo "// altered" >>"$BUILT/libs/decimal_js.mjs"
one_line_unavailable "decimal.js"
cp "$WORK/decimal.bak" "$BUILT/libs/decimal_js.mjs"
step "the guest removed from the installed package: sandbox_unavailable"
rm "$BUILT/quickjs.wasm"
one_line_unavailable "quickjs.wasm"
step "passed"
