#!/usr/bin/env bash
# Debian's chromium, which the web console's end-to-end tests drive with playwright-core (no browser
# download: the tests use this binary). Idempotent: installs only when it is missing.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  echo "chromium: $(chromium --version 2>/dev/null || echo present)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is missing; install it as root: apt-get install -y chromium" >&2
  exit 1
fi
apt-get update -q
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
