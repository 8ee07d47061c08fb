// Thread-local, growing, cache-line aligned scratch buffers for the native GEMM's packing.
#include "kernels/native/pack_buffer.h"

#include <memory>
#include <new>

namespace starling::kernels::native {
namespace {

constexpr std::align_val_t kAlign{64};

struct AlignedFree {
  void operator()(float* p) const { ::operator delete(p, kAlign); }
};

struct Scratch {
  std::unique_ptr<float, AlignedFree> data;
  std::size_t capacity = 0;
};

}  // namespace

float* pack_buffer(PackSlot slot, std::size_t floats) {
  thread_local Scratch scratch[2];
  Scratch& s = scratch[static_cast<int>(slot)];
  if (s.capacity < floats) {
    // Round up so slowly growing requests do not reallocate every call.
    const std::size_t want = (floats + 4095) / 4096 * 4096;
    s.data.reset(static_cast<float*>(::operator new(want * sizeof(float), kAlign)));
    s.capacity = want;
  }
  return s.data.get();
}

}  // namespace starling::kernels::native
