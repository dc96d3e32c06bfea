#!/usr/bin/env bash
# Stops what infra/up.sh started (SIGTERM: each service finishes or hands back its work).
set -uo pipefail
cd "$(dirname "$0")/.."
for pidfile in .wakeloop/pids/*.pid; do
  [ -e "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  # npx → node: signal the whole process group of the launcher's children too.
  pkill -TERM -P "$pid" 2>/dev/null
  kill -TERM "$pid" 2>/dev/null
  rm -f "$pidfile"
done
echo "stopped (sandbox containers and their workspaces are kept for the next start)"
