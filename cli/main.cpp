// The `starling` executable: subcommands over the library. Exit codes: 0 success,
// 1 failure while running, 2 bad command line or configuration.
#include "cli/train_command.h"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("starling"));
  spdlog::set_pattern("[%H:%M:%S.%e] %^%l%$ %v");

  CLI::App app{"Starling: decentralized peer-to-peer training of neural networks"};
  app.require_subcommand(1);

  starling::cli::TrainOptions train;
  auto* train_cmd = app.add_subcommand("train", "Train on one node (one process) from a TOML config");
  train_cmd->add_option("-c,--config", train.config, "Run configuration (TOML)")->required();
  train_cmd->add_option("--set", train.overrides, "Override a config key: section.key=value (repeatable)");
  train_cmd->add_option("--summary", train.summary, "Write the summary JSON here (default <out_dir>/<name>.summary.json)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (train_cmd->parsed()) return starling::cli::run_train(train);
  return 2;
}
