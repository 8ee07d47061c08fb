#include "actors/learner_actor.h"

#include "learners/replicas/sma.h"

#include <caf/all.hpp>

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

namespace starling::actors {

using Clock = std::chrono::steady_clock;

namespace {

// One SMA round with the other learners. Its time, waiting included, is moved out of the
// compute time (which counts from `compute_start`): the node reports it as synchronization.
void average_with_group(const LearnerState& s, const StepOrder& order, Clock::time_point& compute_start) {
  const auto before = Clock::now();
  if (!order.group->round(s.index, s.learner->model().params())) {
    const std::string why = order.group->why();  // the failed learner's own error, when one failed
    throw std::runtime_error(why.empty() ? "learner " + std::to_string(s.index) + ": the SMA round was abandoned" : why);
  }
  compute_start += Clock::now() - before;
}

// An emulated slower CPU (NodeSpec::slowdown): the order's compute so far, stretched by
// sleeping (slowdown − 1) times as long.
void emulate_slowdown(double slowdown, Clock::time_point compute_start) {
  if (slowdown <= 1.0) return;
  std::this_thread::sleep_for((Clock::now() - compute_start) * (slowdown - 1.0));
}

}  // namespace

StepReport run_step(LearnerState& s, const StepOrder& order) {
  auto start = Clock::now();
  Model& model = s.learner->model();
  const std::size_t n = model.param_count();
  if (order.load) std::copy(order.z, order.z + n, model.params());
  if (order.reset_optimizer) s.learner->optimizer().reset();
  if (order.restart_at) s.learner->reposition(*order.restart_at);
  StepReport report;
  if (order.mode == IntraSync::average) {
    report.loss = s.learner->compute_gradient();
    report.vector = model.grads();
  } else {
    for (std::size_t i = 0; i < order.lrs.size(); ++i) {
      report.loss += s.learner->step(order.lrs[i]) / static_cast<double>(order.lrs.size());
      if (order.group && (order.iteration + static_cast<int64_t>(i) + 1) % order.sync_every == 0)
        average_with_group(s, order, start);
    }
    if (order.mode == IntraSync::none || order.sync) report.vector = model.params();
  }
  if (!std::isfinite(report.loss))
    throw std::runtime_error("learner " + std::to_string(s.index) + ": loss is not finite at step " +
                             std::to_string(s.learner->steps()) + " (learning rate too high?)");
  emulate_slowdown(s.slowdown, start);
  report.compute_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

caf::behavior learner_actor(caf::stateful_actor<LearnerState>* self, int index, LearnerSpec spec,
                           std::shared_ptr<const Task> task, double slowdown) {
  self->state.index = index;
  self->state.slowdown = slowdown;
  self->state.learner = std::make_unique<Learner>(spec, std::move(task));
  return {
      [=](const StepOrder& order) -> caf::result<StepReport> {
        try {
          return run_step(self->state, order);
        } catch (const std::exception& e) {
          if (order.group) order.group->abort(e.what());  // the other learners must not wait for this one
          return caf::make_error(caf::sec::runtime_error, std::string(e.what()));
        }
      },
      [=](const SmaSlice& slice) {
        sma::average(slice);
        return static_cast<int>(slice.lo);
      },
      [=](lend_atom) { return LearnerLoan{self->state.learner.get()}; },
  };
}

}  // namespace starling::actors
