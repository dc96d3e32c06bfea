#!/usr/bin/env bash
# Makes sure PostgreSQL (127.0.0.1:5432) and NATS with JetStream (127.0.0.1:4222) accept connections,
# for development and tests. Installs them when their binaries are missing and starts them when they
# are down (CI machines and dev containers have no init system to do it). Idempotent: does nothing
# when both already answer. Production runs them from docker-compose.yml instead.
set -euo pipefail

timeout_s=${WL_SERVICES_TIMEOUT_S:-30}

postgres_ready() { pg_isready -h 127.0.0.1 -p 5432 -q; }

# A NATS server greets every client with an INFO line; JetStream servers say "jetstream":true in it.
# A subshell, so a refused connection fails this function instead of ending the script.
nats_info() (
  exec 3<>/dev/tcp/127.0.0.1/4222
  IFS= read -r -t 2 line <&3 || line=""
  printf '%s' "$line"
)
nats_ready() { nats_info 2>/dev/null | grep -q '"jetstream":true'; }

need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "ensure-services: $1 needs root (run: sudo bash $0)" >&2
    exit 1
  fi
}

wait_until() {
  local name=$1 check=$2 waited=0
  until "$check"; do
    if [ "$waited" -ge "$timeout_s" ]; then
      echo "ensure-services: $name did not accept connections within ${timeout_s}s; $3" >&2
      exit 1
    fi
    sleep 1
    waited=$((waited + 1))
  done
  echo "ensure-services: $name is up"
}

if postgres_ready && nats_ready; then
  echo "ensure-services: PostgreSQL and NATS JetStream already running"
  exit 0
fi

installed_postgres=false
if ! command -v pg_ctlcluster >/dev/null 2>&1 || [ ! -x /usr/sbin/nats-server ]; then
  need_root "installing postgresql and nats-server"
  command -v pg_ctlcluster >/dev/null 2>&1 || installed_postgres=true
  echo "ensure-services: installing postgresql and nats-server"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql nats-server
fi

if ! postgres_ready; then
  need_root "starting PostgreSQL"
  cluster_version=$(ls /etc/postgresql)
  if [ "$installed_postgres" = true ]; then
    # A fresh Debian cluster asks local TCP clients for a password; dev and tests connect as
    # postgres without one (postgres://postgres@127.0.0.1:5432), so trust loopback only.
    hba=/etc/postgresql/$cluster_version/main/pg_hba.conf
    sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust' "$hba"
  fi
  echo "ensure-services: starting PostgreSQL $cluster_version"
  # Fails when the cluster is already starting; waiting below tells the two cases apart.
  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start ||
    echo "ensure-services: pg_ctlcluster start failed; waiting in case the cluster is already starting"
fi
wait_until "PostgreSQL on 127.0.0.1:5432" postgres_ready \
  "see /var/log/postgresql/postgresql-$(ls /etc/postgresql)-main.log"

if ! nats_ready; then
  if [ -n "$(nats_info 2>/dev/null || true)" ]; then
    echo "ensure-services: a NATS server on 127.0.0.1:4222 runs without JetStream; restart it with -js" >&2
    exit 1
  fi
  need_root "starting nats-server"
  mkdir -p /var/lib/nats-server
  echo "ensure-services: starting nats-server with JetStream"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
fi
wait_until "NATS JetStream on 127.0.0.1:4222" nats_ready "see /var/log/nats-server.log"
