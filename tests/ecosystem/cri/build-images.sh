#!/bin/bash
# build-images.sh OUTDIR: the two images of the CRI scenario, built offline from Debian's
# busybox-static with umoci and skopeo, as docker-archive tars that `ctr -n k8s.io images
# import` names exactly (docker-archive keeps the full name in RepoTags):
#   OUTDIR/pause.tar    localhost/pause:offline    entrypoint /bin/sleep infinity
#   OUTDIR/busybox.tar  localhost/busybox:offline  cmd sh, every applet in /bin, PATH=/bin
# The pause container is `sleep`: it ignores TERM (containerd stops sandboxes with KILL) and
# does not reap zombies, which only matters for pods that share one PID namespace.
set -euo pipefail
out=${1:?usage: build-images.sh OUTDIR}
bb=$(command -v busybox) || { echo "busybox not found (package busybox-static)" >&2; exit 1; }
# ldd fails on a static binary: the image has no libraries.
! ldd "$bb" >/dev/null 2>&1 || { echo "$bb is not static (install busybox-static)" >&2; exit 1; }
oci=$out/oci
rm -rf "$oci" "$out/bundle"
mkdir -p "$out"
umoci init --layout "$oci"

# build TAG FILL-FUNCTION UMOCI-CONFIG-ARGS...
build() {
  local tag=$1 fill=$2; shift 2
  umoci new --image "$oci:$tag"
  umoci unpack --image "$oci:$tag" "$out/bundle" >/dev/null
  "$fill" "$out/bundle/rootfs"
  umoci repack --image "$oci:$tag" "$out/bundle" >/dev/null
  rm -rf "$out/bundle"
  umoci config --image "$oci:$tag" "$@"
}
fill_busybox() {
  local r=$1 a
  mkdir -p "$r/bin" "$r/etc" "$r/tmp" "$r/root"
  chmod 1777 "$r/tmp"
  install -m 0755 "$bb" "$r/bin/busybox"
  for a in $("$bb" --list); do [[ $a == busybox ]] || ln -sf busybox "$r/bin/$a"; done
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$r/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
}
fill_pause() {
  mkdir -p "$1/bin"
  install -m 0755 "$bb" "$1/bin/busybox"
  ln -sf busybox "$1/bin/sleep"
}
build busybox fill_busybox --config.env PATH=/bin --config.cmd sh --config.workingdir /
build pause fill_pause --config.entrypoint /bin/sleep --config.cmd infinity
rm -f "$out/pause.tar" "$out/busybox.tar"
skopeo --insecure-policy copy --quiet "oci:$oci:pause" "docker-archive:$out/pause.tar:localhost/pause:offline"
skopeo --insecure-policy copy --quiet "oci:$oci:busybox" "docker-archive:$out/busybox.tar:localhost/busybox:offline"
rm -rf "$oci"
