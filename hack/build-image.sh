#!/usr/bin/env bash
# npm run image — builds the controller image WITHOUT a container daemon and writes an OCI image archive
# (default .local/image/cloneset-controller.oci.tar, tagged with the package.json version, which is the chart's
# default image tag); prints the archive path and size on stdout, progress on stderr. Same layout and entrypoint
# as the Dockerfile: /app, node as PID 1, user 65532.
#
# No distribution in the image: three layers
#   1. base   — libc6, libgcc-s1, libstdc++6 (node's only shared-library dependencies) extracted from Debian
#               packages by mmdebstrap (--variant=extract: no shell, no package manager), docs/locales removed,
#               plus /etc/passwd+group with the nonroot user 65532, /tmp, mount points;
#   2. node   — the official Node binary from the npm registry package node-linux-<arch>@$NODE_PKG_VERSION
#               (as hack/ensure-node.sh fetches it), symbols stripped;
#   3. app    — package.json, dist/ (src/ compiled by hack/build.sh, without tests and test fixtures), `npm ci --omit=dev`
#               without type declarations, source maps and readmes.
# The OCI layout is assembled with umoci. mmdebstrap and umoci are installed with apt-get when absent (needs root,
# as in CI). Load the archive with `podman load -i …` or `skopeo copy oci-archive:… docker://registry/…`.
#
# Env: IMAGE_OUT_DIR (default .local/image), IMAGE_TAG (the package.json version), NODE_PKG_VERSION (24.21.0),
#      DEBIAN_SUITE (bookworm), DEBIAN_MIRROR (mmdebstrap's default).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_DIR=${IMAGE_OUT_DIR:-$ROOT/.local/image}
TAG=${IMAGE_TAG:-$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$ROOT/package.json")}
NODE_VERSION=${NODE_PKG_VERSION:-24.21.0}
SUITE=${DEBIAN_SUITE:-bookworm}
CACHE=${CLONESET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/cloneset-controller}
ARCHIVE=$OUT_DIR/cloneset-controller.oci.tar
WORK=$OUT_DIR/work
log() { printf '[build-image] %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

case "$(uname -m)" in
  x86_64) NODE_ARCH=x64 OCI_ARCH=amd64 ;;
  aarch64) NODE_ARCH=arm64 OCI_ARCH=arm64 ;;
  *) die "unsupported architecture $(uname -m)" ;;
esac

# --- tools -------------------------------------------------------------------------------------------------------
missing=()
for t in mmdebstrap umoci; do command -v "$t" >/dev/null || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "${missing[*]} missing: run as root (they are installed with apt-get) or: sudo apt-get install ${missing[*]}"
  log "installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
[ "$(id -u)" = 0 ] || die "run as root: mmdebstrap and umoci need root to write root-owned files into the image"
export PATH="$(bash "$ROOT/hack/ensure-node.sh"):$PATH" # npm for the production dependencies

rm -rf "$WORK"
mkdir -p "$WORK"/{base,node,app} "$OUT_DIR"

