#!/bin/sh
# Makes an OCI bundle with a busybox-static root filesystem (Debian `busybox-static`) and a
# config.json from `berth spec` whose process runs the given command (default: sh).
# Usage: contrib/mkbundle.sh DIR [COMMAND [ARG...]]
set -eu
dir=${1:?usage: mkbundle.sh DIR [COMMAND [ARG...]]}
shift
berth=${BERTH:-berth}
rm -rf "$dir"
mkdir -p "$dir/rootfs"
r="$dir/rootfs"
mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" "$r/proc" "$r/sys" "$r/dev" \
  "$r/tmp" "$r/root" "$r/run" "$r/var/tmp" "$r/home"
cp /bin/busybox "$r/bin/busybox"
# Debian's busybox lists itself among its applets: never replace the binary by a link.
for applet in $(/bin/busybox --list); do
  [ "$applet" = busybox ] || ln -sf busybox "$r/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$r/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$r/etc/group"
chmod 1777 "$r/tmp" "$r/var/tmp"
(cd "$dir" && "$berth" spec)
if [ $# -gt 0 ]; then
  args=""
  for a in "$@"; do
    # JSON-escape \ and ", then escape what sed's replacement treats specially (\ &).
    esc=$(printf '%s' "$a" | sed 's/\\/\\\\/g; s/"/\\"/g')
    args="$args${args:+, }\"$esc\""
  done
  repl=$(printf '%s' "$args" | sed 's/[\\&]/\\&/g')
  d=$(printf '\001')
  # berth spec writes the args one per line: replace the "sh" line, and run without a tty.
  sed -i "s${d}^\t\t\t\"sh\"\$${d}\t\t\t${repl}${d}; s${d}\"terminal\": true${d}\"terminal\": false${d}" "$dir/config.json"
fi
echo "bundle ready: $dir"
