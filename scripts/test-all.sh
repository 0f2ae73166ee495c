#!/usr/bin/env bash
# Installs everything the tests need, then runs every test (lint, types, unit, SQLite and
# PostgreSQL suites, REST and CLI end to end). This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

have_pg() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
# The sandbox tests run real bubblewrap and gVisor (runsc); socat bridges the egress proxy's
# Unix socket into a sandbox.
# prlimit, setpriv and mount (util-linux, mount) set the sandboxes' limits and scratch mounts;
# curl is the client inside a sandbox in the egress bridge test; chromium runs the console's
# browser tests (driven by playwright-core); haproxy is the round-robin load balancer in front of
# two replicas in the replica tests and `npm run bench:mcp`.
have_tools() {
  have_pg && command -v bwrap >/dev/null && command -v runsc >/dev/null && command -v socat >/dev/null &&
    command -v prlimit >/dev/null && command -v setpriv >/dev/null && command -v mount >/dev/null &&
    command -v perl >/dev/null && command -v curl >/dev/null && command -v haproxy >/dev/null &&
    [ -x /usr/bin/chromium ]
}

if ! have_tools; then
  if [ "$(id -u)" = 0 ]; then
    echo "# installing PostgreSQL, bubblewrap, gVisor (runsc), socat, HAProxy and chromium from Debian's packages"
    apt-get update -qq
    # The package's own service start may fail without an init system; only the binaries matter
    # here (the tests start their own throwaway server), so check for them instead.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      postgresql bubblewrap runsc socat util-linux mount perl-base curl haproxy chromium ca-certificates >/dev/null || true
    have_tools || { echo "installing postgresql, bubblewrap, runsc, socat, haproxy or chromium failed" >&2; exit 1; }
  else
    echo "missing system packages: run 'sudo apt-get install postgresql bubblewrap runsc socat util-linux mount perl-base curl haproxy chromium' and retry" >&2
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

npm ci --no-audit --no-fund
npm test
