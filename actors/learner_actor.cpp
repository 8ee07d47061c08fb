#include "actors/learner_actor.h"

#include "learners/sma.h"

#include <caf/all.hpp>

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace starling::actors {

StepReport run_step(LearnerState& s, const StepOrder& order) {
  const auto start = std::chrono::steady_clock::now();
  Model& model = s.learner->model();
  const std::size_t n = model.param_count();
  if (order.load) std::copy(order.z, order.z + n, model.params());
  if (order.reset_optimizer) s.learner->optimizer().reset();
  StepReport report;
  if (order.mode == IntraSync::average) {
    report.loss = s.learner->compute_gradient();
    report.vector = model.grads();
  } else {
    for (const float lr : order.lrs) report.loss += s.learner->step(lr) / static_cast<double>(order.lrs.size());
    if (order.mode == IntraSync::none || order.sync) report.vector = model.params();
  }
  if (!std::isfinite(report.loss))
    throw std::runtime_error("learner " + std::to_string(s.index) + ": loss is not finite at step " +
                             std::to_string(s.learner->steps()) + " (learning rate too high?)");
  report.compute_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

caf::behavior learner_actor(caf::stateful_actor<LearnerState>* self, int index, LearnerSpec spec, Dataset train) {
  self->state.index = index;
  self->state.learner = std::make_unique<Learner>(spec, train);
  return {
      [=](const StepOrder& order) -> caf::result<StepReport> {
        try {
          return run_step(self->state, order);
        } catch (const std::exception& e) {
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
      },
      [=](const SmaSlice& slice) {
        sma::average_slice(slice.z, slice.z_prev, slice.replicas.data(), static_cast<int>(slice.replicas.size()),
                           slice.alpha, slice.momentum, slice.lo, slice.hi);
        return static_cast<int>(slice.lo);
      },
      [=](lend_atom) { return LearnerLoan{self->state.learner.get()}; },
  };
}

}  // namespace starling::actors
