#!/usr/bin/env bash
# Builds a sandbox image from a debootstrap minbase rootfs: no registry pull, only the Debian mirror
# this machine's apt already uses. Rebuilds when this recipe or the variant changes (the image carries
# their hash as the label wakeloop.image.version). Variants:
#   base     `wakeloop-sandbox:bookworm` (the default): shell, git, ripgrep, python3, node. About a minute.
#   browser  `wakeloop-sandbox-browser:bookworm`: the base plus Debian's chromium and fonts, for the
#            browser_* tools (docs/browser-tools.md). A few minutes.
#   usage: bash infra/sandbox-image.sh [base|browser]
set -euo pipefail

variant=${1:-base}
suite=bookworm
packages=bash,coreutils,findutils,grep,sed,diffutils,git,ripgrep,python3,nodejs,procps
case "$variant" in
  base)
    image=${WL_SANDBOX_IMAGE:-wakeloop-sandbox:bookworm}
    extra_packages=()
    ;;
  browser)
    image=${WL_SANDBOX_BROWSER_IMAGE:-wakeloop-sandbox-browser:bookworm}
    # Installed by apt in the new root (not debootstrap's --include, whose resolver cannot pick among
    # chromium's alternative and virtual dependencies); no recommends, so no desktop pulled in.
    extra_packages=(chromium fonts-liberation fonts-dejavu-core)
    ;;
  *)
    echo "sandbox-image: unknown variant '$variant' (base or browser)" >&2
    exit 2
    ;;
esac
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
version=$({ cat "$here/sandbox-image.sh"; echo "$variant"; } | sha256sum | cut -c1-16)
log=/tmp/wakeloop-debootstrap-$variant.log

if ! docker info >/dev/null 2>&1; then
  echo "sandbox-image: Docker is not answering; start it first with: bash infra/docker-engine.sh" >&2
  exit 1
fi

current=$(docker image inspect --format '{{index .Config.Labels "wakeloop.image.version"}}' "$image" 2>/dev/null || true)
if [ "$current" = "$version" ]; then
  echo "sandbox-image: $image is up to date ($version)"
  exit 0
fi

previous_id=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)

if ! command -v debootstrap >/dev/null 2>&1; then
  echo "sandbox-image: installing debootstrap"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
fi

# The first configured mirror that serves the suite, from deb822 `.sources` files or one-line `.list` files.
find_mirror() {
  local file
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -f "$file" ] || continue
    awk -v suite="$suite" '
      /^[[:space:]]*$/ { if (uri != "" && has_suite) { print uri; exit } uri = ""; has_suite = 0; next }
      /^URIs:/ { uri = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) has_suite = 1 }
      END { if (uri != "" && has_suite) print uri }
    ' "$file"
  done
  for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$file" ] || continue
    awk -v suite="$suite" '
      $1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i + 1) == suite) print $i }
    ' "$file"
  done
}
mirror=$(find_mirror | head -n 1)
if [ -z "$mirror" ]; then
  echo "sandbox-image: no apt source for $suite found in /etc/apt; cannot pick a Debian mirror" >&2
  exit 1
fi

rootfs=$(mktemp -d /tmp/wakeloop-sandbox-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT

echo "sandbox-image: debootstrap $suite from $mirror"
debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$log" 2>&1 || {
  echo "sandbox-image: debootstrap failed; see $log" >&2
  tail -n 20 "$log" >&2
  exit 1
}

if [ "${#extra_packages[@]}" -gt 0 ]; then
  echo "sandbox-image: apt-get install ${extra_packages[*]}"
  echo "deb $mirror $suite main" >"$rootfs/etc/apt/sources.list"
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
  mount -t proc proc "$rootfs/proc"
  trap 'umount "$rootfs/proc" 2>/dev/null || true; rm -rf "$rootfs"' EXIT
  {
    chroot "$rootfs" apt-get update -q &&
      DEBIAN_FRONTEND=noninteractive chroot "$rootfs" apt-get install -y -q --no-install-recommends \
        "${extra_packages[@]}"
  } >>"$log" 2>&1 || {
    echo "sandbox-image: apt-get install in the new root failed; see $log" >&2
    tail -n 20 "$log" >&2
    exit 1
  }
  umount "$rootfs/proc"
  : >"$rootfs/etc/resolv.conf"
fi

chroot "$rootfs" groupadd --gid 1000 sandbox
chroot "$rootfs" useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash sandbox
mkdir -p "$rootfs/workspace"
chown 1000:1000 "$rootfs/workspace"
# Nothing in the sandbox installs packages (no network, read-only root): drop apt's caches and lists.
rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*

echo "sandbox-image: importing $image"
tar -C "$rootfs" -c . | docker import \
  --change 'USER 1000:1000' \
  --change 'WORKDIR /workspace' \
  --change 'ENV HOME=/home/sandbox' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change "LABEL wakeloop.image.version=$version" \
  --change 'CMD ["/bin/bash"]' \
  - "$image" >/dev/null
# The replaced build is left untagged; remove it unless a container still uses it.
if [ -n "$previous_id" ]; then docker image rm "$previous_id" >/dev/null 2>&1 || true; fi
echo "sandbox-image: built $image ($version)"
