#include "actors/node_state.h"

namespace starling::actors {

Optimizer& shared_optimizer(NodeState& s) {
  if (!s.optimizer) s.optimizer = make_optimizer(s.central->param_count(), s.spec.train.learner.optimizer, s.central->matrix_spans());
  return *s.optimizer;
}

}  // namespace starling::actors
