#include "learners/data/partition.h"

#include "learners/data/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace starling {
namespace {

using Parts = std::vector<std::vector<uint32_t>>;

// Tags that give each use of the partition seed a stream of its own.
constexpr uint64_t kSharesStream = 1, kClassOrderStream = 2, kShardDealStream = 3, kExtraShardStream = 4;

// Our own draws throughout (as learners/data/sampler.cpp): std::gamma_distribution and
// std::shuffle differ between standard libraries, and a partition must not.
double uniform_open(std::mt19937_64& rng) { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53; }

double standard_normal(std::mt19937_64& rng) {
  const double u = uniform_open(rng), v = uniform_open(rng);
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
}

// log of a Gamma(a, 1) draw, a >= 1: Marsaglia and Tsang (2000).
double log_gamma_at_least_one(double a, std::mt19937_64& rng) {
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = standard_normal(rng), v = std::pow(1.0 + c * x, 3);
    if (v <= 0) continue;
    if (std::log(uniform_open(rng)) < 0.5 * x * x + d - d * v + d * std::log(v)) return std::log(d * v);
  }
}

// In logs because for a small a the draw G(a+1)·U^(1/a) underflows a double; clamping a at
// 1e-300 keeps log(U)/a finite (the shares are one-hot long before that).
double log_gamma(double a, std::mt19937_64& rng) {
  if (a >= 1.0) return log_gamma_at_least_one(a, rng);
  return log_gamma_at_least_one(a + 1.0, rng) + std::log(uniform_open(rng)) / std::max(a, 1e-300);
}

// Normalised gammas are a Dirichlet draw; subtracting the largest log keeps one share > 0.
std::vector<double> dirichlet_draw(int peers, double alpha, std::mt19937_64& rng) {
  std::vector<double> logs(static_cast<std::size_t>(peers));
  for (double& l : logs) l = log_gamma(alpha, rng);
  const double top = *std::max_element(logs.begin(), logs.end());
  double sum = 0.0;
  for (double& l : logs) sum += (l = std::exp(l - top));
  for (double& l : logs) l /= sum;
  return logs;
}

void shuffle(std::vector<uint32_t>& v, std::mt19937_64& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng() % i]);
}

void check_inputs(const std::vector<uint8_t>& labels, int classes, int peers) {
  if (peers < 1) throw PartitionError("partition: needs at least one peer");
  if (classes < 1 || classes > 256) throw PartitionError("partition: classes must be in [1, 256]");
  if (labels.size() > std::numeric_limits<uint32_t>::max()) throw PartitionError("partition: more than 2^32 - 1 samples");
  for (uint8_t l : labels)
    if (l >= classes) throw PartitionError("partition: label " + std::to_string(l) + " outside [0, " + std::to_string(classes) + ")");
}

// Every class's indices, ascending.
Parts indices_by_class(const std::vector<uint8_t>& labels, int classes) {
  Parts by_class(static_cast<std::size_t>(classes));
  for (uint32_t i = 0; i < labels.size(); ++i) by_class[labels[i]].push_back(i);
  return by_class;
}

// Pieces of near-equal size, the first n mod pieces one larger.
std::vector<std::size_t> even_sizes(std::size_t n, std::size_t pieces) {
  std::vector<std::size_t> sizes(pieces, n / pieces);
  for (std::size_t i = 0; i < n % pieces; ++i) ++sizes[i];
  return sizes;
}

// A class's members in a seeded order of its own, so which samples a peer gets is random.
void shuffle_class(std::vector<uint32_t>& members, uint64_t seed, std::size_t c) {
  std::mt19937_64 rng(mix_seed(mix_seed(seed, kClassOrderStream), c));
  shuffle(members, rng);
}

void append(std::vector<uint32_t>& to, const std::vector<uint32_t>& from, std::size_t begin, std::size_t end) {
  to.insert(to.end(), from.begin() + static_cast<std::ptrdiff_t>(begin), from.begin() + static_cast<std::ptrdiff_t>(end));
}

Parts dirichlet_parts(const std::vector<uint8_t>& labels, int classes, int peers, const PartitionSpec& spec) {
  const auto shares = dirichlet_shares(classes, peers, spec.alpha, spec.seed);
  Parts by_class = indices_by_class(labels, classes), parts(static_cast<std::size_t>(peers));
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    shuffle_class(by_class[c], spec.seed, c);
    const auto cuts = dirichlet_cuts(by_class[c].size(), shares[c]);
    for (std::size_t j = 0; j < parts.size(); ++j) append(parts[j], by_class[c], cuts[j], cuts[j + 1]);
  }
  return parts;
}

// How many shards each class gets: an even split of `total` over the classes that have
// samples, the extra ones to classes in a seeded order.
std::vector<std::size_t> shards_per_class(const Parts& by_class, std::size_t total, std::size_t k, uint64_t seed) {
  std::vector<uint32_t> present;
  for (uint32_t c = 0; c < by_class.size(); ++c)
    if (!by_class[c].empty()) present.push_back(c);
  if (present.empty()) throw PartitionError("partition: no samples");
  if (total < present.size())
    throw PartitionError("partition: " + std::to_string(total) + " single-class shards (peers × classes_per_peer) cannot cover the " +
                         std::to_string(present.size()) + " classes; expected classes_per_peer of at least " +
                         std::to_string((present.size() + total / k - 1) / (total / k)));
  std::mt19937_64 rng(mix_seed(seed, kExtraShardStream));
  shuffle(present, rng);
  std::vector<std::size_t> count(by_class.size(), 0);
  for (std::size_t i = 0; i < present.size(); ++i) count[present[i]] = total / present.size() + (i < total % present.size() ? 1 : 0);
  return count;
}

