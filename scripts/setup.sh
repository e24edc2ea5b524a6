#!/usr/bin/env bash
# Set up everything the project needs on a fresh machine: a virtualenv with the package and
# its dev tools, the QuickJS WebAssembly guest, the bundled npm libraries, and the Debian
# packages the slow suites use. Idempotent: re-running it only redoes what is missing.
# Each step is named when it starts and timed when it ends; the last line is the total.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}
export LC_ALL=C # a decimal point in the times, whatever the locale

now() { echo "${EPOCHREALTIME:-$SECONDS}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
setup_started=$(now)
step_name=""
step() { # step "WHAT": end the step running (saying its time), then name the next one
  [ -n "$step_name" ] && echo "setup: $step_name: $(since "$step_started") s"
  step_name=$1
  step_started=$(now)
  [ -n "$step_name" ] && echo "setup: $step_name..."
  return 0
}

step "the virtualenv (.venv) and the package with its dev tools"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev,build]"

step "Node.js and npm"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
# The bundled libraries' floor is jsbuild/package.json's "engines" (the README says the same).
floor=$(node -p 'require("./jsbuild/package.json").engines.node.replace(/^>=\s*/, "")')
if ! node -e '
  const [have, need] = [process.versions.node, process.argv[1]].map((v) => v.split(".").map(Number));
  for (let i = 0; i < 3; i++) if ((have[i] || 0) !== (need[i] || 0)) process.exit(have[i] > need[i] ? 0 : 1);
' "$floor"; then
  echo "setup: Node.js $floor or newer is needed (the bundled libraries' floor), found $(node --version): install a newer Node.js and run make setup again" >&2
  exit 1
fi

# The sandbox's npm libraries and web-API polyfills: `npm ci` from jsbuild/package-lock.json and
# an esbuild bundle, skipped when the outputs already match jsbuild/checksums.json.
step "the sandbox's npm libraries and polyfills (npm ci and esbuild, when not up to date)"
node jsbuild/build.mjs --install

# The TypeScript compiler the tests check the `typescript` catalogue format with (a test
# dependency, never shipped): `npm ci` from jsbuild/typecheck's lockfile unless that version is in.
step "the TypeScript compiler (tests of the typescript catalogue)"
want=$(node -p 'require("./jsbuild/typecheck/package.json").devDependencies.typescript')
have=$(node -p 'try { require("./jsbuild/typecheck/node_modules/typescript/package.json").version } catch { "" }')
if [ "$want" != "$have" ]; then
  npm ci --prefix jsbuild/typecheck --ignore-scripts --no-audit --no-fund
fi

# The benchmarks' JavaScript baselines (bench/bench_sandbox.py, bench/bench_serve.py): the
# official TypeScript MCP SDK and quickjs-emscripten, from bench/node's lockfile (never shipped).
step "the benchmarks' npm baselines (bench/node)"
want=$(sha256sum bench/node/package-lock.json | cut -d' ' -f1)
if [ "$want" != "$(cat bench/node/node_modules/.lock-sha256 2>/dev/null)" ]; then
  npm ci --prefix bench/node --ignore-scripts --no-audit --no-fund
  echo "$want" > bench/node/node_modules/.lock-sha256
fi

# Debian's chromium for the browser tests (Playwright drives /usr/bin/chromium; never `playwright
# install`, which downloads its own browsers).
step "chromium and chromedriver (browser tests)"
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq chromium chromium-driver
  else
    echo "setup: chromium is missing; run: sudo apt-get install chromium chromium-driver" >&2
  fi
fi

# The Python tier's jails: bubblewrap, and libseccomp for their system-call filter (compiled
# through pyseccomp, sandbox/process/syscall_filter.py), from Debian's packages.
step "bubblewrap (the Python tier's jails)"
if ! command -v bwrap >/dev/null || ! .venv/bin/python -c "import pyseccomp" 2>/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq bubblewrap libseccomp2
  else
    echo "setup: bwrap or libseccomp is missing (Python tier); run: sudo apt-get install bubblewrap libseccomp2" >&2
  fi
fi

# The QuickJS-NG WebAssembly guest (pinned, checksummed sources; fast when already built).
step "the QuickJS-NG WebAssembly guest (built once from pinned sources)"
.venv/bin/python -m toolfoundry.sandbox.js.guest.build

step ""
echo "setup: done in $(since "$setup_started") s"
