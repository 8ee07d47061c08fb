#include "cli/experiment_report.h"

#include "cli/launch_command.h"
#include "job/json.h"
#include "job/task_kind.h"
#include "platform/cpu_features.h"
#include "protocols/codec_row.h"

#include <sys/utsname.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace starling::cli {

using job::JsonObject;
using job::Metric;
using job::summary_field;
using job::summary_number;
using job::task_kind;
using job::write_file_atomic;

namespace {

// One variant's runs folded into one row: means over the runs that finished.
struct Row {
  const Variant* variant = nullptr;
  int finished = 0, runs = 0;
  std::map<std::string, double> mean;  // numeric summary fields
  std::optional<double> time_to_target;  // mean, when every finished run reached the target
  bool identical = true;
  std::vector<std::string> dirs;
};

const std::vector<std::string> kFields{"epochs", "samples", "wall_seconds", "samples_per_second", "train_loss",
                                       "test_accuracy", "test_accuracy_min", "bytes_sent", "bytes_received",
                                       "compute_seconds", "exchange_seconds", "attackers", "attackers_test_accuracy",
                                       "val_bpb", "val_bpb_max", "tokens"};

Row fold(const VariantOutcome& o) {
  Row row;
  row.variant = o.variant;
  row.runs = static_cast<int>(o.runs.size());
  double ttt = 0;
  bool reached = true;
  for (const auto& run : o.runs) {
    row.dirs.push_back(run.dir);
    if (!run.ok) continue;
    ++row.finished;
    for (const auto& f : kFields) row.mean[f] += summary_number(run.summary, f).value_or(f == "test_accuracy_min" ? summary_number(run.summary, "test_accuracy").value_or(0.0) : 0.0);
    const auto t = summary_number(run.summary, "time_to_target_seconds");
    reached = reached && t.has_value();
    ttt += t.value_or(0);
    row.identical = row.identical && summary_field(run.summary, "identical_models") != "false";
  }
  for (auto& [key, value] : row.mean) value /= std::max(1, row.finished);
  if (row.finished > 0 && reached) row.time_to_target = ttt / row.finished;
  return row;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// What lies between the brackets of `key`'s array in a summary's JSON text; nullopt when
// the key is missing or not a flat array. Summaries are ours: no brackets inside strings.
std::optional<std::string> array_text(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\":";
  const auto at = json.find(needle);
  if (at == std::string::npos) return std::nullopt;
  const auto open = json.find_first_not_of(" \t\r\n", at + needle.size());
  if (open == std::string::npos || json[open] != '[') return std::nullopt;
  const auto close = json.find(']', open);
  if (close == std::string::npos) return std::nullopt;
  return json.substr(open + 1, close - open - 1);
}

std::vector<int64_t> ints_in(std::string text) {
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream in(text);
  std::vector<int64_t> out;
  for (int64_t v; in >> v;) out.push_back(v);
  return out;
}

std::vector<std::string> strings_in(const std::string& text) {
  std::vector<std::string> out;
  for (auto open = text.find('"'); open != std::string::npos; open = text.find('"', open)) {
    const auto close = text.find('"', open + 1);
    if (close == std::string::npos) break;
    out.push_back(text.substr(open + 1, close - open - 1));
    open = close + 1;
  }
  return out;
}

// Each peer's training samples per class in the variant's first finished run: from the
// peers' summaries (launch, torch-ddp) or the run's own (one node). Empty when they carry none.
std::vector<std::vector<int64_t>> peer_label_counts(const VariantOutcome& o) {
  for (const auto& run : o.runs) {
    if (!run.ok) continue;
    std::vector<std::string> texts{run.summary};
    if (const auto files = array_text(run.summary, "peer_summaries")) {
      texts.clear();
      for (const auto& path : strings_in(*files)) texts.push_back(read_text(path));
    }
    std::vector<std::vector<int64_t>> counts;
    for (const auto& text : texts)
      if (const auto list = array_text(text, "label_counts")) counts.push_back(ints_in(*list));
    return counts.size() == texts.size() ? counts : std::vector<std::vector<int64_t>>{};
  }
  return {};
}

// ", dirichlet α=0.1 split" and the like; nothing for iid.
std::string partition_of(const Config& c) {
  const auto& p = c.data.partition;
  std::ostringstream out;
  if (p.kind == PartitionKind::iid) return "";
  out << ", " << partition_name(p.kind);
  if (p.kind == PartitionKind::dirichlet) out << " α=" << p.alpha;
  if (p.kind == PartitionKind::shards) out << " " << p.classes_per_peer << " classes/peer";
  return out.str() + " split";
}

// "4 learners (sma)" or "1 learner".
std::string learners_of(const Config& c) {
  if (c.node.learners == 0) return std::string("auto learners (") + actors::intra_sync_name(c.node.intra_sync) + ")";
  if (c.node.learners == 1) return "1 learner";
  return std::to_string(c.node.learners) + " learners (" + actors::intra_sync_name(c.node.intra_sync) + ")";
}

// "topk 1%", "qsgd 4-bit", "powersgd rank 4": the codec and the option that sizes it (its row's label).
std::string codec_of(const gossip::ExchangeSpec& x) {
  const protocols::CodecRow* row = protocols::codec_row(x.codec);
  std::string out = row ? row->label_for(x.codec_options) : x.codec;
  if (x.adaptive) out += " adaptive";
  return out;
}

// "gossip ring, topk 1%, overlapped, 4 peers × 1 learner, batch 32, 100mbit" from the variant's config.
std::string setup_of(const Variant& v) {
  const Config& c = v.config;
  const auto& x = c.node.exchange;
  const int peers = x.mode == gossip::ExchangeMode::none ? 1 : static_cast<int>(c.peers.size());
  const std::string batch = ", batch " + std::to_string(c.node.train.learner.batch);
  if (v.system == "torch-ddp") return "PyTorch DDP (gloo), " + std::to_string(peers) + " processes" + batch + partition_of(c);
  if (x.mode == gossip::ExchangeMode::none) return "one node, " + learners_of(c) + batch + partition_of(c);
  std::ostringstream out;
  const bool outer = x.outer_lr != 1.0 || x.outer_momentum > 0.0;
  const bool noloco = outer && x.mode == gossip::ExchangeMode::gossip;
  out << gossip::exchange_mode_name(x.mode);
  if (noloco) out << " NoLoCo (random pairs)";
  else if (gossip::uses_topology(x.mode)) out << " " << x.topology;
  if (x.mode == gossip::ExchangeMode::local_sgd || (noloco && c.node.period > 1)) out << " every " << c.node.period;
  if (outer)
    out << ", outer lr " << x.outer_lr << (x.outer_nesterov && !noloco ? " Nesterov " : " momentum ") << x.outer_momentum;
  if (noloco) out << " γ " << x.gamma;
  if (x.codec != "none") out << ", " << codec_of(x);
  if (c.node.overlap) out << ", overlapped" << (c.node.overlap_steps > 0 ? " " + std::to_string(c.node.overlap_steps) + " steps" : "");
  out << ", " << peers << " peers × " << learners_of(c) << batch << partition_of(c);
  if (!v.network.empty()) out << ", " << v.network;
  return out.str();
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) bytes /= 1000, ++u;
  return fixed(bytes, bytes < 10 && u > 0 ? 2 : 1) + " " + units[u];
}

// A text variant's training tokens of all peers over its wall time (the table's tokens/s and
// summary.json's, which plot.py draws); nullopt for images or a variant that failed.
std::optional<double> tokens_per_second(const Row& r) {
  if (r.finished == 0 || task_kind(r.variant->config.data).metric() != Metric::bits_per_byte) return std::nullopt;
  return r.mean.at("tokens") / std::max(1e-9, r.mean.at("wall_seconds"));
}

std::optional<double> speedup(const Row& row, const Row& baseline) {
  if (!row.time_to_target || !baseline.time_to_target || *row.time_to_target <= 0) return std::nullopt;
  return *baseline.time_to_target / *row.time_to_target;
}

std::string table_of(const ExperimentSpec& spec, const std::vector<Row>& rows, const Row& baseline) {
  std::ostringstream t;
  t << "| variant | system | setup | test accuracy (mean / min) | attackers (accuracy) | time to "
    << fixed(spec.target_accuracy, 2) << " | speedup | wall | samples/s | sent (all peers) | bytes/sample | identical |\n"
    << "|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    t << "| " << r.variant->name << " | " << r.variant->system << " | " << setup_of(*r.variant) << " | ";
    if (r.finished == 0) {
      t << "failed (see runs/" << r.variant->name << "/log.txt) | | | | | | | | |\n";
      continue;
    }
    const auto m = [&](const char* key) { return r.mean.at(key); };
    const auto s = speedup(r, baseline);
    t << fixed(m("test_accuracy"), 4) << " / " << fixed(m("test_accuracy_min"), 4) << " | "
      << (m("attackers") > 0 ? fixed(m("attackers"), 0) + " (" + fixed(m("attackers_test_accuracy"), 4) + ")" : std::string("—"))
      << " | "
      << (r.time_to_target ? fixed(*r.time_to_target, 1) + " s" : std::string("not reached")) << " | "
      << (s ? fixed(*s, 2) + "×" : std::string("—")) << " | " << fixed(m("wall_seconds"), 1) << " s | "
      << fixed(m("samples_per_second"), 0) << " | " << bytes_text(m("bytes_sent")) << " | "
      << fixed(m("bytes_sent") / std::max(1.0, m("samples")), 0) << " | " << (r.identical ? "yes" : "no")
      << (r.finished < r.runs ? " (" + std::to_string(r.runs - r.finished) + " run(s) failed)" : std::string()) << " |\n";
  }
  return t.str();
}

