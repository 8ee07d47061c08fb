// Codec benchmark: single-thread encode and decode throughput (GB/s of fp32 input) and wire
// size of every codec row's samples (protocols/codec_row.h) on N(0, 1) data at 64K, 1M and
// 16M elements, with memcpy as the scale.
// The residual is reset before each timed encode, so sparse codecs run at their nominal
// density. Usage: bench_codecs [--quick] [--json FILE]; STARLING_ISA picks the SIMD path.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "platform/cpu_features.h"
#include "protocols/codec.h"
#include "protocols/codec_row.h"

using namespace starling::protocols;

namespace {

struct Row {
  std::string codec;
  std::size_t elements = 0;
  double density = -1.0;  // < 0: every entry sent
  double encode_gbps = 0.0, decode_gbps = 0.0;
  std::size_t wire_bytes = 0, dense_bytes = 0;
};

double seconds_of(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Median time of `reps` runs of `timed`, each preceded by an untimed `setup`; one untimed
// warm-up run first, so that page faults of fresh buffers are not measured.
double median_time(int reps, const std::function<void()>& setup, const std::function<void()>& timed) {
  setup();
  timed();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    setup();
    t.push_back(seconds_of(timed));
  }
  std::nth_element(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(t.size() / 2), t.end());
  return t[t.size() / 2];
}

int reps_for(std::size_t n, bool quick) {
  const int budget = quick ? (1 << 23) : (1 << 27);  // elements processed per measurement
  return std::clamp(static_cast<int>(budget / static_cast<long>(n)), quick ? 3 : 7, 200);
}

Row bench_memcpy(const std::vector<float>& values, bool quick) {
  const std::size_t n = values.size();
  std::vector<float> copy(n), back(n);
  const int reps = reps_for(n, quick);
  Row row{"memcpy", n};
  const double te = median_time(reps, [] {}, [&] { std::memcpy(copy.data(), values.data(), 4 * n); });
  const double td = median_time(reps, [] {}, [&] { std::memcpy(back.data(), copy.data(), 4 * n); });
  row.encode_gbps = 4.0 * n / te / 1e9;
  row.decode_gbps = 4.0 * n / td / 1e9;
  row.wire_bytes = row.dense_bytes = 4 * n;
  return row;
}

Row bench_codec(const CodecRow& codec_row, const CodecSample& sample, const std::vector<float>& values, bool quick) {
  const std::size_t n = values.size();
  auto made = make_codec(codec_row.id, sample.options());
  Codec& codec = **made;
  std::vector<float> residual(n), out(n);
  std::vector<std::uint8_t> payload;
  const int reps = reps_for(n, quick);
  auto reset = [&] { std::fill(residual.begin(), residual.end(), 0.0f); };
  const double te = median_time(reps, reset, [&] { (void)codec.encode(values, residual, payload); });
  const double td = median_time(reps, [] {}, [&] { (void)codec.decode(payload, Span<float>(out), Apply::assign); });
  Row row{std::string(sample.label), n};
  if (codec.last_sent() < n) row.density = static_cast<double>(codec.last_sent()) / static_cast<double>(n);
  row.encode_gbps = 4.0 * n / te / 1e9;
  row.decode_gbps = 4.0 * n / td / 1e9;
  row.wire_bytes = payload.size();
  row.dense_bytes = 4 * n;
  return row;
}

void print(const Row& r) {
  char density[16] = "-";
  if (r.density >= 0) std::snprintf(density, sizeof density, "%.4f", r.density);
  std::printf("%-16s %10zu %8s %10.2f %10.2f %12zu %8.1fx\n", r.codec.c_str(), r.elements, density, r.encode_gbps,
              r.decode_gbps, r.wire_bytes, static_cast<double>(r.dense_bytes) / static_cast<double>(r.wire_bytes));
  std::fflush(stdout);
}

void write_json(const char* path, const std::vector<Row>& rows) {
  FILE* f = std::fopen(path, "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path);
    return;
  }
  std::fprintf(f, "{\"benchmark\": \"codecs\", \"isa\": \"%s\", \"rows\": [\n",
               std::string(starling::platform::isa_name(starling::platform::active_isa())).c_str());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::fprintf(f, "  {\"codec\": \"%s\", \"elements\": %zu, \"density\": ", r.codec.c_str(), r.elements);
    if (r.density >= 0) std::fprintf(f, "%.6f", r.density);
    else std::fprintf(f, "null");
    std::fprintf(f, ", \"encode_gbps\": %.3f, \"decode_gbps\": %.3f, \"wire_bytes\": %zu, \"dense_bytes\": %zu}%s\n",
                 r.encode_gbps, r.decode_gbps, r.wire_bytes, r.dense_bytes, i + 1 < rows.size() ? "," : "");
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  const char* json = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) json = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--quick] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  std::printf("isa %s, single thread, GB/s of fp32 input\n",
              std::string(starling::platform::isa_name(starling::platform::active_isa())).c_str());
  std::printf("%-16s %10s %8s %10s %10s %12s %9s\n", "codec", "elements", "density", "enc GB/s", "dec GB/s",
              "wire bytes", "vs fp32");
  std::vector<Row> rows;
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (std::size_t n : {std::size_t{1} << 16, std::size_t{1} << 20, std::size_t{1} << 24}) {
    std::vector<float> values(n);
    for (float& x : values) x = dist(rng);
    rows.push_back(bench_memcpy(values, quick));
    print(rows.back());
    for (const CodecRow* codec_row : codec_rows())
      for (const CodecSample& sample : codec_row->samples) {
        rows.push_back(bench_codec(*codec_row, sample, values, quick));
        print(rows.back());
      }
  }
  if (json) write_json(json, rows);
  return 0;
}
