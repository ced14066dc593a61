/* contrib/bench/rusage.c: runs one command and prints what it cost as one line,
 * "LABEL wall W user U sys S minflt F majflt J nvcsw V nivcsw I maxrss K" (ms, counts, KiB), the
 * command and every descendant it waited for (wait4's rusage). The guest has no GNU time,
 * no perf events under TCG; this is what tests/vm/systemd/guest-probe.sh compares runtimes by.
 *   rusage LABEL COMMAND [ARGS...]   (stdin and stdout of the command: /dev/null)
 * Build: cc -O2 -static -o rusage rusage.c */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double ms(struct timeval t) { return (double)t.tv_sec * 1e3 + (double)t.tv_usec / 1e3; }

int main(int argc, char **argv) {
  if (argc < 3) {
    fputs("usage: rusage LABEL COMMAND [ARGS...]\n", stderr);
    return 2;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[2], &fa, NULL, argv + 2, environ);
  if (rc != 0) {
    fprintf(stderr, "rusage: cannot start %s: %s\n", argv[2], strerror(rc));
    return 1;
  }
  int status;
  struct rusage ru;
  while (wait4(pid, &status, 0, &ru) < 0)
    if (errno != EINTR) return 1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double wall = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
  printf("%s wall %.2f user %.2f sys %.2f minflt %ld majflt %ld nvcsw %ld nivcsw %ld maxrss %ld\n", argv[1], wall,
         ms(ru.ru_utime), ms(ru.ru_stime), ru.ru_minflt, ru.ru_majflt, ru.ru_nvcsw, ru.ru_nivcsw, ru.ru_maxrss);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "rusage: %s: %s failed (status %d)\n", argv[1], argv[2], status);
    return 1;
  }
  return 0;
}
