#!/bin/bash
# check-cli-docs.sh BERTH: contrib/completions/berth.bash and docs/man/ against the binary.
#   - its command list = the COMMANDS of `berth --help`
#   - its global flags = GLOBAL OPTIONS, and which of them take a value
#   - for each command, its flags = the OPTIONS of `berth COMMAND --help`, and which take a value
#   - a few completions, run through the completion function itself
#   - docs/man: a page per command (markdown and roff) naming each of its flags, and
#     berth.8.md naming every global flag
# Needs no root. Prints one line per difference; exit 1 when there is one.
set -u -o pipefail
berth=${1:?usage: check-cli-docs.sh PATH-TO-BERTH}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../../contrib/completions/berth.bash
. "$repo/contrib/completions/berth.bash"

bad=0
differ() { printf 'DIFF %s\n' "$*"; bad=1; }
words() { tr ' \n' '\n\n' | sed '/^$/d' | sort -u | tr '\n' ' '; }

# "   --bundle value, -b value  text" -> "--bundle -b" (names), and those with "value"
parse_options() { # SECTION-HEADER: reads help text on stdin
  awk -v hdr="$1" '
    $0 ~ "^" hdr ":" { on = 1; next }
    on && /^[A-Z][A-Z ]*:/ { on = 0 }
    on && /^   -/ {
      line = $0; sub(/^ +/, "", line); split(line, parts, /  +/); spec = parts[1]
      n = split(spec, names, /, /)
      for (i = 1; i <= n; i++) { split(names[i], w, " "); print w[1], (w[2] == "value" ? "value" : "bool") }
    }'
}

top=$("$berth" --help)
want=$(sed -n '/^COMMANDS:/,/^[A-Z ]*OPTIONS:/p' <<<"$top" | awk '/^   [a-z]/ { sub(/,$/, "", $1); print $1 }' |
  grep -vx help | words)
have=$(echo "$_berth_commands" | words)
[[ "$want" == "$have" ]] || differ "commands: berth has [$want], completion has [$have]"

g=$(parse_options "GLOBAL OPTIONS" <<<"$top")
want=$(awk '{ print $1 }' <<<"$g" | words); have=$(echo "$_berth_global_flags" | words)
[[ "$want" == "$have" ]] || differ "global flags: berth has [$want], completion has [$have]"
want=$(awk '$2 == "value" { print $1 }' <<<"$g" | words); have=$(echo "$_berth_global_value_flags" | words)
[[ "$want" == "$have" ]] || differ "global flags with a value: berth has [$want], completion has [$have]"

for cmd in $_berth_commands; do
  o=$("$berth" "$cmd" --help | parse_options OPTIONS)
  want=$(awk '{ print $1 }' <<<"$o" | words); have=$(_berth_cmd_flags "$cmd" | words)
  [[ "$want" == "$have" ]] || differ "$cmd flags: berth has [$want], completion has [$have]"
  want=$(awk '$2 == "bool" { print $1 }' <<<"$o" | words); have=$(_berth_cmd_bool_flags "$cmd" | words)
  [[ "$want" == "$have" ]] || differ "$cmd flags without a value: berth has [$want], completion has [$have]"
done

# The completion function itself, on a few command lines (no container ids: an empty root).
complete_line() { # WORDS... (the last one is being completed)
  COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=()
  _berth
  printf '%s\n' "${COMPREPLY[@]}" | words
}
expect() { local got; got=$(complete_line "${@:2}"); [[ "$got" == "$1" ]] || differ "complete [${*:2}]: got [$got], expected [$1]"; }
export PATH=$(dirname "$berth"):$PATH
empty=$(mktemp -d); trap 'rm -rf "$empty"' EXIT
expect "start state " berth --root "$empty" st
expect "--log --log-format " berth --lo
expect "json text " berth --log-format ""
expect "--pid-file --pidfd-socket " berth create --pid
expect "--stats " berth events --st
expect "json table " berth ps -f ""
expect "SIGUSR1 SIGUSR2 " berth --root "$empty" kill abc SIGUS
expect "--mem-bw-schema --memory --memory-reservation --memory-swap " berth update --mem
# Man pages: every command has one, in both forms, and each flag is described (**--flag**).
man=$repo/docs/man
for cmd in $_berth_commands; do
  md=$man/berth-$cmd.8.md
  [[ -f "$md" ]] || { differ "no man page $md"; continue; }
  [[ -f "${md%.md}" ]] || differ "no roff page ${md%.md} (docs/man/generate.sh)"
  for f in $("$berth" "$cmd" --help | parse_options OPTIONS | awk '{ print $1 }'); do
    grep -qF -- "**$f**" "$md" || differ "man page berth-$cmd.8.md does not describe $f"
  done
done
for f in $(awk '{ print $1 }' <<<"$g"); do
  grep -qF -- "**$f**" "$man/berth.8.md" || differ "man page berth.8.md does not describe $f"
done
[[ -f "$man/berth.8" ]] || differ "no roff page $man/berth.8"
(( bad == 0 )) && echo "completions and man pages: consistent with $("$berth" --version | head -n 1)"
exit $bad
