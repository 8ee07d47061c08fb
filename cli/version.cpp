// `starling --version` (cli/version.h).
#include "cli/version.h"

#include <sstream>

#include "cli/build_info.h"
#include "kernels/gemm.h"
#include "platform/cpu_features.h"
#include "platform/isa_record.h"

namespace starling::cli {

std::string version_text() {
  std::ostringstream out;
  out << "starling " << STARLING_VERSION << " (commit " << STARLING_COMMIT << ")\n";
  const auto active = platform::active_isa();
  const auto detected = platform::detected_isa();
  out << "isa: " << platform::isa_name(active);
  if (active != detected) out << " (forced by STARLING_ISA; this CPU has " << platform::isa_name(detected) << ")";
  out << "\nisa paths tested (docs/platforms.md):";
  for (const platform::IsaRecord& record : platform::isa_records())
    out << "\n  " << platform::isa_name(record.isa) << ": " << record.tested;
  if (platform::has_sve()) out << "\nsve: this CPU has it; no kernel uses it yet (neon runs)";
  out << "\nbackends:";
  for (const auto backend : {kernels::Backend::native, kernels::Backend::onednn})
    if (kernels::backend_available(backend))
      out << ' ' << kernels::backend_name(backend) << " (" << kernels::backend_isa(backend) << ')';
  out << "\ncompiler: ";
#if defined(__clang__)
  out << "clang " << __clang_major__ << '.' << __clang_minor__ << '.' << __clang_patchlevel__;
#elif defined(__GNUC__)
  out << "gcc " << __GNUC__ << '.' << __GNUC_MINOR__ << '.' << __GNUC_PATCHLEVEL__;
#endif
  out << ", C++" << __cplusplus / 100 % 100;
  return out.str();
}

}  // namespace starling::cli
