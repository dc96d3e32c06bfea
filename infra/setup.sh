#!/usr/bin/env bash
# Everything a fresh machine needs before the platform or the tests can run. Idempotent.
# `setup.sh --run` installs only what running the platform needs (infra/up.sh); without it, also the
# tools only the tests use (promtool, the NATS test image, Chromium for the console's tests).
# With PROGRESS_FD set, each step's name and the seconds since the start also go to that descriptor
# (up.sh sends the details to a log file and shows only these lines).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-all}
case "$mode" in all | --run) ;; *) echo "usage: setup.sh [--run]" >&2 && exit 2 ;; esac
step() {
  printf '\n==> %s\n' "$*"
  if [ -n "${PROGRESS_FD:-}" ]; then printf '  %4ss  %s\n' "$SECONDS" "$*" >&"$PROGRESS_FD"; fi
}
for_tests() { [ "$mode" = all ]; }

step "node dependencies (npm ci)"
# npm 11 rejects a lockfile when the registry serves no copy of another platform's optional binary
# (npm/cli#9846, e.g. @biomejs/cli-darwin-arm64 on a Linux-only mirror); npm 10's `ci` installs the very
# same lockfile exactly, so it is the fallback, not `npm install`.
# A tree `npm ci` installed from this very lockfile, with this Node.js, is kept: `npm ci` would delete
# and reinstall it (a minute or two at every `infra/up.sh`). Delete node_modules to force a reinstall.
installed="$(sha256sum package-lock.json | cut -d' ' -f1) node $(node --version)"
if [ "$(cat node_modules/.wakeloop-installed 2>/dev/null)" = "$installed" ]; then
  echo "node_modules is installed from this package-lock.json"
else
  npm ci --no-audit --no-fund || npx -y npm@10 ci --no-audit --no-fund
  echo "$installed" >node_modules/.wakeloop-installed
fi

if for_tests && ! command -v promtool >/dev/null 2>&1; then
  step "promtool (the tests check infra/prometheus/prometheus.yml with it)"
  if [ "$(id -u)" -ne 0 ]; then
    echo "promtool is missing (run: sudo apt-get install prometheus)" >&2
    exit 1
  fi
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus
fi

step "PostgreSQL and NATS JetStream"
bash infra/ensure-services.sh

step "Docker engine"
bash infra/docker-engine.sh

step "sandbox base image"
bash infra/sandbox-image.sh

step "sandbox browser image (Chromium, for the browser_* tools)"
bash infra/sandbox-image.sh browser

if for_tests; then
  step "NATS test image (testcontainers)"
  bash infra/nats-image.sh

  step "Chromium for the web console's end-to-end tests (Debian package)"
  bash infra/chromium.sh
fi

step "compiled services and the web console (npm run build)"
npm run build
