#pragma once
// What `starling simulate` prints and writes: the measurements and assumptions in a header,
// a table with one row per peer count, and the same as JSON (for scripts/plot_scaling.py).
#include "job/json.h"
#include "simulator/scaling_model.h"

#include <string>
#include <vector>

namespace starling::cli {

struct SimulationReport {
  std::string run, config;
  simulator::Workload work;
  simulator::Measured measured;
  simulator::Cluster cluster;  // peers of the last row
  std::string straggler_text;
  int this_machine_cores = 1;
  std::vector<simulator::Prediction> rows;
};

/// The header and the table, for stdout.
std::string report_text(const SimulationReport& report);

job::JsonObject report_json(const SimulationReport& report);

}  // namespace starling::cli
