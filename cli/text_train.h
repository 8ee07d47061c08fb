#pragma once
// `starling train` on text (data.dataset = "text"): the GPT preset on one node and one
// learner (learners/text_trainer.h), with validation loss and bits per byte in place of
// accuracy in the metrics CSV, the summary JSON and the log lines.
#include "cli/config.h"

#include <string>

namespace starling::cli {

/// The columns of a text run's `<out_dir>/<name>.metrics.csv`, one row per validation.
inline constexpr const char* kTextMetricsColumns =
    "step,epoch,wall_seconds,samples,tokens,train_loss,val_loss,val_bpb,tokens_per_second";

/// Trains a validated text config; the exit code (2 for a config error found in the data).
int run_text_job(const Config& config, const std::string& summary);

}  // namespace starling::cli
