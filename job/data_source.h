#pragma once
// Where a run's data comes from: a published set (cached, packed) or the synthetic set.
#include "job/config.h"
#include "learners/data/dataset_formats.h"
#include "learners/data/text_corpus.h"
#include "learners/models/model.h"

#include <string>

namespace starling::job {

/// The packed-dataset cache: run.data_dir, else $STARLING_DATA_DIR, else ~/.cache/starling.
std::string data_cache_dir(const Config& config);

/// Loads the configured image set; throws DataError with a message a user can act on.
TrainTest load_data(const Config& config);

/// The configured text (data.dataset = "text") from the packed cache, as bytes; what is
/// skipped is logged. A missing or empty path is a ConfigError naming where data.path was set.
TextCorpus load_text_bytes(const Config& config);

/// The configured text as the model reads it: bytes, or with data.tokenizer =
/// "sentencepiece" the job's tokens (job/tokenizer.h, training the tokenizer when its
/// model is missing), checked to hold windows of model.context + 1 tokens. A short file is a
/// ConfigError naming where model.context was set.
TextCorpus load_text(const Config& config);

/// Gives the model the data set's input shape and class count; a described model that does
/// not fit them is a ConfigError naming `config_file`.
void fit_model_to_data(ModelSpec& model, const TrainTest& data, const std::string& config_file);

/// The config key a ModelError of `model` names: model.kind for a preset that does not fit
/// its data, model.<key> or model.layers[i].<key> for a layer list.
std::string model_error_key(const ModelError& e, const ModelSpec& model);

/// Refuses a described model that the data set turns out not to fit (for sets whose shape
/// is only known once read): a ConfigError naming `file` and the key.
void check_model_fits(const ModelSpec& model, const std::string& file);

/// Creates the directory that will hold `path`; throws std::runtime_error.
void ensure_parent_dir(const std::string& path);

}  // namespace starling::job
