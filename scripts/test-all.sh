#!/usr/bin/env bash
# Installs everything the tests need, then runs every test (lint, types, unit, SQLite and
# PostgreSQL suites, REST and CLI end to end). This is the README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."

have_pg() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }

if ! have_pg; then
  if [ "$(id -u)" = 0 ]; then
    echo "# installing PostgreSQL from Debian's packages"
    apt-get update -qq
    # The package's own service start may fail without an init system; only the binaries matter
    # here (the tests start their own throwaway server), so check for them instead.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null || true
    have_pg || { echo "installing postgresql failed" >&2; exit 1; }
  else
    echo "PostgreSQL server binaries are missing: run 'sudo apt-get install postgresql' and retry" >&2
    exit 1
  fi
fi

npm ci --no-audit --no-fund
npm test
