#!/usr/bin/env bash
# Makes a Docker Engine available for the sandbox-runner: installs it when missing and starts dockerd in
# the background when it is not running (CI machines and dev containers have no init system for it).
# Also installs what the runner needs next to Docker (e2fsprogs for the workspace filesystems).
# Idempotent: does nothing when `docker info` already works and the tools are there.
set -euo pipefail

log_file=/var/log/dockerd.log
timeout_s=${WL_DOCKERD_TIMEOUT_S:-60}

# The sandbox-runner makes each session's workspace an ext4 image (mkfs.ext4) that it loop-mounts
# (mount, losetup): e2fsprogs and util-linux's mount on the Docker host. Most systems have both.
if ! command -v mkfs.ext4 >/dev/null 2>&1 || ! command -v mount >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "docker-engine: mkfs.ext4 or mount is missing (run: sudo apt-get install e2fsprogs mount)" >&2
    exit 1
  fi
  echo "docker-engine: installing e2fsprogs and mount"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends e2fsprogs mount
fi

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
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends docker.io
fi

# A live pid in docker.pid means a dockerd is already starting; a stale one would block the next start.
pid_file=/var/run/docker.pid
if [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
  echo "docker-engine: dockerd (pid $(cat "$pid_file")) is starting"
else
  rm -f "$pid_file"
  echo "docker-engine: starting dockerd (log: $log_file)"
  extra_args=()
  # Containers with --network none need no iptables; only the bridge network does. Where the nat
  # table is unavailable (restricted hosts), start without it rather than not at all.
  if ! iptables -t nat -L >/dev/null 2>&1; then
    echo "docker-engine: iptables nat table unavailable; starting with --iptables=false"
    extra_args+=(--iptables=false)
  fi
  # Its own session, so it outlives the shell (and process group) that started it.
  setsid nohup dockerd "${extra_args[@]}" >>"$log_file" 2>&1 </dev/null &
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
