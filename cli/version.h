#pragma once
// What `starling --version` prints, the facts a bug report needs: the version and commit,
// the instruction set the kernels use on this CPU, where each instruction set's paths last
// passed their tests, and the GEMM backends this build has.
#include <string>

namespace starling::cli {

std::string version_text();

}  // namespace starling::cli
