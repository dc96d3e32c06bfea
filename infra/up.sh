#!/usr/bin/env bash
# Installs what is missing, migrates, starts the five services and the local fake model in the
# background, then runs the demo session against them. Idempotent: services already running are
# restarted. Logs and pids live in .wakeloop/; stop everything with `bash infra/down.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash infra/setup.sh

state=.wakeloop
mkdir -p "$state/logs" "$state/pids"
bash infra/down.sh >/dev/null 2>&1 || true

# Migrations and the tenant CLI use the owner; services connect as wakeloop_app, which row-level
# security binds (packages/db/src/app-role.ts). The migrate step creates and grants that role.
# Postgres on this host is reached over its Unix socket when it has one: half the cost of a TCP round trip.
pg_host="127.0.0.1:5432" pg_query=""
if [ -S /var/run/postgresql/.s.PGSQL.5432 ]; then pg_host="localhost" pg_query="?host=/var/run/postgresql"; fi
pg_url() { echo "postgres://$1@$pg_host/$2$pg_query"; }
OWNER_DATABASE_URL="${OWNER_DATABASE_URL:-$(pg_url postgres wakeloop)}"
export DATABASE_URL="${DATABASE_URL:-$(pg_url wakeloop_app wakeloop)}"
export NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"
# The NATS infra/ensure-services.sh starts here has no auth and listens on loopback only: a development
# machine. Services refuse to connect without their own NATS user anywhere this is not said.
export NATS_ALLOW_ANONYMOUS="${NATS_ALLOW_ANONYMOUS:-true}"
export PORT="${PORT:-8080}"
FAKE_MODEL_PORT="${FAKE_MODEL_PORT:-4010}"
# The demo's fake model runs on this machine: letting workers reach 127.0.0.1 is the operator's call,
# made here for the demo only (production leaves internal addresses refused).
export EGRESS_ALLOWED_HOSTS="${EGRESS_ALLOWED_HOSTS:-127.0.0.1}"
# Seals tenants' own provider keys; made once per checkout and kept beside the demo key.
[ -s "$state/credential-key" ] ||
  node -e 'process.stdout.write("dev:" + require("node:crypto").randomBytes(32).toString("base64"))' >"$state/credential-key"
export PROVIDER_CREDENTIAL_KEYS="${PROVIDER_CREDENTIAL_KEYS:-$(cat "$state/credential-key")}"

printf '\n==> database migrations\n'
npx tsx packages/db/src/migrate-cli.ts --url "$OWNER_DATABASE_URL" --app-role wakeloop_app

start() { # name, log file, command...
  local name=$1
  shift
  nohup "$@" >"$state/logs/$name.log" 2>&1 &
  echo $! >"$state/pids/$name.pid"
}

printf '\n==> starting the fake model and the services (logs in %s/logs)\n' "$state"
start fake-model node --import tsx packages/fake-model/src/cli.ts --port "$FAKE_MODEL_PORT" --script demo --approval-tool deploy
start gateway node --import tsx apps/gateway/src/main.ts
start orchestrator node --import tsx apps/orchestrator/src/main.ts
start harness-worker-1 env WORKER_ID=worker-1 node --import tsx apps/harness-worker/src/main.ts
start harness-worker-2 env WORKER_ID=worker-2 HEALTH_PORT=9085 METRICS_PORT=9469 node --import tsx apps/harness-worker/src/main.ts
start sandbox-runner node --import tsx apps/sandbox-runner/src/main.ts
start memory-retrieval node --import tsx apps/memory-retrieval/src/main.ts

for port in 9080 9081 9082 9085 9083 9084; do
  for _ in $(seq 1 120); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
    sleep 0.5
  done
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || { echo "a service on health port $port did not become ready; see $state/logs"; exit 1; }
done
echo "all services ready"

if [ ! -s "$state/demo-key" ]; then
  npx tsx apps/gateway/src/cli/create-tenant.ts --name demo --json --database-url "$OWNER_DATABASE_URL" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).owner_key.key))' >"$state/demo-key"
fi

printf '\n==> demo session\n'
WAKELOOP_URL="http://127.0.0.1:$PORT" WAKELOOP_API_KEY="$(cat "$state/demo-key")" \
  FAKE_MODEL_URL="http://127.0.0.1:$FAKE_MODEL_PORT/v1" npx tsx examples/demo.ts

cat <<MSG

The platform keeps running: API http://127.0.0.1:$PORT (key in $state/demo-key), OpenAPI at /v1/openapi.json,
web console at http://127.0.0.1:$PORT/console (sign in with that key).
Metrics (Prometheus text): http://127.0.0.1:9464/metrics (gateway), 9465 (orchestrator), 9466 and 9469
(workers), 9467 (sandbox-runner), 9468 (memory-retrieval); see docs/observability.md.
Stop it with: bash infra/down.sh
MSG
