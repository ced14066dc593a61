/* contrib/bench/entries.c: which functions of berth one call enters, for the hot-text
 * order of the link (contrib/bench/hot-text.sh, src/cli/hot_text.ld). It runs the call
 * under ptrace with an int3 on the entry of every function listed in ADDRS (hex addresses
 * from `nm` of the same binary), follows its children (the container's init) until they
 * execute another program, and appends the address of each function entered to OUT: once
 * when the call itself exits (a created init may wait for `start` long after) and once more
 * when every traced process is gone. A breakpoint is removed when first hit, so a call runs
 * at nearly its usual speed.
 *
 * Usage: entries OUT BINARY ADDRS CMD [ARGS...]  (BINARY: the path CMD maps, as in
 *        /proc/PID/maps; it must not re-execute itself, i.e. be installed read-only) */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned long *addr; /* sorted, unique */
static unsigned char *orig, *hit;
static size_t na;

static int cmp(const void *a, const void *b) {
  unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
  return x < y ? -1 : x > y;
}

static long find(unsigned long v) {
  size_t lo = 0, hi = na;
  while (lo < hi) {
    size_t m = (lo + hi) / 2;
    if (addr[m] < v) lo = m + 1; else hi = m;
  }
  return lo < na && addr[lo] == v ? (long)lo : -1;
}

static void set_byte(pid_t p, unsigned long a, unsigned char b) {
  errno = 0;
  long w = ptrace(PTRACE_PEEKTEXT, p, a, 0);
  if (errno) return;
  ptrace(PTRACE_POKETEXT, p, a, (w & ~0xffL) | b);
}

/* The load address: the start of BINARY's mapping at file offset 0. */
static unsigned long load_base(pid_t p, const char *bin) {
  char path[64], line[4096];
  snprintf(path, sizeof path, "/proc/%d/maps", p);
  FILE *f = fopen(path, "r");
  unsigned long b = 0;
  while (f && fgets(line, sizeof line, f)) {
    unsigned long lo, hi, off;
    char perm[8], name[4096] = "";
    if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095s", &lo, &hi, perm, &off, name) >= 4 &&
        off == 0 && strcmp(name, bin) == 0) {
      b = lo;
      break;
    }
  }
  if (f) fclose(f);
  return b;
}

static void dump(const char *out) {
  FILE *f = fopen(out, "a");
  if (!f) { perror(out); return; }
  for (size_t i = 0; i < na; i++)
    if (hit[i]) fprintf(f, "%lx\n", addr[i]);
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: entries OUT BINARY ADDRS CMD [ARGS...]\n"); return 2; }
  const char *out = argv[1], *bin = argv[2];
  FILE *af = fopen(argv[3], "r");
  if (!af) { perror(argv[3]); return 1; }
  size_t cap = 1 << 16;
  addr = malloc(cap * sizeof *addr);
  unsigned long v;
  while (fscanf(af, "%lx", &v) == 1) {
    if (na == cap) addr = realloc(addr, (cap *= 2) * sizeof *addr);
    addr[na++] = v;
  }
  fclose(af);
  qsort(addr, na, sizeof *addr, cmp);
  size_t j = 0;
  for (size_t i = 0; i < na; i++)
    if (!j || addr[j - 1] != addr[i]) addr[j++] = addr[i];
  na = j;
  orig = malloc(na ? na : 1);
  hit = calloc(na ? na : 1, 1);

  pid_t c = fork();
  if (c == 0) {
    ptrace(PTRACE_TRACEME, 0, 0, 0);
    raise(SIGSTOP);
    execvp(argv[4], argv + 4);
    _exit(127);
  }
  int st;
  waitpid(c, &st, 0);
  ptrace(PTRACE_SETOPTIONS, c, 0, PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                                      PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL);
  ptrace(PTRACE_CONT, c, 0, 0);
  int armed = 0;
  unsigned long base = 0;
  for (;;) {
    pid_t p = waitpid(-1, &st, __WALL);
    if (p < 0) {
      if (errno == EINTR) continue;
      break; /* no tracee left */
    }
    if (WIFEXITED(st) || WIFSIGNALED(st)) {
      if (p == c) dump(out);
      continue;
    }
    int ev = st >> 16, sig = 0;
    if (WSTOPSIG(st) == SIGTRAP && ev == PTRACE_EVENT_EXEC) {
      if (p != c || armed) { /* a child ran another program: nothing of ours to see */
        ptrace(PTRACE_DETACH, p, 0, 0);
        continue;
      }
      armed = 1;
      base = load_base(p, bin);
      if (!base) { fprintf(stderr, "entries: %s is not mapped by the command\n", bin); return 1; }
      for (size_t i = 0; i < na; i++) {
        errno = 0;
        long w = ptrace(PTRACE_PEEKTEXT, p, base + addr[i], 0);
        orig[i] = (unsigned char)w;
        if (!errno) ptrace(PTRACE_POKETEXT, p, base + addr[i], (w & ~0xffL) | 0xcc);
      }
    } else if (WSTOPSIG(st) == SIGTRAP && ev == 0) {
      struct user_regs_struct r;
      ptrace(PTRACE_GETREGS, p, 0, &r);
      long k = find(r.rip - 1 - base);
      if (k >= 0) { /* ours: note it, put the byte back (in this process), run it */
        hit[k] = 1;
        set_byte(p, r.rip - 1, orig[k]);
        r.rip--;
        ptrace(PTRACE_SETREGS, p, 0, &r);
      } else {
        sig = SIGTRAP;
      }
    } else if (WSTOPSIG(st) == SIGTRAP) {
      /* clone, fork and vfork events: the new process reports on its own */
    } else if (WSTOPSIG(st) != SIGSTOP) {
      sig = WSTOPSIG(st); /* new tracees start with SIGSTOP: swallowed */
    }
    ptrace(PTRACE_CONT, p, 0, sig);
  }
  dump(out);
  return 0;
}
