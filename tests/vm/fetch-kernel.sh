#!/bin/sh
# fetch-kernel.sh: put Debian's 6.1 kernel (pure cgroup v2 capable, modular RDMA) into the
# VM cache, once, for run-vm.sh.
#
#   fetch-kernel.sh [--cache DIR] [--kernel ABI] [--module NAME]... [--rdma-userspace] [--env]
#
#   --cache DIR        cache folder (default: $BERTH_VM_CACHE or <repo>/build/vm-cache)
#   --kernel ABI       kernel ABI such as 6.1.0-57-amd64 (default: the one already cached,
#                      else the one Debian's linux-image-amd64 points at, else the newest
#                      linux-image-6.1.0-*-amd64 apt knows)
#   --module NAME      also extract this module (and what it depends on); repeatable
#   --rdma-userspace   also fetch ibverbs-utils, ibverbs-providers, libibverbs1 (extracted,
#                      not installed) for Soft-RoCE guests
#   --env              print shell assignments (BERTH_VM_KVER=..., BERTH_VM_KDIR=...,
#                      BERTH_VM_IBROOT=...) instead of a summary line
#
# Layout of the cache:
#   debs/                          the downloaded .deb files (kept: re-extraction needs no net)
#   kernel-<abi>/vmlinuz, config   the kernel
#   kernel-<abi>/vmlinux           the same kernel decompressed (ELF with a PVH entry): qemu
#                                  boots it directly, skipping ~8 s of xz decompression and
#                                  BIOS under TCG
#   kernel-<abi>/root/lib/modules/<abi>/...   the selected modules, modules.dep (busybox depmod)
#   kernel-<abi>/modules.wanted    the module names asked for (the extract covers their deps)
#   current                        the ABI used when --kernel is not given
#   ibverbs/root/                  extracted rdma userspace (with --rdma-userspace)
#
# Second and later calls read only the cache: no apt, no network, well under a second.
set -eu

say() { printf 'fetch-kernel: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../.." && pwd))
cache=${BERTH_VM_CACHE:-$repo/build/vm-cache}
abi=
extra=
want_ib=0
print_env=0

while [ $# -gt 0 ]; do
  case $1 in
    --cache) cache=$2; shift 2 ;;
    --kernel) abi=$2; shift 2 ;;
    --module) extra="$extra $2"; shift 2 ;;
    --rdma-userspace) want_ib=1; shift ;;
    --env) print_env=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done

# Modules every guest gets. The Soft-RoCE stack (rdma_rxe needs a crc32 shash at device
# registration but does not declare it, so crc32_generic is listed by name), the uverbs/umad
# /rdma_cm character devices, veth and dummy for netdevs, overlay for rootfs tests. Their
# dependencies (configfs, udp_tunnel, ib_cm, ...) come from each module's depends= field.
base_modules="crc32_generic configfs ib_core ib_uverbs ib_umad rdma_ucm rdma_rxe veth dummy overlay"

mkdir -p "$cache/debs"
cache=$(cd "$cache" && pwd)
# one fetcher at a time per cache (parallel ctest runs share it)
if command -v flock >/dev/null; then
  exec 9>"$cache/.lock"
  flock 9
fi

apt_updated=0
apt_known() { apt-cache show "$1" >/dev/null 2>&1; }
ensure_apt_knows() { # PKG: run apt-get update once if apt has no record of PKG
  apt_known "$1" && return 0
  if [ $apt_updated = 0 ]; then
    say "apt does not know $1; running apt-get update"
    apt-get update >/dev/null || die "apt-get update failed"
    apt_updated=1
  fi
  apt_known "$1" || die "package $1 is not available from the configured apt sources"
}

download() { # PKG: sets $deb to the .deb of PKG in $cache/debs (downloaded once)
  deb=$(ls "$cache/debs/${1}_"*.deb 2>/dev/null | tail -n 1 || true)
  if [ -z "$deb" ]; then
    ensure_apt_knows "$1"
    say "downloading $1"
    # apt warns that _apt cannot write here when run as root; the download is fine.
    (cd "$cache/debs" && apt-get download "$1" 2>&1 | grep -v 'unsandboxed' >&2) || true
    deb=$(ls "$cache/debs/${1}_"*.deb 2>/dev/null | tail -n 1 || true)
    [ -n "$deb" ] || die "apt-get download $1 produced no .deb"
  fi
}

pick_abi() {
  if [ -n "$abi" ]; then return; fi
  if [ -f "$cache/current" ]; then abi=$(cat "$cache/current"); return; fi
  ensure_apt_knows linux-image-amd64
  abi=$(apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: linux-image-\(6\.1\.0-[0-9]*-amd64\)$/\1/p' | head -n 1)
  if [ -z "$abi" ]; then
    abi=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' |
          sed -n 's/^linux-image-\(6\.1\.0-[0-9]*-amd64\) .*/\1/p' | sort -t- -k2,2n | tail -n 1)
  fi
  [ -n "$abi" ] || die "no linux-image-6.1.0-*-amd64 package found in apt"
}

