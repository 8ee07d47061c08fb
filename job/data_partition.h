#pragma once
// The configured partition of the training set across the peers (learners/data/partition.h),
// checked as part of the config: a partition that the dataset's classes rule out, or one
// that leaves a peer fewer samples than it has learners, is a ConfigError naming the key
// (data.partition, data.alpha or data.classes_per_peer) and where it was set, so the CLI
// exits 2 before anything trains.
#include "job/config.h"
#include "learners/data/dataset.h"
#include "learners/data/text_partition.h"

#include <cstdint>
#include <vector>

namespace starling::job {

/// Every peer's index list, in [[peer]] order (one peer when the exchange is off); empty for
/// data.partition = "iid", which deals every epoch afresh. Throws ConfigError.
std::vector<std::vector<uint32_t>> partition_peers(const Config& config, const Dataset& train);

/// The text's split (learners/data/text_partition.h) over the same peers, every part checked to
/// offer a window of model.context + 1 bytes. Throws ConfigError naming the key.
std::vector<TextPart> partition_text_peers(const Config& config, const TextCorpus& corpus);

/// exchange.topology = "d-cliques" chooses its cliques from every peer's label histogram,
/// which every peer computes alike from the seed: gives the exchange spec the histograms of
/// `parts` (none for iid) and resolves clique_size 0 to the dataset's classes. Under a split
/// by class ("shards", "by-class") a clique that lacks a class is a ConfigError at
/// exchange.clique_size naming the clique's peers and the classes. A no-op for other topologies.
void give_topology_histograms(Config& config, const Dataset& train, const std::vector<std::vector<uint32_t>>& parts);

/// Gives config.node.part this peer's (node.exchange.rank's) list; leaves it null for iid.
/// Throws ConfigError.
void assign_partition(Config& config, const Dataset& train);
/// The same from every peer's lists, already computed (and given to the topology) once for
/// all the peers of a process.
void assign_part(Config& config, const std::vector<std::vector<uint32_t>>& parts);

}  // namespace starling::job
