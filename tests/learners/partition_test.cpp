// The partitions of the training set across peers (learners/data/partition.h) and the sampler
// drawing a peer's learners' batches from its part: disjoint, covering, following their
// definitions, seeded; iid exactly as the shard formula before partitions existed.
#define BOOST_TEST_MODULE learners_partition
#include <boost/test/unit_test.hpp>

#include "learners/data/partition.h"
#include "learners/data/sampler.h"
#include "learners/tasks/image_task.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>

using namespace starling;
using Parts = std::vector<std::vector<uint32_t>>;

namespace {

// Imbalanced classes in a scrambled order, so nothing passes by the labels being tidy.
std::vector<uint8_t> test_labels(int classes, uint32_t n, uint64_t seed = 3) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> labels(n);
  // Class c has weight classes - c.
  for (auto& l : labels) {
    uint64_t r = rng() % (static_cast<uint64_t>(classes) * (classes + 1) / 2);
    int c = 0;
    while (r >= static_cast<uint64_t>(classes - c)) r -= static_cast<uint64_t>(classes - c), ++c;
    l = static_cast<uint8_t>(c);
  }
  return labels;
}

PartitionSpec spec_of(PartitionKind kind, double alpha = 0.5, int k = 2, uint64_t seed = 11) {
  PartitionSpec s;
  s.kind = kind, s.alpha = alpha, s.classes_per_peer = k, s.seed = seed;
  return s;
}

