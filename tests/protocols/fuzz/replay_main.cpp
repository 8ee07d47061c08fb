// Plain-main driver for the fuzz targets (the g++ build has no libFuzzer): replays every
// file of a seed corpus, then a bounded number of mutated and random inputs, on every ISA
// path this CPU has. Usage: fuzz_replay_<target> CORPUS_DIR [ITERATIONS]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <vector>

#include "platform/cpu_features.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

using Bytes = std::vector<std::uint8_t>;

std::vector<Bytes> load_corpus(const char* dir) {
  std::vector<Bytes> corpus;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    corpus.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return corpus;
}

// One libFuzzer-like mutation: flip, overwrite, insert, erase, truncate or splice.
Bytes mutate(const Bytes& seed, const std::vector<Bytes>& corpus, std::mt19937_64& rng) {
  Bytes b = seed;
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = b.empty() ? 0 : rng() % b.size();
    switch (rng() % 6) {
      case 0: if (!b.empty()) b[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8)); break;
      case 1: if (!b.empty()) b[at] = static_cast<std::uint8_t>(rng()); break;
      case 2: b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng())); break;
      case 3: if (!b.empty()) b.erase(b.begin() + static_cast<std::ptrdiff_t>(at)); break;
      case 4: b.resize(at); break;
      default: {
        const Bytes& other = corpus[rng() % corpus.size()];
        b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), other.begin(), other.end());
      }
    }
  }
  return b;
}

Bytes random_bytes(std::mt19937_64& rng) {
  Bytes b(rng() % 256);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [ITERATIONS]\n", argv[0]);
    return 2;
  }
  const long iterations = argc > 2 ? std::atol(argv[2]) : 20000;
  std::vector<Bytes> corpus = load_corpus(argv[1]);
  if (corpus.empty()) corpus.emplace_back();
  namespace k = starling::platform;
  const k::Isa best = k::detected_isa();
  std::mt19937_64 rng(0xF022u);
  for (int path = 0; path <= static_cast<int>(best); ++path) {
    k::force_isa(static_cast<k::Isa>(path));
    for (const Bytes& seed : corpus) LLVMFuzzerTestOneInput(seed.data(), seed.size());
    for (long i = 0; i < iterations / (static_cast<int>(best) + 1); ++i) {
      const Bytes input = (i % 8 == 7) ? random_bytes(rng) : mutate(corpus[rng() % corpus.size()], corpus, rng);
      LLVMFuzzerTestOneInput(input.data(), input.size());
    }
  }
  std::printf("%zu corpus files and %ld generated inputs replayed without a finding\n", corpus.size(), iterations);
  return 0;
}