// The row a text variant is compared with: the baseline, or for a variant on another split
// than the baseline's, the first variant on that split.
const Row& reference_of(const Row& row, const std::vector<Row>& rows, const Row& baseline) {
  const auto split = [](const Row& r) { return r.variant->config.data.partition.kind; };
  if (baseline.variant == nullptr || split(row) == split(baseline)) return baseline;
  for (const Row& r : rows)
    if (split(r) == split(row)) return r;
  return baseline;
}

// A language model's table: validation bits per byte where accuracy stands, and each
// variant's bits per byte and bytes against its reference's (reference_of).
std::string text_table_of(const std::vector<Row>& rows, const Row& baseline_of_all) {
  std::ostringstream t;
  t << "| variant | setup | val bpb (mean / worst) | vs baseline | wall | tokens/s | sent (all peers) | "
       "fewer bytes than baseline | identical |\n|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const Row& baseline = reference_of(r, rows, baseline_of_all);
    const bool has_baseline = baseline.finished > 0;
    t << "| " << r.variant->name << " | " << setup_of(*r.variant) << " | ";
    if (r.finished == 0) {
      t << "failed (see runs/" << r.variant->name << "/log.txt) | | | | | | |\n";
      continue;
    }
    const auto m = [&](const char* key) { return r.mean.at(key); };
    const auto b = [&](const char* key) { return baseline.mean.at(key); };
    t << fixed(m("val_bpb"), 4) << " / " << fixed(m("val_bpb_max"), 4) << " | "
      << (has_baseline ? fixed(100.0 * (m("val_bpb") / b("val_bpb") - 1.0), 2) + " %" : std::string("—")) << " | "
      << fixed(m("wall_seconds"), 1) << " s | " << fixed(*tokens_per_second(r), 0) << " | " << bytes_text(m("bytes_sent")) << " | "
      << (has_baseline && m("bytes_sent") > 0 ? fixed(b("bytes_sent") / m("bytes_sent"), 1) + "×" : std::string("—")) << " | "
      << (r.identical ? "yes" : "no")
      << (r.finished < r.runs ? " (" + std::to_string(r.runs - r.finished) + " run(s) failed)" : std::string()) << " |\n";
  }
  return t.str();
}

