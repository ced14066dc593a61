# bash completion for berth(8)                                   -*- shell-script -*-
# Installed as share/bash-completion/completions/berth; or: source contrib/completions/berth.bash
# Commands and flags follow src/cli/command_table.cc (tests/ecosystem/check-cli-docs.sh
# compares them with `berth --help` and `berth COMMAND --help`).

_berth_commands="checkpoint create delete events exec features kill list pause ps restore resume run spec start state update"

_berth_global_flags="--debug --log --log-format --root --criu --systemd-cgroup --rootless --help -h --version -v"
# global flags that take a value
_berth_global_value_flags="--log --log-format --root --criu --rootless"

# _berth_cmd_flags COMMAND: every flag of COMMAND (long names and their one-letter aliases).
_berth_cmd_flags() {
  case $1 in
    checkpoint) echo "--image-path --work-path --tcp-established --ext-unix-sk --shell-job --file-locks
      --lazy-pages --manage-cgroups-mode --empty-ns --auto-dedup --parent-path --leave-running --status-fd
      --page-server --pre-dump" ;;
    create) echo "--bundle -b --console-socket --pidfd-socket --pid-file --no-pivot --no-new-keyring --preserve-fds" ;;
    delete) echo "--force -f" ;;
    events) echo "--interval --stats" ;;
    exec) echo "--console-socket --pidfd-socket --cwd --env -e --tty -t --user -u --additional-gids -g
      --process -p --detach -d --pid-file --process-label --apparmor --no-new-privs --cap -c --preserve-fds
      --cgroup --ignore-paused" ;;
    kill) echo "--all -a" ;;
    list) echo "--format -f --quiet -q" ;;
    ps) echo "--format -f" ;;
    restore) echo "--image-path --work-path --tcp-established --ext-unix-sk --shell-job --file-locks
      --lazy-pages --manage-cgroups-mode --empty-ns --auto-dedup --console-socket --bundle -b --detach -d
      --pid-file --no-subreaper --no-pivot --lsm-profile --lsm-mount-context" ;;
    run) echo "--bundle -b --console-socket --pidfd-socket --detach -d --keep --pid-file --no-subreaper
      --no-pivot --no-new-keyring --preserve-fds" ;;
    spec) echo "--bundle -b --rootless" ;;
    update) echo "--resources -r --blkio-weight --cpu-period --cpu-quota --cpu-burst --cpu-share --cpu-shares
      --cpu-rt-period --cpu-rt-runtime --cpu-idle --cpuset-cpus --cpuset-mems --kernel-memory
      --kernel-memory-tcp --memory --memory-reservation --memory-swap --pids-limit --l3-cache-schema
      --mem-bw-schema" ;;
    features | pause | resume | start | state) echo "" ;;
  esac
}

# _berth_cmd_bool_flags COMMAND: the flags of COMMAND that take no value.
_berth_cmd_bool_flags() {
  case $1 in
    checkpoint) echo "--tcp-established --ext-unix-sk --shell-job --file-locks --lazy-pages --auto-dedup
      --leave-running --pre-dump" ;;
    create) echo "--no-pivot --no-new-keyring" ;;
    delete) echo "--force -f" ;;
    events) echo "--stats" ;;
    exec) echo "--tty -t --detach -d --no-new-privs --ignore-paused" ;;
    kill) echo "--all -a" ;;
    list) echo "--quiet -q" ;;
    restore) echo "--tcp-established --ext-unix-sk --shell-job --file-locks --lazy-pages --auto-dedup
      --detach -d --no-subreaper --no-pivot" ;;
    run) echo "--detach -d --keep --no-subreaper --no-pivot --no-new-keyring" ;;
    spec) echo "--rootless" ;;
    *) echo "" ;;
  esac
}

_berth_signals="ABRT ALRM BUS CHLD CONT FPE HUP ILL INT IO KILL PIPE PROF PWR QUIT SEGV STKFLT STOP SYS TERM
  TRAP TSTP TTIN TTOU URG USR1 USR2 VTALRM WINCH XCPU XFSZ"

_berth_container_ids() {
  local root=$1
  berth ${root:+--root "$root"} list -q 2>/dev/null
}

