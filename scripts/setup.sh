#!/usr/bin/env bash
# Set up everything the project needs on a fresh machine: a virtualenv with the package and
# its dev tools, the QuickJS WebAssembly guest, the bundled npm libraries, and the Debian
# packages the slow suites use. Idempotent: re-running it only redoes what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev,build]"

# The sandbox's npm libraries and web-API polyfills: `npm ci` from jsbuild/package-lock.json and
# an esbuild bundle, skipped when the outputs already match jsbuild/checksums.json.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  apt-get update -qq && apt-get install -y -qq nodejs npm
fi
node jsbuild/build.mjs --install
# Debian's chromium for the browser tests (Playwright drives /usr/bin/chromium; never `playwright
# install`, which downloads its own browsers).
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq chromium chromium-driver
  else
    echo "setup: chromium is missing; run: sudo apt-get install chromium chromium-driver" >&2
  fi
fi
# The Python tier's jails: bubblewrap from Debian's packages.
if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && apt-get install -y -qq bubblewrap
  else
    echo "setup: bwrap is missing (Python tier); run: sudo apt-get install bubblewrap" >&2
  fi
fi
# The QuickJS-NG WebAssembly guest (pinned, checksummed sources; fast when already built).
.venv/bin/python -m toolfoundry.sandbox.js.guest.build
