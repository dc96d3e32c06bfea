#!/usr/bin/env bash
# Installs what is missing and runs the whole suite (typecheck + lint + tests) through turbo's verify
# task. Ends with the line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1

bash infra/setup.sh || { echo "set-up failed"; echo "0 passed, 1 failed"; exit 1; }

rm -f .vitest-results.json
npm run verify
status=$?
node infra/test-counts.mjs .vitest-results.json || status=1
exit "$status"
