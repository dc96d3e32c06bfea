#!/usr/bin/env bash
# Makes a Docker Engine available for the sandbox-runner: installs it when missing and starts dockerd in
# the background when it is not running (CI machines and dev containers have no init system for it).
# Idempotent: does nothing when `docker info` already works.
set -euo pipefail

log_file=/var/log/dockerd.log
timeout_s=${WL_DOCKERD_TIMEOUT_S:-60}

if docker info >/dev/null 2>&1; then
  echo "docker-engine: already running"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "docker-engine: dockerd is not running and starting it needs root (run: sudo bash $0)" >&2
  exit 1
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v docker >/dev/null 2>&1; then
  echo "docker-engine: installing docker.io"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io
fi

# A stale pid file from a killed dockerd makes the next one refuse to start.
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
  rm -f /var/run/docker.pid
fi

if ! pgrep -x dockerd >/dev/null 2>&1; then
  echo "docker-engine: starting dockerd (log: $log_file)"
  extra_args=()
  # Containers in a restricted host (no iptables/nat module) still run with --network none; only the
  # bridge network needs iptables, so fall back to --iptables=false where iptables cannot work.
  if ! iptables -t nat -L >/dev/null 2>&1; then
    echo "docker-engine: iptables nat table unavailable; starting with --iptables=false"
    extra_args+=(--iptables=false)
  fi
  nohup dockerd "${extra_args[@]}" >>"$log_file" 2>&1 &
fi

deadline=$((SECONDS + timeout_s))
until docker info >/dev/null 2>&1; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "docker-engine: dockerd did not answer within ${timeout_s}s; last log lines:" >&2
    tail -n 30 "$log_file" >&2 || true
    exit 1
  fi
  sleep 0.5
done
echo "docker-engine: ready ($(docker version --format '{{.Server.Version}}'))"
