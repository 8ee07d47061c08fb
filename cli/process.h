#pragma once
// Child processes of the launcher and the experiment runner: fork/exec with the child's
// stdout and stderr sent to one file descriptor.
#include <sys/types.h>

#include <string>
#include <vector>

namespace starling::cli {

/// Starts argv[0] (a path) with argv, its stdout and stderr on `out_fd`; the caller keeps
/// `close_in_child` (e.g. the read end of a pipe) out of the child. Returns the pid; throws
/// std::runtime_error when fork fails. A program that cannot be executed exits with 127.
pid_t spawn_process(const std::vector<std::string>& argv, int out_fd, int close_in_child = -1);

/// The exit code of a wait status: the code, or 128 + the signal that ended it.
int exit_code(int wait_status);

}  // namespace starling::cli
