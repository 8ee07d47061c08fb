#pragma once
// Per-thread scratch for packed panels: reused across calls so the small shapes of training
// do not pay an allocation per GEMM.
#include <cstddef>

namespace starling::kernels::native {

enum class PackSlot { a = 0, b = 1 };

/// A 64-byte aligned buffer of at least `floats` floats owned by the calling thread, valid
/// until the next call with the same slot on this thread. Throws std::bad_alloc on failure.
float* pack_buffer(PackSlot slot, std::size_t floats);

}  // namespace starling::kernels::native
