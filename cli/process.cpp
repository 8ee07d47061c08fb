#include "cli/process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace starling::cli {

pid_t spawn_process(const std::vector<std::string>& argv, int out_fd, int close_in_child) {
  std::vector<std::string> args = argv;
  std::vector<char*> pointers;
  for (auto& a : args) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid > 0) return pid;
  ::dup2(out_fd, STDOUT_FILENO);
  ::dup2(out_fd, STDERR_FILENO);
  if (out_fd > STDERR_FILENO) ::close(out_fd);
  if (close_in_child >= 0) ::close(close_in_child);
  ::execv(pointers[0], pointers.data());
  std::fprintf(stderr, "cannot run %s: %s\n", pointers[0], std::strerror(errno));
  ::_exit(127);
}

int exit_code(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

}  // namespace starling::cli
