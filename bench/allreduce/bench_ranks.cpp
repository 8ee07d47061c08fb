// Forked ranks and their endpoint rendezvous through pipes (bench/allreduce/bench_ranks.h).
#include "bench/allreduce/bench_ranks.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace starling::bench {

namespace {

// Lines from a pipe; next() waits at most until the deadline and returns false at EOF or
// past it.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  bool next(std::string& line, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      const auto end = buffer_.find('\n');
      if (end != std::string::npos) {
        line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return true;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      const long long wait_ms = std::min<long long>(left.count(), 1 << 30);
      pollfd pfd{fd_, POLLIN, 0};
      if (wait_ms <= 0 || poll(&pfd, 1, static_cast<int>(wait_ms)) <= 0) return false;
      char chunk[4096];
      const ssize_t n = read(fd_, chunk, sizeof chunk);
      if (n <= 0) return false;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
  std::string buffer_;
};

void write_all(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n <= 0) throw std::runtime_error("pipe write failed");
    done += static_cast<std::size_t>(n);
  }
}

void make_pipe(int fds[2]) {
  if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
}

// Ends the ranks after a failed rendezvous: they may be waiting for endpoints forever.
void kill_all(const std::vector<pid_t>& children) {
  for (pid_t pid : children) kill(pid, SIGKILL);
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
}

}  // namespace

std::string RankLink::exchange(int rank, const std::string& own_endpoint) {
  write_all(up_, std::to_string(rank) + " " + own_endpoint + "\n");
  LineReader down(down_);
  std::string right;
  if (!down.next(right, std::chrono::steady_clock::time_point::max()))
    throw std::runtime_error("the parent sent no endpoint");
  return right;
}

void run_ranks(int p, const std::function<int(int, RankLink&)>& body,
               const std::function<void(const std::string&)>& on_result, std::chrono::seconds rendezvous) {
  int up[2], results[2];
  make_pipe(up);
  make_pipe(results);
  std::vector<int> down_write(p);
  std::vector<pid_t> children;
  for (int r = 0; r < p; ++r) {
    int down[2];
    make_pipe(down);
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      close(up[0]), close(results[0]), close(down[1]);
      int rc = 1;
      try {
        RankLink link(up[1], down[0], results[1]);
        rc = body(r, link);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      _exit(rc);
    }
    close(down[0]);
    down_write[r] = down[1];
    children.push_back(pid);
  }
  close(up[1]), close(results[1]);

  std::vector<std::string> endpoints(p);
  LineReader from_ranks(up[0]);
  const auto deadline = std::chrono::steady_clock::now() + rendezvous;
  std::string line;
  for (int got = 0; got < p; ++got) {
    int rank = -1;
    char endpoint[256] = {};
    if (!from_ranks.next(line, deadline) || std::sscanf(line.c_str(), "%d %255s", &rank, endpoint) != 2 ||
        rank < 0 || rank >= p) {
      kill_all(children);
      throw std::runtime_error("the ranks did not all report their endpoints");
    }
    endpoints[rank] = endpoint;
  }
  close(up[0]);
  for (int r = 0; r < p; ++r) {
    write_all(down_write[r], endpoints[(r + 1) % p] + "\n");
    close(down_write[r]);
  }

  LineReader from_rank0(results[0]);
  while (from_rank0.next(line, std::chrono::steady_clock::time_point::max())) on_result(line);
  close(results[0]);
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  if (failed) throw std::runtime_error(std::to_string(failed) + " rank(s) failed");
}

}  // namespace starling::bench
