#pragma once
// Training a language model (data.dataset = "text"): the GPT preset with one learner per
// node (learners/text_trainer.h), alone (`starling train`) or as a peer of a job (`starling
// peer`, `starling launch`, in process or not) whose exchange mixes the model
// (cli/text_mixer.h). Validation loss and bits per byte take accuracy's place in the metrics
// CSV, the summary JSON and the log lines.
#include "cli/config.h"
#include "cli/train_command.h"

#include <functional>
#include <string>

namespace starling::cli {

/// The columns of a text run's `<out_dir>/<name>.metrics.csv`, one row per validation.
inline constexpr const char* kTextMetricsColumns =
    "step,epoch,wall_seconds,samples,tokens,train_loss,val_loss,val_bpb,tokens_per_second,bytes_sent,bytes_received,"
    "compute_seconds,exchange_seconds";

/// Trains the peer with this id of an in-process job (select_peer), on data read once for all
/// of them; the exit code.
using PeerTraining = std::function<int(uint32_t id, const std::string& summary, const PeerOutput* quiet)>;

/// Trains a validated text config, one node or one selected peer, loading the text itself;
/// the exit code (2 for a config error found in the data). `quiet` as for train_on.
int run_text_job(const Config& config, const std::string& summary, const PeerOutput* quiet = nullptr);

/// Reads the text and splits it across the peers once, for every peer of an in-process
/// job; throws ConfigError.
PeerTraining text_peers_training(const Config& config);

}  // namespace starling::cli