void check_disjoint_cover(const Parts& parts, std::size_t n) {
  std::vector<int> hits(n, 0);
  for (const auto& part : parts) {
    BOOST_TEST(std::is_sorted(part.begin(), part.end()));
    for (uint32_t i : part) {
      BOOST_REQUIRE(i < n);
      ++hits[i];
    }
  }
  BOOST_TEST(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
}

std::set<int> classes_in(const std::vector<uint8_t>& labels, const std::vector<uint32_t>& part) {
  std::set<int> out;
  for (uint32_t i : part) out.insert(labels[i]);
  return out;
}

// learners/data/sampler.cpp's epoch() before pools existed, kept here as the reference for iid.
std::vector<uint32_t> previous_shard(uint32_t count, uint64_t seed, int shard, int shards, int64_t epoch) {
  std::vector<uint32_t> perm(count);
  std::iota(perm.begin(), perm.end(), 0u);
  std::mt19937_64 rng(mix_seed(seed, static_cast<uint64_t>(epoch)));
  for (uint32_t i = count - 1; i > 0; --i) std::swap(perm[i], perm[rng() % (uint64_t{i} + 1)]);
  std::vector<uint32_t> out;
  for (uint32_t p = static_cast<uint32_t>(shard); p < count; p += static_cast<uint32_t>(shards)) out.push_back(perm[p]);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_partition_is_disjoint_and_covers_the_set) {
  const auto labels = test_labels(10, 5003);
  for (PartitionKind kind : {PartitionKind::dirichlet, PartitionKind::shards, PartitionKind::by_class})
    for (int peers : {1, 3, 7}) {
      BOOST_TEST_CONTEXT(partition_name(kind) << " over " << peers << " peers") {
        const int k = (10 + peers - 1) / peers;  // the fewest classes per peer that cover all 10
        const auto parts = partition(labels, 10, peers, spec_of(kind, 0.3, k));
        BOOST_TEST(parts.size() == static_cast<std::size_t>(peers));
        check_disjoint_cover(parts, labels.size());
      }
    }
}

BOOST_AUTO_TEST_CASE(dirichlet_counts_are_the_drawn_shares_within_rounding) {
  const auto labels = test_labels(6, 4000);
  const auto spec = spec_of(PartitionKind::dirichlet, 0.7);
  const auto parts = partition(labels, 6, 5, spec);
  const auto shares = dirichlet_shares(6, 5, 0.7, spec.seed);
  const auto total = label_counts(labels, 6, std::vector<uint32_t>([&] {
                                    std::vector<uint32_t> all(labels.size());
                                    std::iota(all.begin(), all.end(), 0u);
                                    return all;
                                  }()));
  for (int j = 0; j < 5; ++j) {
    const auto counts = label_counts(labels, 6, parts[static_cast<std::size_t>(j)]);
    for (int c = 0; c < 6; ++c) {
      const double expected = shares[static_cast<std::size_t>(c)][static_cast<std::size_t>(j)] * static_cast<double>(total[static_cast<std::size_t>(c)]);
      BOOST_TEST(std::abs(static_cast<double>(counts[static_cast<std::size_t>(c)]) - expected) < 1.0,
                 "peer " << j << " class " << c << ": " << counts[static_cast<std::size_t>(c)] << " vs " << expected);
    }
  }
}

BOOST_AUTO_TEST_CASE(dirichlet_shares_sum_to_one_and_follow_the_concentration) {
  for (double alpha : {1e-3, 0.1, 1.0, 5.0}) {
    for (const auto& row : dirichlet_shares(20, 4, alpha, 5)) {
      BOOST_TEST(std::accumulate(row.begin(), row.end(), 0.0) == 1.0, boost::test_tools::tolerance(1e-12));
      BOOST_TEST(std::all_of(row.begin(), row.end(), [](double p) { return p >= 0 && std::isfinite(p); }));
    }
  }
  for (const auto& row : dirichlet_shares(50, 4, 1e4, 5))
    for (double p : row) BOOST_TEST(std::abs(p - 0.25) < 0.02);
  int concentrated = 0;
  for (const auto& row : dirichlet_shares(50, 4, 0.01, 5)) concentrated += *std::max_element(row.begin(), row.end()) > 0.99;
  BOOST_TEST(concentrated >= 45);
}

// A share of Dir(alpha, ..., alpha) over n is Beta(alpha, (n-1) alpha): mean 1/n, variance
// (1/n)(1 - 1/n) / (n alpha + 1). Checked on 4000 draws with a fixed seed, both gamma paths.
BOOST_AUTO_TEST_CASE(dirichlet_shares_have_the_dirichlet_moments) {
  for (double alpha : {0.1, 0.5, 3.0}) {
    const int n = 4;
    const auto shares = dirichlet_shares(4000, n, alpha, 17);
    double sum = 0, sq = 0;
    for (const auto& row : shares) sum += row[1], sq += row[1] * row[1];
    const double mean = sum / shares.size(), var = sq / shares.size() - mean * mean;
    const double expected_var = (1.0 / n) * (1 - 1.0 / n) / (n * alpha + 1);
    BOOST_TEST(std::abs(mean - 0.25) < 0.02, "alpha " << alpha << ": mean " << mean);
    BOOST_TEST(std::abs(var / expected_var - 1) < 0.1, "alpha " << alpha << ": variance " << var << " vs " << expected_var);
  }
}

BOOST_AUTO_TEST_CASE(dirichlet_with_large_alpha_is_near_uniform_and_tiny_alpha_concentrates) {
  const auto labels = test_labels(10, 20000);
  for (const auto& part : partition(labels, 10, 4, spec_of(PartitionKind::dirichlet, 1e4)))
    BOOST_TEST(std::abs(static_cast<double>(part.size()) / labels.size() - 0.25) < 0.01);
  int single_peer_classes = 0;
  const auto parts = partition(labels, 10, 4, spec_of(PartitionKind::dirichlet, 1e-3));
  for (int c = 0; c < 10; ++c) {
    int holders = 0;
    for (const auto& part : parts) holders += classes_in(labels, part).count(c) > 0;
    single_peer_classes += holders == 1;
  }
  BOOST_TEST(single_peer_classes >= 9);
}

BOOST_AUTO_TEST_CASE(shards_give_each_peer_at_most_k_classes) {
  const auto labels = test_labels(10, 6001);
  for (int k : {1, 2, 3, 10}) {
    const int peers = k == 1 ? 10 : 5;
    const auto parts = partition(labels, 10, peers, spec_of(PartitionKind::shards, 0.5, k));
    check_disjoint_cover(parts, labels.size());
    for (const auto& part : parts) {
      BOOST_TEST(!part.empty());
      BOOST_TEST(classes_in(labels, part).size() <= static_cast<std::size_t>(k));
    }
  }
  // One class per peer with as many peers as classes: each peer holds exactly one whole class.
  const auto parts = partition(labels, 10, 10, spec_of(PartitionKind::shards, 0.5, 1));
  std::set<int> seen;
  for (const auto& part : parts) seen.insert(*classes_in(labels, part).begin());
  BOOST_TEST(seen.size() == 10u);
}

BOOST_AUTO_TEST_CASE(shards_that_cannot_cover_the_classes_are_refused) {
  const auto labels = test_labels(10, 1000);
  BOOST_CHECK_THROW(partition(labels, 10, 4, spec_of(PartitionKind::shards, 0.5, 2)), PartitionError);  // 8 < 10
  BOOST_CHECK_THROW(partition(labels, 10, 4, spec_of(PartitionKind::shards, 0.5, 0)), PartitionError);
  BOOST_CHECK_THROW(partition(labels, 10, 4, spec_of(PartitionKind::shards, 0.5, 11)), PartitionError);
  BOOST_CHECK_NO_THROW(partition(labels, 10, 4, spec_of(PartitionKind::shards, 0.5, 3)));
}

BOOST_AUTO_TEST_CASE(by_class_is_the_label_sorted_order_cut_into_contiguous_parts) {
  const auto labels = test_labels(10, 1003);
  std::vector<uint32_t> sorted(labels.size());
  std::iota(sorted.begin(), sorted.end(), 0u);
  std::stable_sort(sorted.begin(), sorted.end(), [&](uint32_t a, uint32_t b) { return labels[a] < labels[b]; });
  const auto parts = partition(labels, 10, 4, spec_of(PartitionKind::by_class));
  std::size_t at = 0;
  for (std::size_t j = 0; j < parts.size(); ++j) {
    BOOST_TEST(parts[j].size() == 1003 / 4 + (j < 1003 % 4 ? 1u : 0u));  // the first n mod peers one larger
    std::vector<uint32_t> expected(sorted.begin() + static_cast<std::ptrdiff_t>(at),
                                   sorted.begin() + static_cast<std::ptrdiff_t>(at + parts[j].size()));
    std::sort(expected.begin(), expected.end());
    BOOST_TEST(parts[j] == expected, boost::test_tools::per_element());
    at += parts[j].size();
  }
  BOOST_TEST(parts == partition(labels, 10, 4, spec_of(PartitionKind::by_class, 0.5, 2, 999)));  // no randomness
}

BOOST_AUTO_TEST_CASE(same_seed_same_partition_other_seed_another) {
  const auto labels = test_labels(10, 3000);
  for (PartitionKind kind : {PartitionKind::dirichlet, PartitionKind::shards}) {
    BOOST_TEST_CONTEXT(partition_name(kind)) {
      const auto a = partition(labels, 10, 5, spec_of(kind, 0.5, 2, partition_seed(1)));
      BOOST_TEST(a == partition(labels, 10, 5, spec_of(kind, 0.5, 2, partition_seed(1))));
      BOOST_TEST(a != partition(labels, 10, 5, spec_of(kind, 0.5, 2, partition_seed(2))));
    }
  }
  BOOST_TEST(partition_seed(1) != mix_seed(1, 0x5a3d1e));  // not the sampler's seed
}

BOOST_AUTO_TEST_CASE(iid_sampler_is_the_previous_shard_formula) {
  for (int shards : {1, 3, 8})
    for (int shard = 0; shard < shards; ++shard)
      for (int64_t epoch : {0, 1, 7}) {
        Sampler s(1000, 42, shard, shards);
        BOOST_TEST(s.epoch(epoch) == previous_shard(1000, 42, shard, shards, epoch), boost::test_tools::per_element());
      }
  // Printed by the sampler before pools existed (commit 9c3b042): shard 3 of 8 of 1000, seed 42.
  Sampler s(1000, 42, 3, 8);
  const auto& e0 = s.epoch(0);
  BOOST_TEST(std::vector<uint32_t>(e0.begin(), e0.begin() + 8) == (std::vector<uint32_t>{88, 733, 949, 792, 908, 921, 638, 757}),
             boost::test_tools::per_element());
  BOOST_TEST(e0.back() == 725u);
  const auto& e5 = s.epoch(5);
  BOOST_TEST(std::vector<uint32_t>(e5.begin(), e5.begin() + 8) == (std::vector<uint32_t>{614, 767, 297, 985, 945, 13, 944, 213}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_peers_learners_split_its_part_iid) {
  const auto labels = test_labels(10, 2000);
  const auto part = partition(labels, 10, 3, spec_of(PartitionKind::dirichlet, 0.5))[1];
  std::multiset<uint32_t> seen;
  for (int learner = 0; learner < 3; ++learner) {
    Sampler s(part, 7, learner, 3);
    const auto& idx = s.epoch(2);
    BOOST_TEST(idx.size() == s.shard_size());
    seen.insert(idx.begin(), idx.end());
  }
  BOOST_TEST(std::vector<uint32_t>(seen.begin(), seen.end()) == part, boost::test_tools::per_element());
  Sampler a(part, 7), b(part, 7);
  BOOST_TEST(a.epoch(0) != b.epoch(1));
  BOOST_TEST(a.epoch(3) == b.epoch(3), boost::test_tools::per_element());
  BOOST_CHECK_THROW(Sampler(std::vector<uint32_t>{1, 2}, 7, 0, 3), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(bad_input_throws_a_partition_error) {
  const auto labels = test_labels(10, 500);
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (double alpha : {0.0, -1.0, nan, inf})
    BOOST_CHECK_THROW(partition(labels, 10, 4, spec_of(PartitionKind::dirichlet, alpha)), PartitionError);
  BOOST_CHECK_THROW(partition(labels, 10, 4, spec_of(PartitionKind::iid)), PartitionError);
  BOOST_CHECK_THROW(partition(labels, 10, 0, spec_of(PartitionKind::by_class)), PartitionError);
  BOOST_CHECK_THROW(partition(labels, 5, 4, spec_of(PartitionKind::by_class)), PartitionError);  // a label >= classes
  BOOST_CHECK_THROW(parse_partition("non-iid"), PartitionError);
  BOOST_CHECK_THROW(label_counts(labels, 10, {500}), PartitionError);
  for (auto kind : {PartitionKind::iid, PartitionKind::dirichlet, PartitionKind::shards, PartitionKind::by_class})
    BOOST_TEST((parse_partition(partition_name(kind)) == kind));
}

BOOST_AUTO_TEST_CASE(label_counts_count_per_class) {
  const std::vector<uint8_t> labels{2, 0, 2, 1, 2};
  BOOST_TEST(label_counts(labels, 4, {0, 2, 3}) == (std::vector<int64_t>{0, 1, 2, 0}), boost::test_tools::per_element());
}

// The learner's sampler: from the peer's part when it has one, else today's shard of the set.
BOOST_AUTO_TEST_CASE(a_learner_draws_from_its_peers_part) {
  const auto data = make_synthetic(300, 10, 4);
  LearnerSpec spec;
  spec.shard = 1, spec.shards = 2;
  auto whole = make_sampler(spec, data.train);
  BOOST_TEST(whole.epoch(0) == previous_shard(300, mix_seed(spec.seed, 0x5a3d1e), 1, 2, 0), boost::test_tools::per_element());
  spec.part = std::make_shared<const std::vector<uint32_t>>(std::vector<uint32_t>{3, 50, 51, 52, 299});
  auto part = make_sampler(spec, data.train);
  const auto& drawn = part.epoch(0);
  BOOST_TEST(drawn.size() == 2u);
  for (uint32_t i : drawn) BOOST_TEST(std::count(spec.part->begin(), spec.part->end(), i) == 1);
  spec.part = std::make_shared<const std::vector<uint32_t>>(std::vector<uint32_t>{3, 300});
  BOOST_CHECK_THROW(make_sampler(spec, data.train), std::invalid_argument);
}
