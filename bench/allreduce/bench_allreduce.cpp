// bench_allreduce: Starling's ring all-reduce (mean) among p processes on 127.0.0.1, for
// p in --peers and message sizes from --min-bytes to --max-bytes (×4 steps). The parent
// forks one child per rank before any ZeroMQ context exists; rank 0 times each run and
// reports the median over repetitions through a pipe. Columns follow nccl-tests:
// algbw = bytes / seconds, busbw = algbw · 2(p−1)/p.
//
//   bench_allreduce [--peers 2,4] [--min-bytes 1024] [--max-bytes 67108864]
//                   [--segment-bytes 1048576] [--socket-buffer BYTES] [--io-threads 1]
//                   [--json FILE]      (--help lists them)
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gossip/algorithms/allreduce_ring.h"
#include "gossip/transport/transport.h"

namespace {

using namespace starling::gossip;

struct Config {
  std::vector<int> peers{2, 4};
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = std::size_t{64} << 20;
  std::size_t segment_bytes = AllreduceOptions{}.segment_bytes;
  int socket_buffer_bytes = 0;
  int io_threads = 1;
  std::string json;
};

struct Row {
  int peers;
  std::size_t bytes;
  double seconds;
  double algbw() const { return bytes / seconds / 1e9; }
  double busbw() const { return algbw() * 2.0 * (peers - 1) / peers; }
};

// Exits 2 with CLI11's message on a bad option or value; `--help` prints the options and exits 0.
Config parse_args(int argc, char** argv) {
  Config c;
  CLI::App app{"bench_allreduce: Starling's ring all-reduce among p processes on 127.0.0.1"};
  app.add_option("--peers", c.peers, "Process counts, comma-separated")->delimiter(',')->check(CLI::Range(2, 64));
  app.add_option("--min-bytes", c.min_bytes, "Smallest message")->check(CLI::Range(std::size_t{4}, std::size_t{1} << 32));
  app.add_option("--max-bytes", c.max_bytes, "Largest message (sizes grow 4x)")
      ->check(CLI::Range(std::size_t{4}, std::size_t{1} << 32));
  app.add_option("--segment-bytes", c.segment_bytes, "Pipelining segment")
      ->check(CLI::Range(std::size_t{4}, std::size_t{1} << 32));
  app.add_option("--socket-buffer", c.socket_buffer_bytes, "ZeroMQ SNDBUF/RCVBUF (0: the OS default)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--io-threads", c.io_threads, "ZeroMQ I/O threads")->check(CLI::Range(1, 16));
  app.add_option("--json", c.json, "Also write the rows here");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  return c;
}

std::vector<std::size_t> sizes_of(const Config& c) {
  std::vector<std::size_t> sizes;
  for (std::size_t b = c.min_bytes; b <= c.max_bytes; b *= 4) sizes.push_back(b);
  return sizes;
}

// Same count on every rank: enough runs for a stable median, bounded for large sizes.
int repetitions(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>((std::size_t{256} << 20) / bytes, 5, 200));
}

std::string endpoint(int base_port, int rank) {
  return "tcp://127.0.0.1:" + std::to_string(base_port + rank);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One size on one rank: warm up, then time each run; returns the median on this rank.
double time_size(Transport& t, const std::vector<PeerId>& ring, std::size_t bytes, std::size_t segment_bytes,
                 std::uint64_t first_round) {
  std::vector<float> data(std::max<std::size_t>(1, bytes / sizeof(float)), 1.0f + t.self());
  AllreduceOptions options;
  options.first_round = first_round;
  options.segment_bytes = segment_bytes;
  AllreduceRing allreduce(t, ring, data, options);
  for (int i = 0; i < 3; ++i) allreduce.run();
  std::vector<double> times;
  for (int i = 0, n = repetitions(bytes); i < n; ++i) {
    const auto start = std::chrono::steady_clock::now();
    allreduce.run();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(times);
}

// A child process: one rank of the ring; rank 0 writes "bytes seconds" lines to out_fd.
int run_rank(int rank, int p, int base_port, const Config& c, int out_fd) {
  const std::vector<std::size_t> sizes = sizes_of(c);
  TransportContext context(c.io_threads);
  TransportOptions o;
  o.self = static_cast<PeerId>(rank);
  o.bind_endpoint = endpoint(base_port, rank);
  o.accept = {static_cast<PeerId>((rank + p - 1) % p)};
  o.socket_buffer_bytes = c.socket_buffer_bytes;
  Transport t(context, o);
  const int right = (rank + 1) % p;
  t.connect(static_cast<PeerId>(right), endpoint(base_port, right));
  std::vector<PeerId> ring;
  for (int r = 0; r < p; ++r) ring.push_back(static_cast<PeerId>(r));
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double seconds = time_size(t, ring, sizes[i], c.segment_bytes, static_cast<std::uint64_t>(i) << 32);
    if (rank == 0) dprintf(out_fd, "%zu %.9f\n", sizes[i], seconds);
  }
  return 0;
}

std::vector<Row> run_peers(int p, const Config& c) {
  const int base_port = 20000 + static_cast<int>((getpid() * 97 + p * 131) % 30000);
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::vector<pid_t> children;
  for (int r = 0; r < p; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      int rc = 1;
      try {
        rc = run_rank(r, p, base_port, c, fds[1]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      _exit(rc);
    }
    children.push_back(pid);
  }
  close(fds[1]);
  std::vector<Row> rows;
  FILE* in = fdopen(fds[0], "r");
  std::size_t bytes;
  double seconds;
  while (std::fscanf(in, "%zu %lf", &bytes, &seconds) == 2) rows.push_back({p, bytes, seconds});
  std::fclose(in);
  for (pid_t pid : children) waitpid(pid, nullptr, 0);
  return rows;
}

void write_json(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "[\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out << "  {\"peers\": " << r.peers << ", \"bytes\": " << r.bytes << ", \"seconds\": " << r.seconds
        << ", \"algbw_gbps\": " << r.algbw() << ", \"busbw_gbps\": " << r.busbw() << "}"
        << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  out << "]\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Config config = parse_args(argc, argv);
    std::vector<Row> all;
    std::printf("%5s %12s %12s %11s %11s\n", "peers", "bytes", "seconds", "algbw_gbps", "busbw_gbps");
    for (int p : config.peers) {
      for (const Row& r : run_peers(p, config)) {
        std::printf("%5d %12zu %12.6f %11.3f %11.3f\n", r.peers, r.bytes, r.seconds, r.algbw(), r.busbw());
        std::fflush(stdout);
        all.push_back(r);
      }
    }
    if (!config.json.empty()) write_json(config.json, all);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_allreduce: %s\n", e.what());
    return 1;
  }
}
