/* contrib/bench/driver.c: the timing loop of contrib/bench/run.sh. It starts the
 * runtimes itself (posix_spawn + wait4), so a sample is the wall time of exactly the
 * runtime's calls, with nothing of a shell around them, and wait4 gives each call's
 * peak RSS and CPU time. It is a child subreaper: a detached container's init lands here
 * when `create` exits, so "wait for exit" is a plain waitpid on the pid file's pid.
 *
 * Runtimes are interleaved sample by sample (berth, runc, crun, berth, ...) so that noise
 * from other load on the machine spreads over all of them alike.
 *
 * Usage: driver MODE [options] -r NAME=CMD... (CMD: the runtime and its global flags,
 *        split on spaces) -b BUNDLE (%r: the runtime's NAME, %s: the slot, 0 or the worker)
 *   version   CMD --version
 *   run       CMD run --bundle B ID
 *   cycle     CMD create --bundle B --pid-file F ID; start ID; wait for the init; delete ID
 *   running   one long-running container per runtime, then exec /bin/true, state, list
 *   parallel  -c COUNT containers through the cycle, -j JOBS at a time (wall time)
 * Options: -n samples, -w warm-up samples (discarded), -c, -j, -t DIR for scratch files,
 *          -l LABEL to print instead of MODE (e.g. cycle-docker), -g MIN-MAX: an idle gap
 *          of MIN to MAX ms (uniformly random) before each timed call, as an engine's calls
 *          arrive (run.sh's spaced mode; the kernel's state left by a previous call, such
 *          as a cgroup rwsem still in its writer mode, is gone by then).
 * Output, one line a sample: MODE RUNTIME METRIC VALUE (ms, or KiB for rss). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_RT 8
#define MAX_ARGS 32

struct runtime {
  const char *name;
  char *argv[MAX_ARGS]; /* the command and its global flags, NULL-terminated */
  int argc;
};

