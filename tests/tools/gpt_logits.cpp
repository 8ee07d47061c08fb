// gpt_logits CONFIG WEIGHTS TOKENS OUT: the logits Starling's language model of CONFIG, with
// WEIGHTS (a checkpoint or a .safetensors file, job/trained_model.h), gives for TOKENS (a
// text file of whitespace-separated ids, whole windows of the model's context), written to
// OUT as little-endian float32 [windows × context × vocabulary]. The safetensors test
// compares them with PyTorch's.
#include "cli/config.h"
#include "job/trained_model.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: gpt_logits CONFIG WEIGHTS TOKENS OUT\n";
    return 2;
  }
  try {
    const starling::cli::Config config = starling::cli::load_config(argv[1]);
    auto model = starling::job::load_trained_model(config, argv[2]);
    std::vector<float> tokens;
    std::ifstream in(argv[3]);
    for (int id; in >> id;) tokens.push_back(static_cast<float>(id));
    const int context = model->spec().context, vocab = model->spec().classes;
    if (tokens.empty() || tokens.size() % static_cast<std::size_t>(context) != 0) {
      std::cerr << "gpt_logits: " << tokens.size() << " tokens are not whole windows of " << context << "\n";
      return 2;
    }
    const int windows = static_cast<int>(tokens.size() / static_cast<std::size_t>(context));
    model->set_mode(false);
    const float* logits = model->forward(config.node.train.learner.backend, windows, tokens.data());
    std::FILE* out = std::fopen(argv[4], "wb");
    const std::size_t count = tokens.size() * static_cast<std::size_t>(vocab);
    if (!out || std::fwrite(logits, sizeof(float), count, out) != count || std::fclose(out) != 0) {
      std::cerr << "gpt_logits: cannot write " << argv[4] << "\n";
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "gpt_logits: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
