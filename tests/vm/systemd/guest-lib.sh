# vm-systemd guest helpers, sourced by the guest suites (guest-suite.sh, engines-suite.sh,
# guest-seal.sh): result lines on the console start with "VMTEST:", failures are counted in
# $fails (each suite's exit status), `expect WHAT WANT GOT` compares one value.
fails=0
up() { cut -d' ' -f1 /proc/uptime; }
say() { echo "VMTEST: $*"; }
show() { sed 's/^/VMTEST:     /'; }
pass() { say "PASS $*"; }
fail() { say "FAIL $*"; fails=$((fails + 1)); }
expect() { # WHAT WANT GOT
  if [ "$2" = "$3" ]; then pass "$1: $3"; else fail "$1: want '$2', got '$(printf '%s' "$3" | tr '\n' ' ')'"; fi
}
prop() { systemctl show -P "$2" "$1" 2>&1; }
