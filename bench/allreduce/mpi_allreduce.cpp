// mpi_allreduce: Open MPI's MPI_Allreduce (sum, fp32, in place) on the same sizes and
// repetition counts as bench_allreduce, median time on rank 0, same columns. Built by
// build_mpi.sh with mpicxx, run with mpirun -np P; one process per rank on loopback.
//
//   mpirun --allow-run-as-root --oversubscribe -np P mpi_allreduce [--min-bytes B]
//          [--max-bytes B] [--json FILE]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

int repetitions(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>((std::size_t{256} << 20) / bytes, 5, 200));
}

double time_size(std::size_t bytes, int rank) {
  std::vector<float> data(std::max<std::size_t>(1, bytes / sizeof(float)), 1.0f + rank);
  const int n = static_cast<int>(data.size());
  for (int i = 0; i < 3; ++i) MPI_Allreduce(MPI_IN_PLACE, data.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  std::vector<double> times;
  for (int i = 0, reps = repetitions(bytes); i < reps; ++i) {
    const double start = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, data.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    times.push_back(MPI_Wtime() - start);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  std::size_t min_bytes = 1024, max_bytes = std::size_t{64} << 20;
  std::string json;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--min-bytes") min_bytes = std::stoull(argv[i + 1]);
    else if (key == "--max-bytes") max_bytes = std::stoull(argv[i + 1]);
    else if (key == "--json") json = argv[i + 1];
  }
  FILE* out = rank == 0 && !json.empty() ? std::fopen(json.c_str(), "w") : nullptr;
  if (out) std::fprintf(out, "[\n");
  if (rank == 0) std::printf("%5s %12s %12s %11s %11s\n", "peers", "bytes", "seconds", "algbw_gbps", "busbw_gbps");
  for (std::size_t b = min_bytes; b <= max_bytes; b *= 4) {
    const double s = time_size(b, rank);
    const double algbw = b / s / 1e9, busbw = algbw * 2.0 * (p - 1) / p;
    if (rank != 0) continue;
    std::printf("%5d %12zu %12.6f %11.3f %11.3f\n", p, b, s, algbw, busbw);
    std::fflush(stdout);
    if (out)
      std::fprintf(out, "  {\"peers\": %d, \"bytes\": %zu, \"seconds\": %.9f, \"algbw_gbps\": %.6f, \"busbw_gbps\": %.6f}%s\n",
                   p, b, s, algbw, busbw, b * 4 <= max_bytes ? "," : "");
  }
  if (out) {
    std::fprintf(out, "]\n");
    std::fclose(out);
  }
  MPI_Finalize();
  return 0;
}
