#pragma once
// The subcommands' exit codes from what their work threw: 0 done, 1 failed while running,
// 2 bad configuration (a ConfigError, also one found only once the data is read, or a
// checkpoint of another run to resume from).
#include "job/config.h"
#include "learners/checkpoints/checkpoint.h"

#include <spdlog/spdlog.h>

#include <exception>

namespace starling::job {

/// Runs `body` (returning an exit code); a ConfigError or CheckpointMismatch is logged and
/// gives 2, any other exception is logged and gives 1.
template <typename Body>
int exit_code_of(Body&& body) {
  try {
    return body();
  } catch (const ConfigError& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const CheckpointMismatch& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}

}  // namespace starling::job
