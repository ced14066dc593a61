# shellcheck shell=bash
# eco_build_images DIR: the test image, built offline from Debian's busybox-static.
#
#   DIR/oci.tar     OCI archive (ctr images import, podman load)
#   DIR/docker.tar  docker-archive (docker load)
# both named eco/busybox:test. umoci makes the OCI layout and its one layer; skopeo converts it
# (no registry, no network, --insecure-policy so /etc/containers/policy.json is not needed).
#
# The root filesystem: /bin/busybox and one symlink per applet, /etc/passwd and /etc/group
# (root, nobody), /tmp (1777), and /bin/notexec, a script without execute permission (the
# "cannot execute" case: Docker and podman exit 126).
eco_build_images() {
  local out=$1 busybox work r applet
  busybox=$(command -v busybox) || eco_die "busybox not found (package busybox-static)"
  # ldd fails on a static binary: the image has no libraries.
  ! ldd "$busybox" >/dev/null 2>&1 || eco_die "$busybox is not static (install busybox-static)"
  work=$(mktemp -d "$out/image.XXXXXX")
  (
    set -e
    cd "$work"
    umoci init --layout oci >/dev/null
    umoci new --image oci:eco >/dev/null
    umoci unpack --image oci:eco bundle >/dev/null
    r=bundle/rootfs
    mkdir -p "$r/bin" "$r/etc" "$r/tmp" "$r/root" "$r/proc" "$r/sys" "$r/dev"
    chmod 1777 "$r/tmp"
    cp "$busybox" "$r/bin/busybox"
    for applet in $("$busybox" --list); do
      [[ "$applet" == busybox ]] || ln -sf busybox "$r/bin/$applet"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$r/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' >"$r/etc/group"
    printf '#!/bin/sh\necho this must not run\n' >"$r/bin/notexec"
    chmod 0644 "$r/bin/notexec"
    umoci repack --image oci:eco bundle >/dev/null
    umoci config --image oci:eco --os linux --architecture amd64 --config.cmd sh \
      --config.env PATH=/usr/sbin:/usr/bin:/sbin:/bin --config.workingdir / >/dev/null
    # skopeo (as root) keeps a blob cache in /var/lib/containers/cache: give it a private,
    # empty /var/lib so that building the image leaves nothing on the host.
    unshare --mount --propagation private sh -ec '
      mount -t tmpfs eco-skopeo /var/lib
      skopeo --insecure-policy copy -q oci:oci:eco "oci-archive:$1/oci.tar:$2"
      skopeo --insecure-policy copy -q oci:oci:eco "docker-archive:$1/docker.tar:$2"' \
      sh "$out" "$ECO_IMAGE_REF"
  ) || { rm -rf "$work"; eco_die "building the test image failed"; }
  rm -rf "$work"
}
