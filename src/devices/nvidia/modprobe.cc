// nvidia.loadKernelModules: modprobe by fd with an empty environment (see modprobe.h).
#include "devices/nvidia/modprobe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/unique_fd.h"

namespace berth::devices::nvidia {

Status load_kernel_modules(const std::string& modprobe, const std::vector<std::string>& modules) {
  UniqueFd fd(::open(modprobe.c_str(), O_PATH | O_CLOEXEC));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) < 0) return Error::sys(errno, "open " + modprobe);
  if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
    return Error::generic(modprobe + " must be a regular file owned by root and not writable by others");
  for (const auto& m : modules) {
    std::string arg0 = "modprobe", arg1 = m;
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    char* envp[] = {nullptr};
    pid_t pid = ::fork();
    if (pid < 0) return Error::sys(errno, "fork modprobe");
    if (pid == 0) {
      ::syscall(SYS_execveat, fd.get(), "", argv, envp, AT_EMPTY_PATH);
      ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      return Error::generic(modprobe + " " + m + " failed (status " + std::to_string(status) + ")");
  }
  return ok();
}

}  // namespace berth::devices::nvidia