JsonObject machine() {
  JsonObject j;
  std::ifstream cpu("/proc/cpuinfo");
  std::string line, model = "unknown";
  while (std::getline(cpu, line))
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  std::ifstream mem("/proc/meminfo");
  std::string key;
  double kib = 0;
  mem >> key >> kib;
  utsname u{};
  ::uname(&u);
  j.add("cpu", model)
      .add("cores", static_cast<int>(std::thread::hardware_concurrency()))
      .add("memory_gib", kib / (1024.0 * 1024.0))
      .add("kernel", std::string(u.release))
      .add("isa", std::string(platform::isa_name(platform::active_isa())));
  return j;
}

std::vector<JsonObject> label_counts_json(const VariantOutcome& o) {
  std::vector<JsonObject> peers;
  for (const auto& counts : peer_label_counts(o)) peers.push_back(JsonObject().add("peer", static_cast<int>(peers.size())).add("counts", counts));
  return peers;
}

JsonObject variant_json(const Row& r, const VariantOutcome& o, const Row& baseline, const ExperimentSpec& spec) {
  const Variant& v = *r.variant;
  const Config& c = v.config;
  JsonObject j;
  j.add("name", v.name).add("system", v.system).add("status", r.finished == r.runs ? "ok" : r.finished ? "partial" : "failed");
  j.add("setup", setup_of(v))
      .add("mode", gossip::exchange_mode_name(c.node.exchange.mode))
      .add("topology", c.node.exchange.topology)
      .add("codec", c.node.exchange.codec)
      .add("network", v.network.empty() ? std::string("loopback") : "netns:" + v.network)
      .add("peers", c.node.exchange.mode == gossip::ExchangeMode::none ? 1 : static_cast<int>(c.peers.size()))
      .add("learners_per_peer", c.node.learners)
      .add("partition", partition_name(c.data.partition.kind))
      .add("label_counts", label_counts_json(o))
      .add("batch", c.node.train.learner.batch)
      .add("repeats", r.runs);
  for (const auto& f : kFields) j.add(f, r.finished ? std::optional<double>(r.mean.at(f)) : std::nullopt);
  const double samples = r.finished ? r.mean.at("samples") : 0.0;
  j.add("target_accuracy", spec.target_accuracy)
      .add("time_to_target_seconds", r.time_to_target)
      .add("bytes_per_sample", samples > 0 ? std::optional<double>(r.mean.at("bytes_sent") / samples) : std::nullopt)
      .add("tokens_per_second", tokens_per_second(r))
      .add("speedup_over_baseline", speedup(r, baseline))
      .add("identical_models", r.identical)
      .add("runs", r.dirs)
      .add("overrides", v.overrides)
      .add("base", v.base);
  return j;
}

