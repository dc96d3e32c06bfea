#!/usr/bin/env bash
# Builds the image `wakeloop-nats:<version>` (also tagged with its series, e.g. `wakeloop-nats:2.9`, which
# the tests use) for tests that need a NATS server of their own to stop or break (testcontainers). Nothing
# is pulled: the rootfs holds only the Debian nats-server binary, the libraries `ldd` names for it, a /tmp
# and a /data store dir. Rebuilds when this recipe or the binary changes (the image carries their hash
# as the label wakeloop.image.version); takes a second or two, and nothing when the image is current.
set -euo pipefail

binary=/usr/sbin/nats-server
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

if ! docker info >/dev/null 2>&1; then
  echo "nats-image: Docker is not answering; start it first with: bash infra/docker-engine.sh" >&2
  exit 1
fi

if [ ! -x "$binary" ]; then
  echo "nats-image: installing the Debian package nats-server"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q nats-server
fi

nats_version=$("$binary" --version | sed -n 's/^nats-server: v//p')
if [ -z "$nats_version" ]; then
  echo "nats-image: cannot read the version of $binary" >&2
  exit 1
fi
series=${nats_version%.*}
image=wakeloop-nats:$nats_version
series_image=wakeloop-nats:$series
recipe=$(cat "$here/nats-image.sh" "$binary" | sha256sum | cut -c1-16)

current=$(docker image inspect --format '{{index .Config.Labels "wakeloop.image.version"}}' "$series_image" 2>/dev/null || true)
if [ "$current" = "$recipe" ]; then
  echo "nats-image: $series_image is up to date ($nats_version, $recipe)"
  exit 0
fi

previous_id=$(docker image inspect --format '{{.Id}}' "$series_image" 2>/dev/null || true)

rootfs=$(mktemp -d /tmp/wakeloop-nats-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT

install -D -m 0755 "$binary" "$rootfs$binary"
# Debian builds it with cgo, so it needs the C library and the loader; copy exactly what ldd lists.
for lib in $(ldd "$binary" | grep -o '/[^ ]*'); do
  install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
done
# The server runs as nobody: the store and /tmp must be writable without owning them.
install -d -m 1777 "$rootfs/tmp" "$rootfs/data"

echo "nats-image: importing $image"
tar -C "$rootfs" --numeric-owner --owner=0 --group=0 -c . | docker import \
  --change 'USER 65534:65534' \
  --change 'ENTRYPOINT ["/usr/sbin/nats-server"]' \
  --change 'EXPOSE 4222' \
  --change "LABEL wakeloop.image.version=$recipe" \
  - "$image" >/dev/null
docker tag "$image" "$series_image"
# The replaced build is left untagged; remove it unless a container still uses it.
if [ -n "$previous_id" ]; then docker image rm "$previous_id" >/dev/null 2>&1 || true; fi
echo "nats-image: built $image and $series_image ($recipe)"
