#include "learners/optimizers/optimizer.h"

#include "kernels/ops.h"
#include "learners/optimizers/adamw_update.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace starling {

Sgd::Sgd(std::size_t n, const OptimizerSpec& spec)
    : momentum_(static_cast<float>(spec.momentum)),
      weight_decay_(static_cast<float>(spec.weight_decay)),
      nesterov_(spec.nesterov),
      velocity_(n) {}

void Sgd::step(float* __restrict w, const float* __restrict g, std::size_t n, float lr) {
  kernels::sgd_step(static_cast<long>(n), w, g, velocity_.data(), {lr, momentum_, weight_decay_, nesterov_});
}

bool Sgd::fused_step(const float* params, float lr, ParamUpdate& out) {
  out.params = params;
  out.velocity = velocity_.data();
  out.sgd = {lr, momentum_, weight_decay_, nesterov_};
  return true;
}

void Sgd::reset() { std::fill(velocity_.begin(), velocity_.end(), 0.f); }

Adam::Adam(std::size_t n, const OptimizerSpec& spec)
    : AdamMoments(n),
      beta1_(static_cast<float>(spec.beta1)),
      beta2_(static_cast<float>(spec.beta2)),
      epsilon_(static_cast<float>(spec.epsilon)),
      weight_decay_(static_cast<float>(spec.weight_decay)) {}

void Adam::step(float* __restrict w, const float* __restrict g, std::size_t n, float lr) {
  ++t_;
  const float c1 = 1.f / (1.f - static_cast<float>(std::pow(beta1_, static_cast<double>(t_))));
  const float c2 = 1.f / (1.f - static_cast<float>(std::pow(beta2_, static_cast<double>(t_))));
  float* __restrict m = m_.data();
  float* __restrict v = v_.data();
  for (std::size_t i = 0; i < n; ++i) {
    const float gi = g[i] + weight_decay_ * w[i];
    m[i] = beta1_ * m[i] + (1.f - beta1_) * gi;
    v[i] = beta2_ * v[i] + (1.f - beta2_) * gi * gi;
    w[i] -= lr * (m[i] * c1) / (std::sqrt(v[i] * c2) + epsilon_);
  }
}

void AdamMoments::reset() {
  std::fill(m_.begin(), m_.end(), 0.f);
  std::fill(v_.begin(), v_.end(), 0.f);
  t_ = 0;
}

AlignedBuffer<float>* AdamMoments::state(int index) {
  if (index == 0) return &m_;
  if (index == 1) return &v_;
  return nullptr;
}

AdamW::AdamW(std::size_t n, const OptimizerSpec& spec, const std::vector<ParamSpan>& decayed)
    : AdamMoments(n),
      beta1_(static_cast<float>(spec.beta1)),
      beta2_(static_cast<float>(spec.beta2)),
      epsilon_(static_cast<float>(spec.epsilon)),
      weight_decay_(static_cast<float>(spec.weight_decay)),
      clip_norm_(static_cast<float>(spec.clip_norm)) {
  std::size_t at = 0;
  for (const ParamSpan& s : decayed) {
    if (s.offset < at || s.offset > n || s.count > n - s.offset)
      throw std::invalid_argument("adamw: the decayed spans must be ascending, disjoint and inside the arena");
    if (s.offset > at) segments_.push_back({at, s.offset - at, false});
    if (s.count > 0) segments_.push_back({s.offset, s.count, true});
    at = s.offset + s.count;
  }
  if (at < n) segments_.push_back({at, n - at, false});
}

void AdamW::step(float* w, const float* g, std::size_t n, float lr) {
  ++t_;
  grad_norm_ = std::sqrt(squared_norm(static_cast<long>(n), g));
  AdamWArgs a;
  a.lr = lr, a.beta1 = beta1_, a.beta2 = beta2_, a.epsilon = epsilon_;
  a.bias1 = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta1_), static_cast<double>(t_))));
  a.bias2 = static_cast<float>(1.0 / (1.0 - std::pow(static_cast<double>(beta2_), static_cast<double>(t_))));
  if (clip_norm_ > 0.f) a.grad_scale = static_cast<float>(std::min(1.0, clip_norm_ / (grad_norm_ + 1e-6)));
  for (const Segment& s : segments_) {
    if (s.offset >= n) break;
    a.decay = s.decay ? lr * weight_decay_ : 0.f;
    const auto count = static_cast<long>(std::min(s.count, n - s.offset));
    adamw_update(count, w + s.offset, g + s.offset, m_.data() + s.offset, v_.data() + s.offset, a);
  }
}

void Optimizer::save(SectionWriter& out) {
  int buffers = 0;
  while (state(buffers)) ++buffers;
  out.put<int32_t>(buffers);
  for (int i = 0; i < buffers; ++i) out.floats(state(i)->data(), state(i)->size());
  out.put<int64_t>(step_count());
}

void Optimizer::restore(SectionReader& in) {
  int buffers = 0;
  while (state(buffers)) ++buffers;
  const auto saved = in.get<int32_t>();
  if (saved != buffers)
    throw CheckpointError("section '" + in.name() + "': " + std::to_string(saved) + " optimizer state buffers where " +
                          std::to_string(buffers) + " were expected (another optimizer?)");
  for (int i = 0; i < buffers; ++i) in.floats(state(i)->data(), state(i)->size());
  set_step_count(in.get<int64_t>());
}

std::unique_ptr<Optimizer> make_optimizer(std::size_t n, const OptimizerSpec& spec, const std::vector<ParamSpan>& matrices) {
  if (spec.kind == "sgd") return std::make_unique<Sgd>(n, spec);
  if (spec.kind == "adam") return std::make_unique<Adam>(n, spec);
  if (spec.kind == "adamw") return std::make_unique<AdamW>(n, spec, matrices);
  throw std::invalid_argument("optimizer: unknown kind '" + spec.kind + "' (expected sgd, adam or adamw)");
}

}  // namespace starling
