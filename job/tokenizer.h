#pragma once
// A text job's subword tokenizer (data.tokenizer = "sentencepiece"): the SentencePiece model
// at data.tokenizer_model, trained on the job's training split (every file's training part,
// before any split across peers) with data.vocab_size tokens of data.tokenizer_type when
// the file is missing (`starling tokenizer train` trains it again).
#include "job/config.h"
#include "learners/data/text_corpus.h"
#include "learners/data/tokenizer.h"

#include <optional>
#include <string>
#include <vector>

namespace starling::job {

/// The model at data.tokenizer_model; a file that is no SentencePiece model, or holds
/// another number of tokens than data.vocab_size, is a ConfigError naming the key.
Tokenizer read_tokenizer(const DataOptions& data);

/// Trains the config's tokenizer on the training parts of `text` (a corpus of bytes) and
/// writes it to data.tokenizer_model, logging its progress; a vocabulary the text cannot
/// fill is a ConfigError naming data.vocab_size's place.
void train_job_tokenizer(const Config& config, const TextCorpus& text);

/// The config's tokenizer, trained first (train_job_tokenizer) when its file is missing.
/// A file of another vocabulary than data.vocab_size is a ConfigError naming the key.
Tokenizer job_tokenizer(const Config& config, const TextCorpus& text);

/// The config's tokenizer, which must exist (`generate`, `export`): a ConfigError naming
/// data.tokenizer_model when it does not, or does not match data.vocab_size.
Tokenizer trained_tokenizer(const Config& config);

/// Where a safetensors export keeps its tokenizer: "m.safetensors" → "m.tokenizer.model".
std::string tokenizer_beside(const std::string& safetensors_path);

/// The tokenizer file of the model the config reads from `source` (job/trained_model.h):
/// empty for bytes; for a safetensors file with a tokenizer beside it, that one; else
/// data.tokenizer_model. model_tokenizer reads it (trained_tokenizer's errors).
std::string model_tokenizer_path(const Config& config, const std::string& source);
std::optional<Tokenizer> model_tokenizer(const Config& config, const std::string& source);

}  // namespace starling::job
