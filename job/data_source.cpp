#include "job/data_source.h"

#include "job/tokenizer.h"
#include "learners/models/model_description.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>

namespace starling::job {

std::string data_cache_dir(const Config& config) {
  if (!config.run.data_dir.empty()) return config.run.data_dir;
  if (const char* env = std::getenv("STARLING_DATA_DIR"); env && *env) return env;
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/starling";
  return "data";
}

TextCorpus load_text_bytes(const Config& config) {
  const DataOptions& d = config.data;
  const Warn note = [](const std::string& message) { spdlog::info("{}", message); };
  try {
    return load_text_corpus(data_cache_dir(config), d.path, d.validation_fraction, note);
  } catch (const DataError& e) {
    throw ConfigError(d.path_at + ": " + e.what());
  }
}

TextCorpus load_text(const Config& config) {
  TextCorpus corpus = load_text_bytes(config);
  if (config.data.tokenizer == "sentencepiece") {
    const Tokenizer tokenizer = job_tokenizer(config, corpus);
    spdlog::info("text: encoding {} bytes with {}", corpus.size(), config.data.tokenizer_model);
    corpus = TextCorpus::tokenized(corpus, tokenizer);
    spdlog::info("text: {} bytes as {} tokens ({:.2f} bytes a token)", corpus.bytes_covered(0, corpus.size()),
                 corpus.size(), static_cast<double>(corpus.bytes_covered(0, corpus.size())) / static_cast<double>(corpus.size()));
  }
  try {
    check_windows(corpus, config.node.train.learner.model.context + 1);
  } catch (const DataError& e) {
    throw ConfigError(config.data.context_at + ": " + e.what());
  }
  return corpus;
}

TrainTest load_data(const Config& config) {
  const DataOptions& d = config.data;
  if (d.dataset == "synthetic")
    return make_synthetic(static_cast<uint32_t>(d.synthetic_train), static_cast<uint32_t>(d.synthetic_test),
                          config.run.seed);
  const Warn warn = [](const std::string& message) { spdlog::warn("{}", message); };
  if (d.dataset == "idx") return load_idx_set(data_cache_dir(config), d.path, warn);
  if (d.dataset == "cifar10") return load_cifar10(data_cache_dir(config), d.path, warn);
  return load_fashion_mnist(data_cache_dir(config), d.path, warn);
}

void fit_model_to_data(ModelSpec& model, const TrainTest& data, const std::string& config_file) {
  model.input = data.train.shape();
  model.classes = data.train.classes();
  check_model_fits(model, config_file);
}

std::string model_error_key(const ModelError& e, const ModelSpec& model) {
  if (!is_layer_list(model)) return "model.kind";
  if (e.layer() < 0) return "model." + e.key();
  return "model.layers[" + std::to_string(e.layer()) + "]." + e.key();
}

void check_model_fits(const ModelSpec& model, const std::string& file) {
  try {
    describe_model(model);
  } catch (const ModelError& e) {
    throw ConfigError(file + ": " + model_error_key(e, model) + ": " + e.what());
  }
}

void ensure_parent_dir(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

}  // namespace starling::job
