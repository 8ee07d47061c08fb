#pragma once
// How the training set is split across peers. partition() cuts the sample indices
// [0, labels.size()) into one index list per peer; the lists are disjoint, cover every
// sample (no remainder is dropped) and are a pure function of (labels, peers, spec). The
// learners inside a peer then split its list IID among themselves (learners/data/sampler.h).
//
//   iid        no fixed parts: the sampler deals the whole set afresh each epoch (learner i of
//              L on peer r takes every (peers·L)-th position of a seeded permutation from
//              r·L + i), as before partitions existed; partition() refuses it.
//   dirichlet  per class, shares p ~ Dir(alpha, ..., alpha) over the peers; the class's
//              n_c samples (in a seeded order) are cut at floor(n_c · (p_0 + ... + p_j)), so
//              each peer gets floor-rounded cumulative shares and the last takes the rest.
//   shards     peers · classes_per_peer single-class shards: each class gets an even number
//              of them (the extra ones go to classes in a seeded order), its samples (seeded
//              order) are cut into near-equal pieces (the first n_c mod s_c one larger), and a
//              seeded deal gives each peer classes_per_peer shards, so at most that many classes.
//   by-class   the indices sorted by (label, index) and cut into peers contiguous parts, the
//              first labels.size() mod peers one larger; no randomness.
//   by-file    text only (learners/data/text_partition.h): each peer its own files; partition()
//              refuses it.
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace starling {

/// Input that no partition can satisfy: a bad alpha or classes_per_peer, a label outside
/// [0, classes), no peers, or more classes than peers · classes_per_peer shards can hold.
class PartitionError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class PartitionKind { iid, dirichlet, shards, by_class, by_file };
/// The config's name of each kind, indexed by PartitionKind.
inline constexpr const char* kPartitionNames[] = {"iid", "dirichlet", "shards", "by-class", "by-file"};
static_assert(std::size(kPartitionNames) == static_cast<std::size_t>(PartitionKind::by_file) + 1,
              "one name per PartitionKind");

/// A name of kPartitionNames; throws PartitionError on anything else.
PartitionKind parse_partition(const std::string& name);
const char* partition_name(PartitionKind kind);

struct PartitionSpec {
  PartitionKind kind = PartitionKind::iid;
  double alpha = 0.5;        // dirichlet: concentration, > 0 and finite
  int classes_per_peer = 2;  // shards: in [1, classes]
  uint64_t seed = 1;         // already mixed for the partition (partition_seed)
};

/// The partition's own seed from run.seed, decorrelated from the model's and the sampler's.
uint64_t partition_seed(uint64_t run_seed);

/// One ascending index list per peer for dirichlet, shards and by-class (see the header
/// comment); a list may be empty. Throws PartitionError, also for iid (no fixed parts).
std::vector<std::vector<uint32_t>> partition(const std::vector<uint8_t>& labels, int classes, int peers,
                                             const PartitionSpec& spec);

/// The Dirichlet shares that partition() draws for `dirichlet`: row c is class c's
/// p ~ Dir(alpha) over the peers (each row sums to 1). Throws PartitionError.
std::vector<std::vector<double>> dirichlet_shares(int classes, int peers, double alpha, uint64_t seed);

/// Where a Dirichlet draw cuts n ordered items among the peers: peer j gets [cuts[j],
/// cuts[j+1]) with cuts[j+1] = floor(n·(p_0 + ... + p_j)) and the last peer up to n, so each
/// count is within one of n·p_j.
std::vector<std::size_t> dirichlet_cuts(std::size_t n, const std::vector<double>& shares);

/// Samples per class among `indices`; throws PartitionError on an index or label out of range.
std::vector<int64_t> label_counts(const std::vector<uint8_t>& labels, int classes, const std::vector<uint32_t>& indices);

}  // namespace starling
