#pragma once
// The evaluation history and optional figures of a run as checkpoint section data, written
// field by field (a struct's padding would make equal states differ), so that a resumed run
// continues its records.
#include "learners/checkpoints/checkpoint.h"
#include "learners/replicas/trainer.h"

#include <optional>
#include <vector>

namespace starling {

void put_optional(SectionWriter& out, const std::optional<double>& v);
std::optional<double> get_optional(SectionReader& in);

void put_history(SectionWriter& out, const std::vector<EvalPoint>& history);
/// CheckpointError (from the reader) when the data is not a history.
std::vector<EvalPoint> get_history(SectionReader& in);

}  // namespace starling