std::string now_text() {
  const std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return buf;
}

void write_markdown(const ExperimentSpec& spec, const std::string& table, const JsonObject& host,
                    const std::vector<std::string>& plots, const std::string& path) {
  std::ostringstream md;
  md << "# Experiment: " << spec.name << "\n\n";
  if (!spec.description.empty()) md << spec.description << "\n\n";
  md << "Run " << now_text() << " from `" << spec.source << "`. Target test accuracy " << spec.target_accuracy
     << "; baseline `" << spec.baseline << "`. Machine:\n\n```json\n" << host.str() << "\n```\n\n";
  const bool text = !spec.variants.empty() && task_kind(spec.variants.front().config.data).metric() == Metric::bits_per_byte;
  md << "## Results\n\n" << table;
  if (text)
    md << "\nVal bpb: validation bits per byte of each peer's model after the last step, the mean and the worst over "
          "the peers. Vs baseline: the mean's difference from the baseline's. Tokens/s: all peers' training tokens "
          "over the wall time. Sent: bytes all peers put on the network; fewer bytes: the baseline's over the "
          "variant's. A variant on another split than the baseline's is compared with the first variant on its "
          "split. Identical: every peer ended with the same model bits.\n\n";
  else md
     << "\nTest accuracy is that of each peer's node model after the last epoch (mean and minimum over the honest peers; attacking peers, docs/byzantine.md, are counted apart). "
        "Time to target: the wall time at which the slowest peer first evaluated at or above the target "
        "(mean over repeats). Speedup: the baseline's time to target over the variant's. Sent: bytes all peers "
        "put on the network (for torch-ddp computed as a ring all-reduce would send them). Identical: every peer "
        "ended with the same model bits.\n\n";
  if (!plots.empty()) {
    md << "## Plots\n\n";
    for (const auto& p : plots) md << "![" << p.substr(0, p.rfind('.')) << "](" << p << ")\n\n";
  }
  md << "## Variants and configs\n\n| variant | base config | overrides |\n|---|---|---|\n";
  std::set<std::string> bases;
  for (const auto& v : spec.variants) {
    std::string sets;
    for (const auto& s : v.overrides) sets += (sets.empty() ? "`" : " `") + s + "`";
    md << "| " << v.name << " | `" << v.base << "` | " << sets << " |\n";
    bases.insert(v.base);
  }
  for (const auto& b : bases) md << "\n### `" << b << "`\n\n```toml\n" << read_text(b) << "```\n";
  md << "\n## Files\n\n`metrics.csv` (one row per peer per evaluation), `summary.json`, and `runs/<variant>/` "
        "with each run's log, per-peer metrics and summaries.\n";
  std::ofstream(path) << md.str();
}

}  // namespace