Parts shard_parts(const std::vector<uint8_t>& labels, int classes, int peers, const PartitionSpec& spec) {
  const std::size_t k = static_cast<std::size_t>(spec.classes_per_peer), total = k * static_cast<std::size_t>(peers);
  Parts by_class = indices_by_class(labels, classes), shards;
  const auto counts = shards_per_class(by_class, total, k, spec.seed);
  for (std::size_t c = 0; c < by_class.size(); ++c) {
    shuffle_class(by_class[c], spec.seed, c);
    std::size_t at = 0;
    for (std::size_t size : even_sizes(by_class[c].size(), counts[c])) {
      shards.emplace_back();
      append(shards.back(), by_class[c], at, at + size);
      at += size;
    }
  }
  std::vector<uint32_t> deal(total);
  std::iota(deal.begin(), deal.end(), 0u);
  std::mt19937_64 rng(mix_seed(spec.seed, kShardDealStream));
  shuffle(deal, rng);
  Parts parts(static_cast<std::size_t>(peers));
  for (std::size_t s = 0; s < total; ++s) append(parts[s / k], shards[deal[s]], 0, shards[deal[s]].size());
  return parts;
}

Parts by_class_parts(const std::vector<uint8_t>& labels, int classes, int peers) {
  std::vector<uint32_t> sorted;
  sorted.reserve(labels.size());
  for (const auto& members : indices_by_class(labels, classes)) sorted.insert(sorted.end(), members.begin(), members.end());
  Parts parts;
  std::size_t at = 0;
  for (std::size_t size : even_sizes(sorted.size(), static_cast<std::size_t>(peers))) {
    parts.emplace_back();
    append(parts.back(), sorted, at, at + size);
    at += size;
  }
  return parts;
}

}  // namespace

PartitionKind parse_partition(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kPartitionNames); ++i)
    if (name == kPartitionNames[i]) return static_cast<PartitionKind>(i);
  throw PartitionError("partition: unknown kind \"" + name + "\" (expected iid, dirichlet, shards or by-class)");
}

const char* partition_name(PartitionKind kind) { return kPartitionNames[static_cast<int>(kind)]; }

uint64_t partition_seed(uint64_t run_seed) { return mix_seed(run_seed, 0x9a27171e0ull); }

std::vector<std::vector<double>> dirichlet_shares(int classes, int peers, double alpha, uint64_t seed) {
  if (!(alpha > 0) || !std::isfinite(alpha)) throw PartitionError("partition: alpha must be positive and finite");
  if (peers < 1 || classes < 1) throw PartitionError("partition: needs at least one peer and one class");
  std::mt19937_64 rng(mix_seed(seed, kSharesStream));
  std::vector<std::vector<double>> shares;
  for (int c = 0; c < classes; ++c) shares.push_back(dirichlet_draw(peers, alpha, rng));
  return shares;
}

std::vector<std::vector<uint32_t>> partition(const std::vector<uint8_t>& labels, int classes, int peers,
                                             const PartitionSpec& spec) {
  check_inputs(labels, classes, peers);
  Parts parts;
  switch (spec.kind) {
    case PartitionKind::iid: throw PartitionError("partition: iid has no fixed parts (the sampler deals every epoch)");
    case PartitionKind::dirichlet: parts = dirichlet_parts(labels, classes, peers, spec); break;
    case PartitionKind::shards:
      if (spec.classes_per_peer < 1 || spec.classes_per_peer > classes)
        throw PartitionError("partition: expected classes_per_peer in [1, " + std::to_string(classes) + "] (the classes), got " +
                             std::to_string(spec.classes_per_peer));
      parts = shard_parts(labels, classes, peers, spec);
      break;
    case PartitionKind::by_class: parts = by_class_parts(labels, classes, peers); break;
    case PartitionKind::by_file: throw PartitionError("partition: by-file splits text by its files; an image set has none");
  }
  for (auto& part : parts) std::sort(part.begin(), part.end());
  return parts;
}

std::vector<std::size_t> dirichlet_cuts(std::size_t n, const std::vector<double>& shares) {
  std::vector<std::size_t> cuts{0};
  double cumulative = 0.0;
  for (std::size_t j = 0; j + 1 < shares.size(); ++j) {
    cumulative += shares[j];
    const auto cut = static_cast<std::size_t>(std::floor(static_cast<double>(n) * cumulative));
    cuts.push_back(std::clamp(cut, cuts.back(), n));
  }
  cuts.push_back(n);
  return cuts;
}

std::vector<int64_t> label_counts(const std::vector<uint8_t>& labels, int classes, const std::vector<uint32_t>& indices) {
  std::vector<int64_t> counts(static_cast<std::size_t>(std::max(classes, 0)), 0);
  for (uint32_t i : indices) {
    if (i >= labels.size() || labels[i] >= classes) throw PartitionError("label_counts: index or label out of range");
    ++counts[labels[i]];
  }
  return counts;
}

}  // namespace starling
