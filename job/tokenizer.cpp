#include "job/tokenizer.h"

#include "job/data_source.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

namespace starling::job {

Tokenizer read_tokenizer(const DataOptions& d) {
  try {
    Tokenizer t = Tokenizer::load(d.tokenizer_model);
    if (t.vocabulary() != d.vocab_size)
      throw ConfigError(d.tokenizer_model_at + ": " + d.tokenizer_model + " holds " + std::to_string(t.vocabulary()) +
                        " tokens, but data.vocab_size is " + std::to_string(d.vocab_size) +
                        " (set data.vocab_size to match, or remove the file to train a new one)");
    return t;
  } catch (const TokenizerError& e) {
    throw ConfigError(d.tokenizer_model_at + ": " + e.what());
  }
}

void train_job_tokenizer(const Config& config, const TextCorpus& text) {
  const DataOptions& d = config.data;
  if (d.tokenizer != "sentencepiece")
    throw ConfigError(config.source + ": data.tokenizer: expected \"sentencepiece\" to train a tokenizer, not \"" + d.tokenizer + "\"");
  std::vector<std::string_view> parts;
  uint64_t bytes = 0;
  for (const TextFile& f : text.files()) {
    parts.emplace_back(reinterpret_cast<const char*>(text.bytes() + f.begin), static_cast<std::size_t>(f.train_bytes));
    bytes += f.train_bytes;
  }
  spdlog::info("tokenizer: training a SentencePiece {} model of {} tokens on the {} bytes of the training split, into {}",
               d.tokenizer_type, d.vocab_size, bytes, d.tokenizer_model);
  const auto start = std::chrono::steady_clock::now();
  ensure_parent_dir(d.tokenizer_model);
  try {
    train_tokenizer(parts, {d.tokenizer_type, d.vocab_size, config.kernel_threads}, d.tokenizer_model);
  } catch (const TokenizerError& e) {
    throw ConfigError(d.tokenizer_model_at + ": data.vocab_size = " + std::to_string(d.vocab_size) + ": " + e.what());
  }
  spdlog::info("tokenizer: trained in {:.1f} s",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

Tokenizer job_tokenizer(const Config& config, const TextCorpus& text) {
  std::error_code ec;
  if (!std::filesystem::exists(config.data.tokenizer_model, ec)) train_job_tokenizer(config, text);
  return read_tokenizer(config.data);
}

Tokenizer trained_tokenizer(const Config& config) {
  std::error_code ec;
  if (!std::filesystem::exists(config.data.tokenizer_model, ec))
    throw ConfigError(config.data.tokenizer_model_at + ": " + config.data.tokenizer_model +
                      ": no such tokenizer model (train first: `starling tokenizer train`)");
  return read_tokenizer(config.data);
}

std::string tokenizer_beside(const std::string& safetensors_path) {
  const std::string suffix = ".safetensors";
  const bool named = safetensors_path.size() >= suffix.size() &&
                     safetensors_path.compare(safetensors_path.size() - suffix.size(), suffix.size(), suffix) == 0;
  return (named ? safetensors_path.substr(0, safetensors_path.size() - suffix.size()) : safetensors_path) + ".tokenizer.model";
}

std::string model_tokenizer_path(const Config& config, const std::string& source) {
  if (config.data.tokenizer != "sentencepiece") return "";
  std::error_code ec;
  const std::string beside = tokenizer_beside(source);
  return !source.empty() && std::filesystem::exists(beside, ec) ? beside : config.data.tokenizer_model;
}

std::optional<Tokenizer> model_tokenizer(const Config& config, const std::string& source) {
  const std::string path = model_tokenizer_path(config, source);
  if (path.empty()) return std::nullopt;
  if (path == config.data.tokenizer_model) return trained_tokenizer(config);
  DataOptions beside = config.data;
  beside.tokenizer_model = path;
  beside.tokenizer_model_at = source;
  return read_tokenizer(beside);
}

}  // namespace starling::job