static struct runtime rts[MAX_RT];
static int nrt;
static const char *bundle_tmpl;
static const char *scratch = "/tmp";
static const char *label; /* the MODE column of the output, if not the mode */
static int samples = 20, warmup = 3, count = 50, jobs = 2;
static int gap_min, gap_max; /* -g, ms */

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("driver: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  _exit(1); /* not exit(): a parallel worker must not flush the samples it inherited */
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double cpu_ms(const struct rusage *ru) {
  return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) * 1e3 +
         (double)(ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e3;
}

static void bundle_path(char *out, size_t n, const struct runtime *rt, int slot) {
  size_t o = 0;
  for (const char *p = bundle_tmpl; *p && o + 32 < n; ++p) {
    if (p[0] == '%' && p[1] == 'r') {
      o += (size_t)snprintf(out + o, n - o, "%s", rt->name);
      ++p;
    } else if (p[0] == '%' && p[1] == 's') {
      o += (size_t)snprintf(out + o, n - o, "%d", slot);
      ++p;
    } else {
      out[o++] = *p;
    }
  }
  out[o] = 0;
}

/* Dumps a failed call's stderr and stops: a bench that silently times errors lies. */
static void failed(const struct runtime *rt, const char *what, int status, const char *errfile) {
  fprintf(stderr, "driver: %s: `%s` failed (%s %d); its stderr:\n", rt->name, what,
          WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  FILE *f = fopen(errfile, "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f)) fprintf(stderr, "  %s", line);
    fclose(f);
  }
  _exit(1);
}

/* Runs CMD + extra args (NULL-terminated), stdin and stdout on /dev/null, stderr into a
 * scratch file; returns the wall time in ms and fills *ru. A failure ends the bench. */
static double call(const struct runtime *rt, struct rusage *ru, const char *what, ...) {
  char *argv[MAX_ARGS * 2];
  int a = 0;
  for (int i = 0; i < rt->argc; ++i) argv[a++] = rt->argv[i];
  va_list ap;
  va_start(ap, what);
  for (char *s; (s = va_arg(ap, char *)) != NULL && a < MAX_ARGS * 2 - 1;) argv[a++] = s;
  va_end(ap);
  argv[a] = NULL;
  char errfile[4096];
  snprintf(errfile, sizeof errfile, "%s/stderr.%d", scratch, (int)getpid());
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  double t0 = now_ms();
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  if (rc != 0) die("cannot start %s: %s", argv[0], strerror(rc));
  int status;
  while (wait4(pid, &status, 0, ru) < 0)
    if (errno != EINTR) die("wait4: %s", strerror(errno));
  double dt = now_ms() - t0;
  posix_spawn_file_actions_destroy(&fa);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed(rt, what, status, errfile);
  return dt;
}

static pid_t read_pid(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) die("no pid file %s: %s", path, strerror(errno));
  long p = 0;
  if (fscanf(f, "%ld", &p) != 1 || p <= 0) die("bad pid file %s", path);
  fclose(f);
  unlink(path);
  return (pid_t)p;
}

/* Waits for a container's init, which is our child once `create` has exited (we are a
 * subreaper); falls back to polling if some runtime left it elsewhere. */
static void wait_init(pid_t pid, struct rusage *ru) {
  int status;
  memset(ru, 0, sizeof *ru);
  while (wait4(pid, &status, 0, ru) < 0) {
    if (errno == EINTR) continue;
    if (errno != ECHILD) die("wait4 init: %s", strerror(errno));
    while (kill(pid, 0) == 0) usleep(100);
    return;
  }
}

static void reap_strays(void) {
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

struct cycle_times {
  double total, create, start, exit, del, cpu;
  long rss_create;
};

static void cycle(const struct runtime *rt, const char *bundle, const char *id, struct cycle_times *c) {
  char pidfile[4096];
  snprintf(pidfile, sizeof pidfile, "%s/pid.%d", scratch, (int)getpid());
  struct rusage ru_create, ru, ru_init;
  double t0 = now_ms();
  c->create = call(rt, &ru_create, "create", "create", "--bundle", bundle, "--pid-file", pidfile, id, NULL);
  c->cpu = cpu_ms(&ru_create);
  c->rss_create = ru_create.ru_maxrss;
  pid_t init = read_pid(pidfile);
  c->start = call(rt, &ru, "start", "start", id, NULL);
  c->cpu += cpu_ms(&ru);
  double t1 = now_ms();
  wait_init(init, &ru_init);
  c->cpu += cpu_ms(&ru_init);
  c->exit = now_ms() - t1;
  c->del = call(rt, &ru, "delete", "delete", id, NULL);
  c->cpu += cpu_ms(&ru);
  c->total = now_ms() - t0;
  reap_strays();
}

static void emit(const char *scenario, const struct runtime *rt, const char *metric, double v) {
  printf("%s %s %s %.3f\n", label ? label : scenario, rt->name, metric, v);
}

static void idle_gap(void) {
  if (gap_max <= 0) return;
  int ms = gap_min + (gap_max > gap_min ? rand() % (gap_max - gap_min + 1) : 0);
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
  }
}

static void id_for(char *out, size_t n, const struct runtime *rt, const char *tag) {
  snprintf(out, n, "bench-%s-%s", rt->name, tag);
}

static void mode_simple(const char *mode) {
  for (int i = 0; i < warmup + samples; ++i) {
    for (int r = 0; r < nrt; ++r) {
      struct runtime *rt = &rts[r];
      struct rusage ru;
      char bundle[4096], id[256];
      double ms;
      idle_gap();
      if (strcmp(mode, "version") == 0) {
        ms = call(rt, &ru, "--version", "--version", NULL);
      } else {
        bundle_path(bundle, sizeof bundle, rt, 0);
        id_for(id, sizeof id, rt, "run");
        ms = call(rt, &ru, "run", "run", "--bundle", bundle, id, NULL);
        reap_strays();
      }
      if (i < warmup) continue;
      emit(mode, rt, "wall", ms);
      emit(mode, rt, "cpu", cpu_ms(&ru));
      emit(mode, rt, "rss", (double)ru.ru_maxrss);
    }
    fflush(stdout);
  }
}

static void mode_cycle(void) {
  for (int i = 0; i < warmup + samples; ++i) {
    for (int r = 0; r < nrt; ++r) {
      struct runtime *rt = &rts[r];
      char bundle[4096], id[256];
      bundle_path(bundle, sizeof bundle, rt, 0);
      id_for(id, sizeof id, rt, "cycle");
      struct cycle_times c;
      idle_gap();
      cycle(rt, bundle, id, &c);
      if (i < warmup) continue;
      emit("cycle", rt, "wall", c.total);
      emit("cycle", rt, "cpu", c.cpu);
      emit("cycle", rt, "create", c.create);
      emit("cycle", rt, "start", c.start);
      emit("cycle", rt, "exit", c.exit);
      emit("cycle", rt, "delete", c.del);
      emit("cycle", rt, "rss", (double)c.rss_create);
    }
    fflush(stdout);
  }
}

/* One long-running container per runtime (bundle slot 0 runs `sleep`), then exec, state
 * and list against it, interleaved; finally kill, reap and delete. */
static void mode_running(void) {
  pid_t inits[MAX_RT];
  struct rusage ru;
  for (int r = 0; r < nrt; ++r) {
    char bundle[4096], id[256], pidfile[4096];
    bundle_path(bundle, sizeof bundle, &rts[r], 0);
    id_for(id, sizeof id, &rts[r], "sleep");
    snprintf(pidfile, sizeof pidfile, "%s/pid.%d", scratch, (int)getpid());
    call(&rts[r], &ru, "create", "create", "--bundle", bundle, "--pid-file", pidfile, id, NULL);
    inits[r] = read_pid(pidfile);
    call(&rts[r], &ru, "start", "start", id, NULL);
  }
  for (int i = 0; i < warmup + samples; ++i) {
    for (int r = 0; r < nrt; ++r) {
      struct runtime *rt = &rts[r];
      char id[256];
      id_for(id, sizeof id, rt, "sleep");
      idle_gap();
      double e = call(rt, &ru, "exec", "exec", id, "/bin/true", NULL);
      double ecpu = cpu_ms(&ru);
      long erss = ru.ru_maxrss;
      reap_strays();
      double s = call(rt, &ru, "state", "state", id, NULL);
      double l = call(rt, &ru, "list", "list", NULL);
      if (i < warmup) continue;
      printf("exec %s wall %.3f\nexec %s cpu %.3f\nexec %s rss %ld\nstate %s wall %.3f\nlist %s wall %.3f\n",
             rt->name, e, rt->name, ecpu, rt->name, erss, rt->name, s, rt->name, l);
    }
    fflush(stdout);
  }
  for (int r = 0; r < nrt; ++r) {
    char id[256];
    id_for(id, sizeof id, &rts[r], "sleep");
    call(&rts[r], &ru, "kill", "kill", id, "KILL", NULL);
    struct rusage ri;
    wait_init(inits[r], &ri);
    call(&rts[r], &ru, "delete", "delete", id, NULL);
  }
  reap_strays();
}

/* COUNT containers through the whole cycle, JOBS workers at a time; each worker is a
 * subreaper of its own containers and uses its own bundle (its own cgroupsPath). */
static void mode_parallel(void) {
  for (int i = 0; i < warmup + samples; ++i) {
    for (int r = 0; r < nrt; ++r) {
      struct runtime *rt = &rts[r];
      double t0 = now_ms();
      for (int w = 0; w < jobs; ++w) {
        pid_t p = fork();
        if (p < 0) die("fork: %s", strerror(errno));
        if (p == 0) {
          prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
          char bundle[4096], id[256], tag[32];
          bundle_path(bundle, sizeof bundle, rt, w);
          for (int k = w; k < count; k += jobs) {
            snprintf(tag, sizeof tag, "par%d", k);
            id_for(id, sizeof id, rt, tag);
            struct cycle_times c;
            cycle(rt, bundle, id, &c);
          }
          _exit(0);
        }
      }
      int status, bad = 0;
      for (int w = 0; w < jobs; ++w) {
        if (wait(&status) < 0) die("wait: %s", strerror(errno));
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bad = 1;
      }
      if (bad) die("%s: a parallel worker failed", rt->name);
      double ms = now_ms() - t0;
      if (i < warmup) continue;
      emit("parallel", rt, "wall", ms);
    }
    fflush(stdout);
  }
}

static void add_runtime(char *spec) {
  if (nrt == MAX_RT) die("too many runtimes");
  char *eq = strchr(spec, '=');
  if (!eq) die("-r wants NAME=CMD, got %s", spec);
  *eq = 0;
  struct runtime *rt = &rts[nrt++];
  rt->name = spec;
  for (char *tok = strtok(eq + 1, " "); tok; tok = strtok(NULL, " ")) {
    if (rt->argc == MAX_ARGS - 1) die("%s: too many words", spec);
    rt->argv[rt->argc++] = tok;
  }
  if (rt->argc == 0) die("%s: empty command", spec);
}

int main(int argc, char **argv) {
  if (argc < 2) die("usage: driver version|run|cycle|running|parallel [options]");
  const char *mode = argv[1];
  int opt;
  optind = 2;
  while ((opt = getopt(argc, argv, "r:b:n:w:c:j:t:l:g:")) != -1) {
    switch (opt) {
      case 'r': add_runtime(optarg); break;
      case 'b': bundle_tmpl = optarg; break;
      case 'n': samples = atoi(optarg); break;
      case 'w': warmup = atoi(optarg); break;
      case 'c': count = atoi(optarg); break;
      case 'j': jobs = atoi(optarg); break;
      case 't': scratch = optarg; break;
      case 'l': label = optarg; break;
      case 'g':
        if (sscanf(optarg, "%d-%d", &gap_min, &gap_max) != 2 || gap_min < 0 || gap_max < gap_min)
          die("-g wants MIN-MAX in ms, got %s", optarg);
        break;
      default: die("unknown option");
    }
  }
  if (nrt == 0) die("no runtime (-r NAME=CMD)");
  if (strcmp(mode, "version") != 0 && !bundle_tmpl) die("no bundle (-b)");
  if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  srand((unsigned)getpid() ^ (unsigned)now_ms());
  if (strcmp(mode, "version") == 0 || strcmp(mode, "run") == 0) mode_simple(mode);
  else if (strcmp(mode, "cycle") == 0) mode_cycle();
  else if (strcmp(mode, "running") == 0) mode_running();
  else if (strcmp(mode, "parallel") == 0) mode_parallel();
  else die("unknown mode %s", mode);
  return 0;
}
