// The `starling` executable: subcommands over the library. Exit codes: 0 success,
// 1 failure while running, 2 bad command line or configuration.
#include "cli/config_command.h"
#include "cli/experiment_command.h"
#include "cli/export_command.h"
#include "cli/invite_command.h"
#include "cli/tokenizer_command.h"
#include "cli/keygen_command.h"
#include "cli/json_log.h"
#include "cli/launch_command.h"
#include "cli/monitor_command.h"
#include "cli/generate_command.h"
#include "cli/model_command.h"
#include "cli/partition_command.h"
#include "cli/simulate_command.h"
#include "cli/train_command.h"
#include "cli/version.h"

#include <unistd.h>

#include <climits>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("starling"));
  spdlog::set_pattern("[%H:%M:%S.%e] %^%l%$ %v");

  CLI::App app{"Starling: decentralized peer-to-peer training of neural networks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", starling::cli::version_text,
                       "Print the version, commit, instruction set and backends, then exit");

  std::string log_format = "text";
  app.add_option("--log-format", log_format, "Log lines as text, or as one JSON object per line")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  starling::cli::TrainOptions train;
  auto* train_cmd = app.add_subcommand("train", "Train on one node (one process) from a TOML config");
  train_cmd->add_option("-c,--config", train.config, "Run configuration (TOML)")->required();
  train_cmd->add_option("--set", train.overrides, "Override a config key: section.key=value (repeatable)");
  train_cmd->add_option("--summary", train.summary, "Write the summary JSON here (default <out_dir>/<name>.summary.json)");
  train_cmd->add_flag("--resume", train.resume, "Continue from the newest valid checkpoint in run.checkpoint_dir");
  train_cmd->add_option("--metrics-port", train.metrics_port, "Serve /metrics and the live page on this port (monitor.metrics_port)")
      ->check(CLI::Range(1, 65535));

  starling::cli::TrainOptions peer;
  std::optional<uint32_t> peer_id;
  auto* peer_cmd = app.add_subcommand("peer", "Run one peer daemon of a multi-peer topology config");
  peer_cmd->add_option("-c,--config", peer.config, "Topology configuration (TOML)")->required();
  peer_cmd->add_option("--id", peer_id,
                       "Which [[peer]] to run (default: index STARLING_RANK, SLURM_PROCID or OMPI_COMM_WORLD_RANK)");
  peer_cmd->add_option("--set", peer.overrides, "Override a config key: section.key=value (repeatable)");
  peer_cmd->add_option("--summary", peer.summary, "Write this peer's summary JSON here");
  peer_cmd->add_flag("--resume", peer.resume, "Continue from this peer's newest valid checkpoint");
  peer_cmd->add_option("--metrics-port", peer.metrics_port,
                       "monitor.metrics_port: /metrics and the live page of peer index r on this port plus r")
      ->check(CLI::Range(1, 65535));
  auto* join_flag = peer_cmd->add_flag("--join", peer.join,
                     "Join the running job: take the model and position from its peers (also done when one is found running)");
  auto* listen = peer_cmd->add_option("--listen", peer.swarm.listen,
                                      "An open swarm (docs/swarm.md): bind here, HOST:PORT; alone, start the job as peer 0");
  auto* advertise = peer_cmd->add_option("--advertise", peer.swarm.advertise, "HOST:PORT the other peers dial (default: --listen)")->needs(listen);
  peer_cmd->add_flag("--behind-nat", peer.swarm.behind_nat,
                     "Nobody can dial this peer: it dials the others, and a reachable peer relays to it from peers behind NAT")
      ->needs(listen)->excludes(advertise);
  peer_cmd->add_option("--bootstrap", peer.swarm.bootstrap,
                       "HOST:PORT of a running swarm peer to join through (repeatable; tried in turn)")->needs(listen);
  peer_cmd->add_option("--invitation", peer.swarm.invitation, "The owner's invitation to this job (starling invite)")->needs(listen);
  listen->excludes("--id")->excludes(join_flag);
  peer_cmd->add_option("--fault", peer.fault,
                       "Fault injection for tests: lying-seeder flips one bit in every chunk of state this peer serves");

  starling::cli::InviteOptions invite;
  auto* invite_cmd = app.add_subcommand("invite", "The owner of a swarm: make the owner's key pair, or sign an invitation to a job");
  invite_cmd->add_flag("--new-owner-key", invite.new_owner_key, "Write a new Ed25519 key pair to -o (mode 0600)");
  invite_cmd->add_option("--key", invite.key, "The owner's key file");
  invite_cmd->add_option("--job", invite.job, "The job's config (TOML), with swarm.owner_key set");
  invite_cmd->add_option("--set", invite.overrides, "Override a config key of the job: section.key=value (repeatable)");
  invite_cmd->add_option("--expires", invite.expires_hours, "Hours the invitation holds (default: no expiry)");
  invite_cmd->add_option("-o,--out", invite.out, "File to write")->required();
  invite_cmd->add_flag("--force", invite.force, "Replace an existing file");

  starling::cli::LaunchOptions launch;
  auto* launch_cmd = app.add_subcommand("launch", "Run every peer of a topology config on this host, as processes");
  launch_cmd->add_option("-c,--config", launch.config, "Topology configuration (TOML)")->required();
  launch_cmd->add_option("--set", launch.overrides, "Override a config key for every peer (repeatable)");
  launch_cmd->add_option("--summary", launch.summary, "Write the aggregate summary JSON here");
  launch_cmd->add_flag("--netns", launch.netns,
                       "Run peer i in namespace starling-ns<i> at 10.77.0.(i+1) (made by scripts/netns.sh up N [RATE])");
  launch_cmd->add_flag("--resume", launch.resume, "Every peer continues from its newest valid checkpoint");
  launch_cmd->add_flag("--in-process", launch.in_process,
                       "Every peer a thread of this process (launch.in_process): hundreds of peers on one host");
  launch_cmd->add_option("--hold", launch.hold,
                         "Do not start this peer (repeatable); started later with `starling peer`, it joins the running job");

  starling::cli::ExperimentOptions experiment;
  auto* experiment_cmd = app.add_subcommand(
      "experiment", "Run every variant of an experiment config; write metrics.csv, summary.json, report.md and plots");
  experiment_cmd->add_option("-c,--config", experiment.config, "Experiment configuration (TOML)")->required();
  experiment_cmd->add_option("-o,--out", experiment.out, "Folder for the results")->required();
  experiment_cmd->add_option("--only", experiment.only, "Run only the variants whose names match this glob (and the baseline)");

  starling::cli::KeygenOptions keygen;
  auto* keygen_cmd = app.add_subcommand("keygen", "Write CURVE key pairs for the peers of a config (or one named pair)");
  keygen_cmd->add_option("-o,--out", keygen.out, "Folder for the key files")->required();
  keygen_cmd->add_option("-c,--config", keygen.config, "Topology config: one pair per [[peer]], named peer<ID>");
  keygen_cmd->add_option("--name", keygen.name, "Write one pair NAME.key / NAME.pub instead");
  keygen_cmd->add_flag("--force", keygen.force, "Replace existing key files");

  starling::cli::ModelOptions model;
  auto* model_cmd = app.add_subcommand("model", "Print the model a config trains (fitted to its data): a layer table, or JSON");
  model_cmd->add_option("-c,--config", model.config, "Run configuration (TOML)")->required();
  model_cmd->add_option("--set", model.overrides, "Override a config key: section.key=value (repeatable)");
  model_cmd->add_flag("--json", model.json, "Print the description the PyTorch references build their model from");
  model_cmd->add_flag("--layers", model.layers,
                      "Print the model as a [model] section with its [[model.layers]] list, which builds the same model")
      ->excludes("--json");

  starling::cli::GenerateOptions generate;
  auto* generate_cmd = app.add_subcommand("generate", "Print a sample from a trained language model (a checkpoint or a safetensors file)");
  generate_cmd->add_option("-c,--config", generate.config, "The config the model was trained with (TOML)")->required();
  generate_cmd->add_option("--set", generate.overrides, "Override a config key: section.key=value (repeatable)");
  generate_cmd->add_option("--checkpoint", generate.checkpoint, "Checkpoint or .safetensors file (default: the newest checkpoint in run.checkpoint_dir)");
  generate_cmd->add_option("--prompt", generate.prompt, "Text the sample continues (default: a newline)");
  generate_cmd->add_option("--bytes", generate.bytes, "Bytes to draw")->capture_default_str();
  generate_cmd->add_option("--temperature", generate.temperature, "Softmax temperature; 0 takes the most likely byte")
      ->capture_default_str();
  generate_cmd->add_option("--seed", generate.seed, "Seed of the draws")->capture_default_str();
  generate_cmd->add_option("--top-k", generate.top_k, "Draw among the k most likely bytes only; 0: all")->capture_default_str();
  generate_cmd->add_option("--top-p", generate.top_p, "Draw among the fewest most likely bytes whose probability reaches p, in (0, 1]")
      ->capture_default_str();
  generate_cmd->add_option("--stop", generate.stop, "End the sample where it produces this text (not printed)");

  starling::cli::ExportOptions export_options;
  auto* export_cmd = app.add_subcommand("export", "Write a trained language model as safetensors with nanoGPT's names");
  export_cmd->add_option("-c,--config", export_options.config, "The config the model was trained with (TOML)")->required();
  export_cmd->add_option("--set", export_options.overrides, "Override a config key: section.key=value (repeatable)");
  export_cmd->add_option("--checkpoint", export_options.checkpoint,
                         "Checkpoint or safetensors file (default: the newest checkpoint in run.checkpoint_dir)");
  export_cmd->add_option("--format", export_options.format, "Output format (safetensors)")->capture_default_str();
  export_cmd->add_option("-o,--out", export_options.out, "File to write")->required();

  starling::cli::TokenizerOptions tokenizer;
  auto* tokenizer_cmd = app.add_subcommand("tokenizer", "Subword tokenizers of language models (SentencePiece)");
  tokenizer_cmd->require_subcommand(1);
  auto* tokenizer_train_cmd = tokenizer_cmd->add_subcommand(
      "train", "Train the config's tokenizer (data.tokenizer_type, data.vocab_size) on its training split into data.tokenizer_model");
  tokenizer_train_cmd->add_option("-c,--config", tokenizer.config, "Run configuration (TOML)")->required();
  tokenizer_train_cmd->add_option("--set", tokenizer.overrides, "Override a config key: section.key=value (repeatable)");

  starling::cli::ConfigOptions config;
  auto* config_cmd = app.add_subcommand(
      "config", "Print a config with every key resolved (defaults, --set), or the schema of every key");
  auto* config_file = config_cmd->add_option("-c,--config", config.config, "Configuration (TOML)");
  config_cmd->add_option("--set", config.overrides, "Override a config key: section.key=value (repeatable)");
  config_cmd->add_flag("--schema", config.schema, "Print every key's type, default, allowed values and meaning instead")
      ->excludes(config_file);
  config_cmd->add_flag("--json", config.json, "As JSON (the resolved config is what the PyTorch references read)");

  starling::cli::SimulateOptions simulate;
  auto* simulate_cmd = app.add_subcommand(
      "simulate", "Predict samples/s, epoch time, speedup and bytes of a config's exchange at N peers");
  simulate_cmd->add_option("-c,--config", simulate.config, "Topology configuration (TOML)")->required();
  simulate_cmd->add_option("--set", simulate.overrides, "Override a config key: section.key=value (repeatable)");
  simulate_cmd->add_option("--peers", simulate.peers, "Peers: N, a list 1,2,4,8 or a range 1-1024 of powers of two (default: the config's)");
  simulate_cmd->add_option("--network", simulate.network, "RATE[:LATENCY[:BURST]] (10gbit, 1gbit:50us, 100mbit:1ms, 100mbit:50us:125kb) or loopback (measured)")
      ->capture_default_str();
  simulate_cmd->add_option("--straggler", simulate.straggler, "Per-step time factor: none, lognormal:SIGMA, bimodal:P:FACTOR")
      ->capture_default_str();
  simulate_cmd->add_option("--hosts", simulate.hosts, "Hosts the peers share (default: one per peer; one for loopback)");
  simulate_cmd->add_option("--cores-per-host", simulate.cores_per_host,
                           "Cores of each host (default: this machine's for loopback, else learners x kernel threads + 2)");
  simulate_cmd->add_option("--json", simulate.json, "Also write the predictions as JSON here");

  starling::cli::PartitionOptions partition;
  auto* partition_cmd = app.add_subcommand(
      "partition", "Write the config's partition of the training set across the peers as JSON (index lists, label counts)");
  partition_cmd->add_option("-c,--config", partition.config, "Topology configuration (TOML)")->required();
  partition_cmd->add_option("--set", partition.overrides, "Override a config key: section.key=value (repeatable)");
  partition_cmd->add_option("-o,--out", partition.out, "Write the JSON here (default: standard output)");

  starling::cli::MonitorOptions monitor;
  auto* monitor_cmd = app.add_subcommand("monitor", "Serve the live page of a running swarm, starting from one peer's monitor");
  monitor_cmd->add_option("--peer", monitor.peer, "HOST:PORT of any peer's monitor (its monitor.metrics_port)")->required();
  monitor_cmd->add_option("--port", monitor.port, "Serve the page on this port")->check(CLI::Range(1, 65535))->capture_default_str();
  monitor_cmd->add_option("--bind", monitor.bind, "Serve the page on this IPv4 address")->capture_default_str();
  monitor_cmd->add_option("--seconds", monitor.seconds, "Stop after this long (default: at Ctrl-C or SIGTERM)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (log_format == "json") starling::cli::use_json_log();
  if (monitor_cmd->parsed()) return starling::cli::run_monitor(monitor);
  if (train_cmd->parsed()) return starling::cli::run_train(train);
  if (peer_cmd->parsed()) return starling::cli::run_peer(peer, peer_id);
  if (invite_cmd->parsed()) return starling::cli::run_invite(invite);
  if (keygen_cmd->parsed()) return starling::cli::run_keygen(keygen);
  if (simulate_cmd->parsed()) return starling::cli::run_simulate(simulate);
  if (model_cmd->parsed()) return starling::cli::run_model(model);
  if (generate_cmd->parsed()) return starling::cli::run_generate(generate);
  if (export_cmd->parsed()) return starling::cli::run_export(export_options);
  if (config_cmd->parsed()) return starling::cli::run_config(config);
  if (tokenizer_train_cmd->parsed()) return starling::cli::run_tokenizer_train(tokenizer);
  if (partition_cmd->parsed()) return starling::cli::run_partition(partition);
  char self[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string executable = n > 0 ? std::string(self, static_cast<std::size_t>(n)) : std::string(argv[0]);
  if (launch_cmd->parsed()) {
    launch.executable = executable;
    return starling::cli::run_launch(launch);
  }
  if (experiment_cmd->parsed()) {
    experiment.executable = executable;
    return starling::cli::run_experiment(experiment);
  }
  return 2;
}
