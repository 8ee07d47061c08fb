// The record of tested ISA paths (platform/isa_record.h).
#include "platform/isa_record.h"

namespace starling::platform {

const std::vector<IsaRecord>& isa_records() {
#if defined(__x86_64__)
  constexpr std::string_view kZen5 = "2026-11-28, AMD EPYC family 26 model 2 (Zen 5), KVM guest";
  static const std::vector<IsaRecord> records{{Isa::scalar, kZen5}, {Isa::avx2, kZen5}, {Isa::avx512, kZen5}};
#elif defined(__aarch64__)
  constexpr std::string_view kQemu = "2026-11-28, qemu-aarch64 7.2 emulating arm64 on x86-64 (no arm64 hardware)";
  static const std::vector<IsaRecord> records{{Isa::scalar, kQemu}, {Isa::neon, kQemu}};
#else
  static const std::vector<IsaRecord> records{{Isa::scalar, "never: no test has run on this architecture"}};
#endif
  return records;
}

}  // namespace starling::platform