# Extract vmlinuz, config and the closure of the wanted modules for $abi into kernel-$abi.
extract_kernel() { # WANTED_NAMES
  download "linux-image-$abi"
  kdir=$cache/kernel-$abi
  tmp=$(mktemp -d "$cache/.extract.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  say "extracting $(basename "$deb")"
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards \
    "./boot/vmlinuz-$abi" "./boot/config-$abi" "./lib/modules/$abi/*"
  src=$tmp/lib/modules/$abi
  # name -> path table; module names treat '-' and '_' alike.
  (cd "$src" && find kernel -name '*.ko*') | awk '{ n = $0; sub(/.*\//, "", n); sub(/\.ko.*/, "", n);
    gsub(/-/, "_", n); print n, $0 }' > "$tmp/names"
  awk '{ n = $0; sub(/.*\//, "", n); sub(/\.ko.*/, "", n); gsub(/-/, "_", n); print n }' \
    "$src/modules.builtin" > "$tmp/builtin"
  new=$tmp/new/root/lib/modules/$abi
  mkdir -p "$new"
  todo=$1; done_list=" "
  while [ -n "$(printf %s "$todo" | tr -d ' ')" ]; do
    set -- $todo; m=$(printf %s "$1" | tr - _); shift; todo="$*"
    case $done_list in *" $m "*) continue ;; esac
    done_list="$done_list$m "
    grep -qx "$m" "$tmp/builtin" && continue # built in: nothing to load
    p=$(awk -v n="$m" '$1 == n { print $2; exit }' "$tmp/names")
    [ -n "$p" ] || die "module $m is neither built in nor in linux-image-$abi"
    mkdir -p "$new/$(dirname "$p")"
    cp "$src/$p" "$new/$p"
    deps=$(tr '\0' '\n' < "$src/$p" | sed -n 's/^depends=//p' | head -n 1 | tr ',' ' ')
    todo="$todo $deps"
  done
  cp "$src/modules.builtin" "$src/modules.order" "$new/" 2>/dev/null || true
  busybox depmod -b "$tmp/new/root" "$abi" || die "busybox depmod failed"
  cp "$tmp/boot/vmlinuz-$abi" "$tmp/new/vmlinuz"
  cp "$tmp/boot/config-$abi" "$tmp/new/config"
  printf '%s\n' $wanted | sort -u > "$tmp/new/modules.wanted"
  rm -rf "$kdir"
  mv "$tmp/new" "$kdir"
  rm -rf "$tmp"; trap - EXIT
  say "kernel $abi: $(find "$kdir/root" -name '*.ko*' | wc -l) modules in $kdir"
}

# Decompress the xz payload of a bzImage into an ELF vmlinux (what the kernel source's
# scripts/extract-vmlinux does, for the one compression Debian uses).
make_vmlinux() { # KDIR
  [ -f "$1/vmlinux" ] && return 0
  command -v xz >/dev/null || { say "no xz: booting the compressed vmlinuz (slower)"; return 0; }
  off=$(LC_ALL=C grep -obUa "$(printf '\3757zXZ')" "$1/vmlinuz" | head -n 1 | cut -d: -f1)
  [ -n "$off" ] || { say "vmlinuz has no xz payload: booting it as is (slower)"; return 0; }
  tail -c +$((off + 1)) "$1/vmlinuz" | xz -dc > "$1/vmlinux.tmp" 2>/dev/null || true
  if [ "$(head -c 4 "$1/vmlinux.tmp" | od -An -c | tr -d ' ')" = 177ELF ]; then
    mv "$1/vmlinux.tmp" "$1/vmlinux"
  else
    rm -f "$1/vmlinux.tmp"; say "could not decompress vmlinuz: booting it as is (slower)"
  fi
}

command -v busybox >/dev/null || die "busybox (Debian package busybox-static) is needed"
pick_abi
case $abi in 6.1.0-*-amd64) ;; *) say "warning: $abi is not a Debian 6.1 amd64 kernel ABI" ;; esac
wanted=$(printf '%s\n' $base_modules $extra | tr - _ | sort -u)
kdir=$cache/kernel-$abi
have_all=0
if [ -f "$kdir/vmlinuz" ] && [ -f "$kdir/modules.wanted" ] &&
   [ -f "$kdir/root/lib/modules/$abi/modules.dep" ]; then
  missing=$(printf '%s\n' $wanted | sort -u | comm -23 - "$kdir/modules.wanted")
  [ -z "$missing" ] && have_all=1
  # keep what an earlier call asked for as well
  wanted=$(cat "$kdir/modules.wanted"; printf '%s\n' $wanted)
  wanted=$(printf '%s\n' $wanted | sort -u)
fi
[ $have_all = 1 ] || extract_kernel "$wanted"
make_vmlinux "$kdir"
printf '%s\n' "$abi" > "$cache/current"

ibroot=
if [ $want_ib = 1 ]; then
  ibroot=$cache/ibverbs/root
  if [ ! -f "$cache/ibverbs/.complete" ]; then
    rm -rf "$cache/ibverbs"; mkdir -p "$ibroot"
    for p in libibverbs1 ibverbs-providers ibverbs-utils; do
      download "$p"
      dpkg-deb -x "$deb" "$ibroot"
    done
    : > "$cache/ibverbs/.complete"
    say "rdma userspace extracted in $ibroot"
  fi
fi

if [ $print_env = 1 ]; then
  kernel_file=$kdir/vmlinuz
  [ -f "$kdir/vmlinux" ] && kernel_file=$kdir/vmlinux
  printf "BERTH_VM_KVER='%s'\nBERTH_VM_KDIR='%s'\nBERTH_VM_KERNEL='%s'\nBERTH_VM_IBROOT='%s'\n" \
    "$abi" "$kdir" "$kernel_file" "$ibroot"
else
  say "ok: $kdir${ibroot:+, $ibroot}"
fi
