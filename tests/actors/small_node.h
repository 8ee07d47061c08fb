#pragma once
// A node small enough to train in well under a second (an MLP on 12×12 synthetic images of
// four classes), shared by the actor suites.
#include "actors/node.h"
#include "learners/tasks/image_task.h"

namespace starling::actors::testing {

inline NodeSpec small_spec(IntraSync mode, int learners) {
  NodeSpec spec;
  auto& t = spec.train;
  t.learner.model.kind = "mlp";
  t.learner.model.hidden = {32};
  t.learner.model.input = {12, 12, 1};
  t.learner.model.classes = 4;
  t.learner.batch = 16;
  t.learner.backend = kernels::Backend::native;
  t.learner.seed = 42;
  t.schedule.lr = 0.02;
  t.epochs = 2;
  t.eval_every = 1;
  spec.learners = learners;
  spec.intra_sync = mode;
  spec.threads = 2;
  return spec;
}

inline const TrainTest& data() {
  static const TrainTest d = make_synthetic(800, 200, 5, {12, 12, 1}, 4);
  return d;
}

inline std::shared_ptr<const Task> task() {
  static const auto t = std::make_shared<const ImageTask>(data().train, data().test);
  return t;
}

inline NodeResult run(const NodeSpec& spec) {
  TrainObserver quiet;
  return run_node(spec, task(), quiet);
}

}  // namespace starling::actors::testing
