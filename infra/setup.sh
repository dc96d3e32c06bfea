#!/usr/bin/env bash
# Everything a fresh machine needs before the platform or the tests can run. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "node dependencies (npm ci)"
npm ci --no-audit --no-fund

step "PostgreSQL and NATS JetStream"
bash infra/ensure-services.sh

step "Docker engine"
bash infra/docker-engine.sh

step "sandbox base image"
bash infra/sandbox-image.sh
