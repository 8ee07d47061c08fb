#pragma once
// `starling experiment`: runs every variant of an experiment config one after another (each
// a real `starling launch`, `starling train` or PyTorch DDP run, with progress and an ETA for
// the whole experiment) and writes DIR/metrics.csv, DIR/summary.json, DIR/report.md and the
// plots of scripts/plot.py.
#include <string>

namespace starling::cli {

struct ExperimentOptions {
  std::string config;
  std::string out;         // the experiment's folder
  std::string executable;  // the starling binary that runs the variants
  std::string only;        // a glob: run only the variants it matches, and the baseline
};

/// 0 when every run finished, 1 when one failed or the user interrupted (the report covers
/// what finished), 2 on a bad experiment config or a missing prerequisite.
int run_experiment(const ExperimentOptions& options);

/// Where bench/ and scripts/ are: $STARLING_HOME, else the source tree it was built from.
std::string starling_home();

}  // namespace starling::cli
