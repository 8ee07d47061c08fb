// AdamW's update and the gradient norm, per ISA (learners/optimizers/adamw_update.h). The bodies are
// plain loops that the compiler vectorizes for each target; this file is compiled with
// -fno-math-errno, without which GCC calls sqrtf per element instead of vectorizing it.
#include "learners/optimizers/adamw_update.h"

#include "platform/isa_dispatch.h"

#include <cmath>

namespace starling {
namespace {

using Update = void (*)(long, float*, const float*, float*, float*, const AdamWArgs&);
using Norm = double (*)(long, const float*);

inline __attribute__((always_inline)) void update_body(long n, float* __restrict w, const float* __restrict g,
                                                       float* __restrict m, float* __restrict v, const AdamWArgs& a) {
  const float b1 = a.beta1, b2 = a.beta2, c1 = a.bias1, c2 = a.bias2, eps = a.epsilon, lr = a.lr;
  const float keep = 1.f - a.decay, s = a.grad_scale, one_b1 = 1.f - b1, one_b2 = 1.f - b2;
  for (long i = 0; i < n; ++i) {
    const float gi = g[i] * s;
    const float mi = b1 * m[i] + one_b1 * gi;
    const float vi = b2 * v[i] + one_b2 * gi * gi;
    m[i] = mi, v[i] = vi;
    w[i] = w[i] * keep - lr * (mi * c1) / (std::sqrt(vi * c2) + eps);
  }
}

// Eight partial sums, so that the loop vectorizes without reassociating one sum.
inline __attribute__((always_inline)) double norm_body(long n, const float* __restrict g) {
  double part[8] = {};
  long i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) part[j] += static_cast<double>(g[i + j]) * g[i + j];
  double sum = 0.0;
  for (; i < n; ++i) sum += static_cast<double>(g[i]) * g[i];
  for (double p : part) sum += p;
  return sum;
}

void update_baseline(long n, float* w, const float* g, float* m, float* v, const AdamWArgs& a) { update_body(n, w, g, m, v, a); }
double norm_baseline(long n, const float* g) { return norm_body(n, g); }

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void update_avx2(long n, float* w, const float* g, float* m, float* v, const AdamWArgs& a) {
  update_body(n, w, g, m, v, a);
}
__attribute__((target("avx512f,avx512vl,avx2,fma"))) void update_avx512(long n, float* w, const float* g, float* m, float* v,
                                                                        const AdamWArgs& a) {
  update_body(n, w, g, m, v, a);
}

__attribute__((target("avx2,fma"))) double norm_avx2(long n, const float* g) { return norm_body(n, g); }
__attribute__((target("avx512f,avx512vl,avx2,fma"))) double norm_avx512(long n, const float* g) { return norm_body(n, g); }
#endif

// On AArch64 the baseline build is NEON's.
constexpr platform::IsaDispatch<Update> kUpdate{&update_baseline, STARLING_X86_64_ONLY(&update_avx2),
                                                STARLING_X86_64_ONLY(&update_avx512)};
constexpr platform::IsaDispatch<Norm> kNorm{&norm_baseline, STARLING_X86_64_ONLY(&norm_avx2),
                                            STARLING_X86_64_ONLY(&norm_avx512)};

}  // namespace

void adamw_update(long n, float* w, const float* g, float* m, float* v, const AdamWArgs& args) {
  kUpdate.get()(n, w, g, m, v, args);
}

double squared_norm(long n, const float* g) { return kNorm.get()(n, g); }

}  // namespace starling
