#pragma once
// The results of an experiment as files: summary.json (one entry per variant, repeats
// averaged), report.md (the comparison table, the machine, the configs, the plots) and the
// same table as text for the terminal.
#include "cli/experiment_config.h"

#include <string>
#include <vector>

namespace starling::cli {

struct RunOutcome {
  int repeat = 0;
  bool ok = false;
  std::string summary;  // the run's summary JSON text (empty when it failed)
  std::string dir;      // its folder, with log.txt and per-peer files
};

struct VariantOutcome {
  const Variant* variant = nullptr;
  std::vector<RunOutcome> runs;
};

/// While run `index` of `count` (variant `variant`) trains with its monitor on
/// (monitor.metrics_port): DIR/report.md says so and links its live page, until write_report
/// replaces it. Nothing when the variant's monitor is off.
void write_running_report(const ExperimentSpec& spec, const Variant& variant, int index, int count, const std::string& dir);

/// Writes DIR/summary.json and DIR/report.md (linking `plots`, file names in DIR); returns
/// the comparison table in Markdown.
std::string write_report(const ExperimentSpec& spec, const std::vector<VariantOutcome>& outcomes,
                         const std::string& dir, const std::vector<std::string>& plots);

}  // namespace starling::cli