# --- layer 1: base -----------------------------------------------------------------------------------------------
log "layer base: libc6 libgcc-s1 libstdc++6 from Debian $SUITE (mmdebstrap --variant=extract)"
mmdebstrap --quiet --variant=extract --include=libc6,libgcc-s1,libstdc++6 "$SUITE" "$WORK/base" ${DEBIAN_MIRROR:+"$DEBIAN_MIRROR"} >&2
B=$WORK/base
# What node never reads: documentation, locales, iconv modules (node has ICU), the package database.
rm -rf "$B"/usr/share/{doc,man,info,locale,lintian} "$B"/usr/lib/*/gconv "$B"/var/lib/dpkg "$B"/var/cache/* "$B"/var/log/*
mkdir -p "$B"/{etc,tmp,proc,sys,dev,run,var/run}
chmod 1777 "$B/tmp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$B/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$B/etc/group"
printf 'hosts: files dns\n' >"$B/etc/nsswitch.conf"
[ -e "$B/lib64/ld-linux-x86-64.so.2" ] || [ -e "$B/lib/ld-linux-aarch64.so.1" ] || die "the dynamic loader is missing from the base layer"

# --- layer 2: node -----------------------------------------------------------------------------------------------
NODE_DIR=$CACHE/node-v$NODE_VERSION
if [ ! -x "$NODE_DIR/bin/node" ]; then
  log "fetching node-linux-$NODE_ARCH@$NODE_VERSION from the npm registry"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "node-linux-$NODE_ARCH@$NODE_VERSION" >/dev/null) || die "npm pack failed: is the npm registry reachable?"
  mkdir -p "$NODE_DIR"; tar -xzf "$tmp"/node-linux-*.tgz -C "$NODE_DIR" --strip-components=1; rm -rf "$tmp"
fi
mkdir -p "$WORK/node/usr/local/bin"
if command -v strip >/dev/null; then
  strip --strip-all -o "$WORK/node/usr/local/bin/node" "$NODE_DIR/bin/node" # -18 MB of debug symbols
else
  cp "$NODE_DIR/bin/node" "$WORK/node/usr/local/bin/node"
fi
log "layer node: $("$WORK/node/usr/local/bin/node" --version)"

# --- layer 3: app ------------------------------------------------------------------------------------------------
A=$WORK/app/app
mkdir -p "$A"
cp "$ROOT/package.json" "$ROOT/package-lock.json" "$A/"
bash "$ROOT/hack/build.sh"   # src/ → dist/ (tsconfig.build.json: no tests, no local control plane launcher)
cp -r "$ROOT/dist" "$A/dist"
rm -f "$A/dist/.built" "$A/dist/.lock"
log "layer app: npm ci --omit=dev"
(cd "$A" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
rm -f "$A/package-lock.json"
# Type declarations, source maps and readmes are never loaded at run time (about half of @kubernetes/client-node).
find "$A/node_modules" -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -iname '*.md' \) -delete
rm -rf "$A/node_modules/@types"
chown -R 0:0 "$WORK"/{base,node,app}
chmod -R a+rX,go-w "$WORK"/{node,app}

# --- OCI image ---------------------------------------------------------------------------------------------------
OCI=$WORK/oci
# The OCI ref names the image too, so that `podman load` calls it localhost/cloneset-controller:<tag>.
REF=cloneset-controller:$TAG
log "assembling the OCI layout with umoci"
umoci init --layout "$OCI"
umoci new --image "$OCI:$REF"
umoci insert --image "$OCI:$REF" --history.created_by "mmdebstrap --variant=extract libc6 libgcc-s1 libstdc++6 ($SUITE)" "$B" /
umoci insert --image "$OCI:$REF" --history.created_by "node-linux-$NODE_ARCH@$NODE_VERSION (npm registry), stripped" "$WORK/node" /
umoci insert --image "$OCI:$REF" --history.created_by "package.json, dist/ (compiled src/), npm ci --omit=dev" "$WORK/app" /
cfg=(--image "$OCI:$REF" --os linux --architecture "$OCI_ARCH"
  --config.user 65532:65532 --config.workingdir /app
  --config.env NODE_ENV=production --config.env CLONESET_CONTROLLER_LOG_FORMAT=json --config.env PATH=/usr/local/bin:/usr/bin:/bin
  --config.entrypoint /usr/local/bin/node --config.entrypoint --max-semi-space-size=2
  --config.entrypoint --optimize-for-size --config.entrypoint /app/dist/main.js
  --config.exposedports 8000/tcp --config.exposedports 8080/tcp --config.exposedports 9443/tcp
  --config.label org.opencontainers.image.title=cloneset-controller
  --config.label "org.opencontainers.image.version=$(node -p 'require(process.argv[1]).version' "$ROOT/package.json")"
  --config.label org.opencontainers.image.licenses=Apache-2.0)
umoci config "${cfg[@]}" --history.created_by "entrypoint node /app/dist/main.js, user 65532"
umoci gc --layout "$OCI"
tar -C "$OCI" -cf "$ARCHIVE.tmp" .
mv "$ARCHIVE.tmp" "$ARCHIVE"
rm -rf "$WORK"
size=$(du -b "$ARCHIVE" | cut -f1)
log "wrote $ARCHIVE ($((size / 1024 / 1024)) MiB, $REF)"
printf '%s\t%s MiB\n' "$ARCHIVE" "$((size / 1024 / 1024))"
