// Text split across peers by files or by Dirichlet shares of them (learners/data/text_partition.h).
#include "learners/data/text_partition.h"

#include <algorithm>
#include <numeric>

namespace starling {
namespace {

TextRange training_part(const TextCorpus& corpus, uint32_t file) {
  const TextFile& f = corpus.files()[file];
  return {f.begin, f.train_end(), file};
}

std::vector<TextPart> iid_parts(const TextCorpus& corpus, int peers) {
  TextPart all;
  for (uint32_t i = 0; i < corpus.files().size(); ++i) all.push_back(training_part(corpus, i));
  return std::vector<TextPart>(static_cast<std::size_t>(peers), all);
}

std::vector<TextPart> by_file_parts(const TextCorpus& corpus, int peers) {
  const auto files = static_cast<uint32_t>(corpus.files().size());
  if (files < static_cast<uint32_t>(peers))
    throw PartitionError("partition: by-file needs a file per peer; the text has " + std::to_string(files) + " for " +
                         std::to_string(peers) + " peers");
  std::vector<uint32_t> order(files);
  std::iota(order.begin(), order.end(), 0u);
  const auto& f = corpus.files();
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return f[a].train_bytes > f[b].train_bytes; });
  std::vector<TextPart> parts(static_cast<std::size_t>(peers));
  std::vector<uint64_t> load(parts.size(), 0);
  for (uint32_t file : order) {
    const auto peer = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    parts[peer].push_back(training_part(corpus, file));
    load[peer] += f[file].train_bytes;
  }
  for (TextPart& part : parts)
    std::sort(part.begin(), part.end(), [](const TextRange& a, const TextRange& b) { return a.begin < b.begin; });
  return parts;
}

std::vector<TextPart> dirichlet_text_parts(const TextCorpus& corpus, int peers, const PartitionSpec& spec) {
  const auto& files = corpus.files();
  const auto shares = dirichlet_shares(static_cast<int>(files.size()), peers, spec.alpha, spec.seed);
  std::vector<TextPart> parts(static_cast<std::size_t>(peers));
  for (uint32_t i = 0; i < files.size(); ++i) {
    const auto cuts = dirichlet_cuts(files[i].train_bytes, shares[i]);
    for (std::size_t j = 0; j < parts.size(); ++j)
      if (cuts[j + 1] > cuts[j]) parts[j].push_back({files[i].begin + cuts[j], files[i].begin + cuts[j + 1], i});
  }
  return parts;
}

}  // namespace

std::vector<TextPart> partition_text(const TextCorpus& corpus, int peers, const PartitionSpec& spec) {
  if (peers < 1) throw PartitionError("partition: needs at least one peer");
  if (corpus.files().empty()) throw PartitionError("partition: the text has no files");
  switch (spec.kind) {
    case PartitionKind::iid: return iid_parts(corpus, peers);
    case PartitionKind::by_file: return by_file_parts(corpus, peers);
    case PartitionKind::dirichlet: return dirichlet_text_parts(corpus, peers, spec);
    case PartitionKind::shards:
    case PartitionKind::by_class: break;
  }
  throw PartitionError(std::string("partition: \"") + partition_name(spec.kind) +
                       "\" needs labelled samples; text takes \"iid\", \"by-file\" or \"dirichlet\"");
}

uint64_t window_starts(const TextPart& part, int window) {
  uint64_t n = 0;
  const auto w = static_cast<uint64_t>(std::max(window, 1));
  for (const TextRange& r : part) n += r.end - r.begin >= w ? r.end - r.begin - w + 1 : 0;
  return n;
}

}  // namespace starling
