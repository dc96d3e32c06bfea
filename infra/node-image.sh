#!/usr/bin/env bash
# Makes a local stand-in for `node:20-bookworm-slim`, the base of infra/docker/app.Dockerfile, on a
# machine that cannot pull from a registry: a debootstrap minbase rootfs with this machine's node 20
# binary at /usr/local/bin/node, the npm that Node 20 ships with, and the `node` user (uid 1000), as
# in the official image. An image of that tag that did not come from here (a pulled one) is left alone;
# ours is rebuilt when this recipe or the node binary changes (label wakeloop.image.version).
# Not part of setup.sh: only building the app image needs it. Takes about a minute.
set -euo pipefail

image=node:20-bookworm-slim
suite=bookworm
# The npm bundled with Node 20.19+ (the official image's npm), not whatever this host upgraded to.
npm_version=10.8.2
node_binary=$(readlink -f "$(command -v node)")
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$(cat "$here/node-image.sh" "$node_binary" | sha256sum | cut -c1-16)

if ! docker info >/dev/null 2>&1; then
  echo "node-image: Docker is not answering; start it first with: bash infra/docker-engine.sh" >&2
  exit 1
fi
case "$("$node_binary" --version)" in
  v20.*) ;;
  *) echo "node-image: $node_binary is $("$node_binary" --version), not Node 20" >&2 && exit 1 ;;
esac

# "absent", our recipe's version, or empty for an image of that tag made elsewhere.
current=$(docker image inspect --format '{{index .Config.Labels "wakeloop.image.version"}}' "$image" 2>/dev/null ||
  echo absent)
case "$current" in
  "$version") echo "node-image: $image is up to date ($version)" && exit 0 ;;
  "") echo "node-image: $image is present and not made here; leaving it" && exit 0 ;;
esac
previous_id=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)

command -v debootstrap >/dev/null 2>&1 ||
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap; }
# The Debian mirror apt already uses for the suite.
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' |
  awk -v suite="$suite" '$2 == suite { print $1; exit }')
if [ -z "$mirror" ]; then
  echo "node-image: apt knows no source for $suite (run apt-get update first?)" >&2
  exit 1
fi

work=$(mktemp -d /tmp/wakeloop-node-image.XXXXXX)
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs

echo "node-image: debootstrap $suite from $mirror"
debootstrap --variant=minbase --include=ca-certificates "$suite" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  echo "node-image: debootstrap failed:" >&2
  tail -n 20 "$work/debootstrap.log" >&2
  exit 1
}

install -D -m 0755 "$node_binary" "$rootfs/usr/local/bin/node"
(cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null)
mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work/npm-$npm_version.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
chroot "$rootfs" groupadd --gid 1000 node
chroot "$rootfs" useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash node

# This machine reaches the npm registry through an egress that re-signs TLS with its own CA; trust
# what the host trusts so `npm ci` works in builds here (npm's own config, not the services').
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
  chroot "$rootfs" update-ca-certificates >/dev/null
  mkdir -p "$rootfs/usr/local/etc"
  echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$rootfs/usr/local/etc/npmrc"
fi
rm -rf "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*

echo "node-image: importing $image"
tar -C "$rootfs" --numeric-owner -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change "LABEL wakeloop.image.version=$version" \
  --change 'CMD ["node"]' \
  - "$image" >/dev/null
# The replaced build is left untagged; remove it unless a container still uses it.
if [ -n "$previous_id" ]; then docker image rm "$previous_id" >/dev/null 2>&1 || true; fi
echo "node-image: built $image ($version, node $("$node_binary" --version), npm $npm_version)"
