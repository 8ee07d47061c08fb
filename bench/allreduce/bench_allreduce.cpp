// bench_allreduce: Starling's ring all-reduce (mean) among p processes on 127.0.0.1, for
// p in --peers and message sizes from --min-bytes to --max-bytes (×4 steps). The parent
// forks one child per rank before any ZeroMQ context exists; each binds a port the OS picks
// and the parent hands each its right neighbour's endpoint (bench_ranks.h), so no port is
// guessed. Rank 0 times each run and reports the median over repetitions through a pipe.
// Columns follow nccl-tests: algbw = bytes / seconds, busbw = algbw · 2(p−1)/p. --isa caps
// the vectorized paths (as STARLING_ISA does); the ISA and CRC-32C path run go to stderr
// and to each JSON row.
//
//   bench_allreduce [--peers 2,4] [--min-bytes 1024] [--max-bytes 67108864]
//                   [--segment-bytes 1048576] [--socket-buffer BYTES] [--io-threads 1]
//                   [--isa scalar|avx2|avx512] [--json FILE]      (--help lists them)
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

#include "bench/allreduce/bench_ranks.h"
#include "gossip/algorithms/allreduce_ring.h"
#include "gossip/transport/transport.h"
#include "gossip/transport/transport_context.h"
#include "platform/cpu_features.h"
#include "protocols/crc32c.h"

namespace {

using namespace starling::gossip;

struct Config {
  std::vector<int> peers{2, 4};
  std::size_t min_bytes = 1024;
  std::size_t max_bytes = std::size_t{64} << 20;
  std::size_t segment_bytes = AllreduceOptions{}.segment_bytes;
  int socket_buffer_bytes = 0;
  int io_threads = 1;
  std::string isa;  // empty: STARLING_ISA or the CPU's best
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
  app.add_option("--isa", c.isa, "Cap the vectorized paths at this ISA (as STARLING_ISA does)")
      ->check(CLI::IsMember({"scalar", "avx2", "avx512"}));
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

// One rank of the ring, in its own process; rank 0 writes "bytes seconds" lines.
int run_rank(int rank, int p, const Config& c, starling::bench::RankLink& link) {
  const std::vector<std::size_t> sizes = sizes_of(c);
  TransportContext context(c.io_threads);
  TransportOptions o;
  o.self = static_cast<PeerId>(rank);
  o.bind_endpoint = "tcp://127.0.0.1:*";  // the OS picks a free port
  o.accept = {static_cast<PeerId>((rank + p - 1) % p)};
  o.socket_buffer_bytes = c.socket_buffer_bytes;
  Transport t(context, o);
  t.connect(static_cast<PeerId>((rank + 1) % p), link.exchange(rank, t.endpoint()));
  std::vector<PeerId> ring;
  for (int r = 0; r < p; ++r) ring.push_back(static_cast<PeerId>(r));
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double seconds = time_size(t, ring, sizes[i], c.segment_bytes, static_cast<std::uint64_t>(i) << 32);
    if (rank == 0) dprintf(link.result_fd(), "%zu %.9f\n", sizes[i], seconds);
  }
  return 0;
}

std::vector<Row> run_peers(int p, const Config& c) {
  std::vector<Row> rows;
  starling::bench::run_ranks(
      p, [&](int rank, starling::bench::RankLink& link) { return run_rank(rank, p, c, link); },
      [&](const std::string& line) {
        std::size_t bytes;
        double seconds;
        if (std::sscanf(line.c_str(), "%zu %lf", &bytes, &seconds) == 2) rows.push_back({p, bytes, seconds});
      });
  return rows;
}

// What the vectorized paths run at: the ISA level and the CRC-32C implementation.
std::string isa_in_use() {
  return std::string(starling::platform::isa_name(starling::platform::active_isa())) + " (crc32c " +
         starling::protocols::crc32c_active() + ")";
}

void write_json(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "[\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out << "  {\"peers\": " << r.peers << ", \"bytes\": " << r.bytes << ", \"seconds\": " << r.seconds
        << ", \"algbw_gbps\": " << r.algbw() << ", \"busbw_gbps\": " << r.busbw() << ", \"isa\": \""
        << isa_in_use() << "\"}"
        << (i + 1 < rows.size() ? ",\n" : "\n");
  }
  out << "]\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Config config = parse_args(argc, argv);
    starling::platform::Isa cap;
    if (starling::platform::parse_isa(config.isa, cap)) starling::platform::force_isa(cap);  // the ranks inherit it
    std::fprintf(stderr, "starling isa: %s\n", isa_in_use().c_str());
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