void write_running_report(const ExperimentSpec& spec, const Variant& variant, int index, int count, const std::string& dir) {
  const MonitorSettings& m = variant.config.monitor;
  if (m.metrics_port == 0) return;
  const std::string host = m.bind == "0.0.0.0" ? "127.0.0.1" : m.bind;
  const std::string url = "http://" + host + ":" + std::to_string(m.metrics_port) + "/";
  write_file_atomic(dir + "/report.md", "# " + spec.name + " (running)\n\nRun " + std::to_string(index) + " of " +
                                            std::to_string(count) + ", variant `" + variant.name +
                                            "`, is training: its live page is [" + url + "](" + url +
                                            "). This report is replaced when the experiment ends.\n");
}

std::string write_report(const ExperimentSpec& spec, const std::vector<VariantOutcome>& outcomes,
                         const std::string& dir, const std::vector<std::string>& plots) {
  std::vector<Row> rows;
  for (const auto& o : outcomes) rows.push_back(fold(o));
  Row baseline;
  for (const auto& r : rows)
    if (r.variant->name == spec.baseline) baseline = r;
  std::vector<JsonObject> variants;
  for (std::size_t i = 0; i < rows.size(); ++i) variants.push_back(variant_json(rows[i], outcomes[i], baseline, spec));
  const JsonObject host = machine();
  JsonObject summary;
  summary.add("experiment", spec.name)
      .add("description", spec.description)
      .add("config", spec.source)
      .add("target_accuracy", spec.target_accuracy)
      .add("baseline", spec.baseline)
      .add("machine", host)
      .add("variants", variants);
  write_file_atomic(dir + "/summary.json", summary.str() + "\n");
  const bool text = !spec.variants.empty() && task_kind(spec.variants.front().config.data).metric() == Metric::bits_per_byte;
  const std::string table = text ? text_table_of(rows, baseline) : table_of(spec, rows, baseline);
  write_markdown(spec, table, host, plots, dir + "/report.md");
  return table;
}

}  // namespace starling::cli
