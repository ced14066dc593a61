# vm-systemd guest helpers, sourced by the guest suites (guest-suite.sh, engines-suite.sh,
# guest-seal.sh, guest-bench.sh, guest-probe.sh): result lines on the console start with "VMTEST:", failures are counted in
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
# awk's med(a, cnt): the median of a[1..cnt] (a is sorted in place), for the summaries
# awk prints here and in the bench and probe suites: awk "$awk_med"'PROGRAM'
awk_med='function med(a, cnt,   i, j, x) {
  for (i = 2; i <= cnt; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  return (cnt % 2) ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2 }
'
# OP FILE...: the medians of berth's --debug timings ('msg="PHASE: WHAT +N ms"') over the
# --log FILEs of many calls, one line per timing in the order first seen, with its count
marks_medians() {
  op=$1; shift
  sed -n 's/.*msg="\([a-z]*: [^"]*\) [+]\{0,1\}\([0-9.e-]*\) ms".*/\1\t\2/p' "$@" | awk -F'\t' -v op="$op" "$awk_med"'
    { k = $1; if (!(k in n)) order[++nk] = k; v[k, ++n[k]] = $2 + 0 }
    END {
      for (i = 1; i <= nk; i++) {
        k = order[i]; c = n[k]
        for (q = 1; q <= c; q++) x[q] = v[k, q]
        printf "  %-9s %-48s %8.3f  (%d)\n", op, k, med(x, c), c
      }
    }'
}
