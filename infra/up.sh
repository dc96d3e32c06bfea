#!/usr/bin/env bash
# Installs what is missing, migrates, starts the five services and the local fake model in the
# background, then runs the demo session against them. Idempotent: services already running are
# restarted. Logs and pids live in .wakeloop/; stop everything with `bash infra/down.sh`.
# It prints a line per step with the seconds since it started; everything the steps print goes to
# .wakeloop/logs/up.log (its last lines are shown when a step fails).
set -euo pipefail
cd "$(dirname "$0")/.."

state=.wakeloop
mkdir -p "$state/logs" "$state/pids"
log="$state/logs/up.log"
: >"$log"
exec 3>&1
fail() {
  echo "infra/up.sh: $1 failed; the last lines of $log:" >&2
  tail -n 25 "$log" >&2
  exit 1
}
progress() { printf '  %4ss  %s\n' "$SECONDS" "$*"; }

echo "Starting Wakeloop (details in $log)"
PROGRESS_FD=3 bash infra/setup.sh --run >>"$log" 2>&1 || fail "set-up"
bash infra/down.sh >>"$log" 2>&1 || true

# Migrations and the tenant CLI use the owner; services connect as wakeloop_app, which row-level
# security binds (packages/db/src/app-role.ts). The migrate step creates and grants that role, and the
# agent SQL database (wakeloop_agents) with its runner role wakeloop_app_sql, where db_sql runs.
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
# made here for a development start only (production leaves internal addresses refused). The same host
# may be an anthropic/openai agent's base_url here, so any client can point those providers at the
# fake model; it then receives the platform's provider keys, if any are set (docs/security.md).
export EGRESS_ALLOWED_HOSTS="${EGRESS_ALLOWED_HOSTS:-127.0.0.1}"
export MODEL_BASE_URL_ALLOWED_HOSTS="${MODEL_BASE_URL_ALLOWED_HOSTS:-127.0.0.1}"
# Without a key of its own a provider's agent stops at "no key for provider"; the fake model takes any.
export ANTHROPIC_API_KEY="${ANTHROPIC_API_KEY:-fake-model-key}" OPENAI_API_KEY="${OPENAI_API_KEY:-fake-model-key}"
# Seals tenants' own provider keys; made once per checkout and kept beside the demo key.
[ -s "$state/credential-key" ] ||
  node -e 'process.stdout.write("dev:" + require("node:crypto").randomBytes(32).toString("base64"))' >"$state/credential-key"
export PROVIDER_CREDENTIAL_KEYS="${PROVIDER_CREDENTIAL_KEYS:-$(cat "$state/credential-key")}"

progress "database migrations"
npx tsx packages/db/src/migrate-cli.ts --url "$OWNER_DATABASE_URL" --app-role wakeloop_app >>"$log" 2>&1 ||
  fail "the database migrations"

start() { # name, log file, command...
  local name=$1
  shift
  nohup "$@" >"$state/logs/$name.log" 2>&1 &
  echo $! >"$state/pids/$name.pid"
}

progress "starting the fake model and the five services (logs in $state/logs)"
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
  curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null || fail "the service on health port $port (see $state/logs)"
done
progress "all services ready"

if [ ! -s "$state/demo-key" ]; then
  progress "demo tenant and its owner key"
  npx tsx apps/gateway/src/cli/create-tenant.ts --name demo --json --database-url "$OWNER_DATABASE_URL" 2>>"$log" |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).owner_key.key))' >"$state/demo-key" ||
    fail "creating the demo tenant"
fi

progress "demo session"
echo
WAKELOOP_URL="http://127.0.0.1:$PORT" WAKELOOP_API_KEY="$(cat "$state/demo-key")" \
  FAKE_MODEL_URL="http://127.0.0.1:$FAKE_MODEL_PORT/v1" npx tsx examples/demo.ts

cat <<MSG

Ready in ${SECONDS}s. The platform keeps running:
  API http://127.0.0.1:$PORT (OpenAPI at /v1/openapi.json), web console http://127.0.0.1:$PORT/console.
  The demo tenant's owner key is in $state/demo-key: export WAKELOOP_API_KEY=\$(cat $state/demo-key)
  Another tenant: npm run tenant -- --name acme (prints its owner key once; more keys: POST /v1/api_keys).
  The local fake model (http://127.0.0.1:$FAKE_MODEL_PORT/v1) answers any agent; anthropic/openai agents may
  use it as base_url here because MODEL_BASE_URL_ALLOWED_HOSTS=$MODEL_BASE_URL_ALLOWED_HOSTS
  (docs/configuration.md). Chat with one: npx tsx packages/cli/src/main.ts chat <agent> (streams the answer).
Metrics (Prometheus text): http://127.0.0.1:9464/metrics (gateway), 9465 (orchestrator), 9466 and 9469
(workers), 9467 (sandbox-runner), 9468 (memory-retrieval); see docs/observability.md.
Stop it with: bash infra/down.sh (sandboxes are kept for the next start)
MSG