_berth() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local i w cmd= cmd_at=0 root= skip=0
  COMPREPLY=()

  # The command is the first word that is neither a global flag nor a global flag's value.
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w=${COMP_WORDS[i]}
    if (( skip )); then skip=0; [[ ${COMP_WORDS[i-1]} == --root ]] && root=$w; continue; fi
    case $w in
      --root=*) root=${w#--root=} ;;
      --*=*) ;;
      -*) [[ " $_berth_global_value_flags " == *" $w "* ]] && skip=1 ;;
      *) cmd=$w; cmd_at=$i; break ;;
    esac
  done

  if [[ -z "$cmd" ]]; then
    case $prev in
      --log-format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
      --rootless) COMPREPLY=($(compgen -W "true false auto" -- "$cur")); return ;;
      --log | --criu) COMPREPLY=($(compgen -f -- "$cur")); return ;;
      --root) COMPREPLY=($(compgen -d -- "$cur")); return ;;
    esac
    if [[ "$cur" == -* ]]; then
      COMPREPLY=($(compgen -W "$_berth_global_flags" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$_berth_commands help h" -- "$cur"))
    fi
    return
  fi

  # A value for the command's flag?
  local flags bools
  flags=$(_berth_cmd_flags "$cmd"); bools=$(_berth_cmd_bool_flags "$cmd")
  if [[ "$prev" == -* && " $(echo $flags) " == *" $prev "* && " $(echo $bools) " != *" $prev "* ]]; then
    case $prev in
      --bundle | -b | --image-path | --work-path | --parent-path | --cwd) COMPREPLY=($(compgen -d -- "$cur")) ;;
      --format | -f) COMPREPLY=($(compgen -W "table json" -- "$cur")) ;;
      --manage-cgroups-mode) COMPREPLY=($(compgen -W "soft full strict" -- "$cur")) ;;
      --interval) COMPREPLY=($(compgen -W "1s 5s 10s 30s" -- "$cur")) ;;
      --cap | -c) COMPREPLY=($(compgen -W "$(echo CAP_{AUDIT_CONTROL,AUDIT_READ,AUDIT_WRITE,BLOCK_SUSPEND,BPF,CHECKPOINT_RESTORE,CHOWN,DAC_OVERRIDE,DAC_READ_SEARCH,FOWNER,FSETID,IPC_LOCK,IPC_OWNER,KILL,LEASE,LINUX_IMMUTABLE,MAC_ADMIN,MAC_OVERRIDE,MKNOD,NET_ADMIN,NET_BIND_SERVICE,NET_BROADCAST,NET_RAW,PERFMON,SETFCAP,SETGID,SETPCAP,SETUID,SYS_ADMIN,SYS_BOOT,SYS_CHROOT,SYS_MODULE,SYS_NICE,SYS_PACCT,SYS_PTRACE,SYS_RAWIO,SYS_RESOURCE,SYS_TIME,SYS_TTY_CONFIG,SYSLOG,WAKE_ALARM})" -- "$cur")) ;;
      --env | -e | --user | -u | --additional-gids | -g | --preserve-fds | --status-fd | --page-server | \
      --process-label | --apparmor | --cgroup | --lsm-profile | --lsm-mount-context | --empty-ns | \
      --blkio-weight | --cpu-* | --cpuset-* | --kernel-memory* | --memory* | --pids-limit | \
      --l3-cache-schema | --mem-bw-schema) ;;  # free text
      *) COMPREPLY=($(compgen -f -- "$cur")) ;;  # files: --pid-file, --console-socket, --process, --resources, ...
    esac
    return
  fi
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags --help -h" -- "$cur"))
    return
  fi

  # Positional arguments: how many came before this word?
  local npos=0
  for (( i = cmd_at + 1; i < COMP_CWORD; i++ )); do
    w=${COMP_WORDS[i]}
    case $w in
      --*=*) ;;
      -*) [[ " $(echo $flags) " == *" $w "* && " $(echo $bools) " != *" $w "* ]] && (( i++ )) ;;
      *) (( npos++ )) ;;
    esac
  done
  case $cmd in
    spec | list | features) ;;
    help | h) COMPREPLY=($(compgen -W "$_berth_commands" -- "$cur")) ;;
    kill)
      if (( npos == 0 )); then COMPREPLY=($(compgen -W "$(_berth_container_ids "$root")" -- "$cur"))
      elif (( npos == 1 )); then
        local s sigs=
        for s in $_berth_signals; do sigs+=" $s SIG$s"; done
        COMPREPLY=($(compgen -W "$sigs" -- "$cur"))
      fi ;;
    create | run | restore) ;;  # a new id: nothing to offer
    *)
      (( npos == 0 )) && COMPREPLY=($(compgen -W "$(_berth_container_ids "$root")" -- "$cur")) ;;
  esac
}
complete -F _berth berth
