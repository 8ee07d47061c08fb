#include "learners/replicas/history_section.h"

namespace starling {
namespace {

void put_point(SectionWriter& out, const EvalPoint& p) {
  out.put(p.step).put(p.epoch).put(p.wall_seconds).put(p.train_loss).put(p.test_accuracy).put(p.test_loss);
  out.put(p.samples_per_second).put(p.samples).put(p.compute_seconds).put(p.exchange_seconds).put(p.wait_seconds);
  out.put(p.bytes_sent).put(p.bytes_received);
  put_optional(out, p.consensus_distance);
  put_optional(out, p.staleness);
}

EvalPoint get_point(SectionReader& in) {
  EvalPoint p;
  p.step = in.get<int64_t>(), p.epoch = in.get<double>(), p.wall_seconds = in.get<double>();
  p.train_loss = in.get<double>(), p.test_accuracy = in.get<double>(), p.test_loss = in.get<double>();
  p.samples_per_second = in.get<double>(), p.samples = in.get<int64_t>(), p.compute_seconds = in.get<double>();
  p.exchange_seconds = in.get<double>(), p.wait_seconds = in.get<double>();
  p.bytes_sent = in.get<uint64_t>(), p.bytes_received = in.get<uint64_t>();
  p.consensus_distance = get_optional(in);
  p.staleness = get_optional(in);
  return p;
}

}  // namespace

void put_optional(SectionWriter& out, const std::optional<double>& v) {
  out.put<uint8_t>(v ? 1 : 0).put<double>(v.value_or(0.0));
}

std::optional<double> get_optional(SectionReader& in) {
  const bool has = in.get<uint8_t>() != 0;
  const double v = in.get<double>();
  return has ? std::optional<double>(v) : std::nullopt;
}

void put_history(SectionWriter& out, const std::vector<EvalPoint>& history) {
  out.put<uint64_t>(history.size());
  for (const auto& p : history) put_point(out, p);
}

std::vector<EvalPoint> get_history(SectionReader& in) {
  const uint64_t count = in.get<uint64_t>();
  std::vector<EvalPoint> history;
  // Each point takes at least its 13 fixed fields; a count beyond the data is malformed,
  // and reading it point by point says so without reserving it.
  for (uint64_t i = 0; i < count; ++i) history.push_back(get_point(in));
  return history;
}

}  // namespace starling
