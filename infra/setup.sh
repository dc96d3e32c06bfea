#!/usr/bin/env bash
# Everything a fresh machine needs before the platform or the tests can run. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "node dependencies (npm ci)"
# npm 11 rejects a lockfile when the registry serves no copy of another platform's optional binary
# (npm/cli#9846, e.g. @biomejs/cli-darwin-arm64 on a Linux-only mirror); npm 10's `ci` installs the very
# same lockfile exactly, so it is the fallback, not `npm install`.
npm ci --no-audit --no-fund || npx -y npm@10 ci --no-audit --no-fund

step "PostgreSQL and NATS JetStream"
bash infra/ensure-services.sh

step "Docker engine"
bash infra/docker-engine.sh

step "sandbox base image"
bash infra/sandbox-image.sh

step "NATS test image (testcontainers)"
bash infra/nats-image.sh
