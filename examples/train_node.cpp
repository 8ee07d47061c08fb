// Example: a node of several learner actors trained through the library API, without the CLI.
// Builds a node spec by hand (model, optimizer, SMA across 2 learners), trains on Fashion-MNIST
// when Debian's dataset-fashion-mnist is installed (else on the synthetic set), and prints the
// evaluation after each epoch.
//
//   build/examples/train_node [epochs]
#include "actors/node.h"
#include "learners/data/dataset_formats.h"
#include "learners/tasks/image_task.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {

// Prints one line per evaluation; progress per step is ignored.
class PrintEvaluations final : public starling::TrainObserver {
 public:
  void on_eval(const starling::EvalPoint& p) override {
    std::printf("epoch %5.2f  train loss %.4f  test accuracy %.4f  %.0f samples/s\n", p.epoch, p.train_loss,
                p.test_accuracy, p.samples_per_second);
  }
};

starling::TrainTest load_data() {
  try {
    return starling::load_fashion_mnist("/tmp/starling-example-cache", "", [](const std::string&) {});
  } catch (const starling::DataError& e) {
    std::printf("%s\nusing the synthetic dataset instead\n", e.what());
    return starling::make_synthetic(6000, 1000, 1);
  }
}

// The one optional argument, epochs: a positive number; anything else (--help too) gets the usage.
bool parse_epochs(int argc, char** argv, double& epochs) {
  if (argc < 2) return true;
  char* end = nullptr;
  epochs = std::strtod(argv[1], &end);
  return argc == 2 && end != argv[1] && *end == '\0' && epochs > 0;
}

}  // namespace

int main(int argc, char** argv) {
  double epochs = 2.0;
  if (!parse_epochs(argc, argv, epochs)) {
    const bool help = argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h");
    std::fprintf(help ? stdout : stderr, "usage: %s [epochs]   (a positive number; default 2)\n", argv[0]);
    return help ? 0 : 2;
  }
  starling::actors::NodeSpec spec;
  spec.train.learner.model.kind = "mlp";
  spec.train.learner.model.hidden = {256, 128};
  spec.train.learner.optimizer.momentum = 0.9;
  spec.train.learner.optimizer.nesterov = true;
  spec.train.learner.batch = 16;
  spec.train.schedule.kind = "cosine";
  spec.train.schedule.lr = 0.05;
  spec.train.schedule.warmup_steps = 200;
  spec.train.epochs = epochs;
  spec.learners = 2;  // two small-batch replicas kept together by SMA
  spec.intra_sync = starling::actors::IntraSync::sma;
  try {
    const starling::TrainTest data = load_data();
    PrintEvaluations observer;
    const starling::actors::NodeResult result = starling::actors::run_node(
        spec, std::make_shared<const starling::ImageTask>(data.train, data.test), observer);
    std::printf("done: %d learners, %lld samples in %.1f s, model checksum %s\n", result.learners,
                static_cast<long long>(result.train.samples), result.train.wall_seconds,
                result.train.model_checksum.c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
