// bench_step: where a training step's time goes. For the shipped models (MLP, CNN, resnet8)
// at batch 8, 16 and 32 (and the GPT, see below), learners run a fixed number of steps on a synthetic set of
// Fashion-MNIST's shape and time each part: gathering the batch, each layer's forward and
// backward (ReLUs fused as in training; a residual block's layers listed under it), softmax
// and loss, and the optimizer update (SGD, Nesterov momentum and weight decay as in the
// shipped configs): fused into the backward as training runs it, so inside each layer's
// "bwd", or with --optimizer separate as one pass over the arena of its own. With several
// learners, each on a thread of its own, the SMA round among them is two parts: the barrier
// waits (the learners' imbalance) and the averaging of the learner's slice, whose traffic is
// set against the same pass over private memory, with the bound the averaging puts on k
// learners' speed-up over one; each learner's step without the round shows the imbalance.
// Prints µs per step and % of the step per part, the GEMM layers' achieved GFLOP/s and the
// step's % of the FMA peak measured in the same process (before every run, the best kept),
// and the most of it the step's update allows: its FMAs, and its stores at the FMA slots a
// vector store takes on this core, measured likewise. Learner counts alternate over the
// repeats, and their median samples/s are compared.
// --models gpt: nanoGPT's CPU configuration (the `gpt` preset: 4 blocks, 4 heads, width 128,
// context 64, bytes) at --batches windows of 64 tokens, one learner, random bytes as tokens,
// the sequence cross-entropy, and AdamW as configs/fortunes-gpt.toml runs it (decay 0.1 on
// matrices, clipping at 1.0) as a pass of its own; tokens/s, and the step's share of the FMA
// peak by the FLOPs of its dense, attention and head products with the attention's at the
// full T × T (as PyTorch's masked attention runs it; Starling skips most of the masked
// half): one count for every party, so that the share compares like tokens/s.
// --models gpt-10m (or another preset of learners/models/gpt.h) profiles that size the same way.
// --peak prints one JSON line, the FMA peak of the capped ISA and the training FLOPs a token
// of the first GPT in --models (gpt by default), and exits (bench/compare_torch.py turns tokens/s into a share of the peak with it).
// With --clock thread the FMA peak too is timed by the thread's CPU time.
//   bench_step [--steps N] [--models mlp,cnn,resnet8,gpt,gpt-10m] [--batches 8,16,32] [--backend native|onednn]
//              [--optimizer fused|separate] [--learners 1,2] [--sync-every N] [--repeats R]
//              [--clock wall|thread] [--isa scalar|avx2|avx512] [--peak]
// --isa caps both backends at that instruction set (Starling's as STARLING_ISA does, oneDNN's
// through ONEDNN_MAX_CPU_ISA), for a like-for-like comparison on a CPU that has more; the
// ISA each backend then runs is printed first.
// --clock thread times each part by the CPU time of the thread that runs it: on a host
// shared with other work it leaves out the time the learner waited to be scheduled, which
// wall time counts (it also leaves out an SMA round's blocked waits: compare one learner).
#include "fma_peak.h"
#include "kernels/gemm.h"
#include "learners/data/dataset.h"
#include "learners/layers/residual.h"
#include "learners/models/aligned_buffer.h"
#include "learners/models/gpt.h"
#include "learners/models/model.h"
#include "learners/models/model_description.h"
#include "learners/optimizers/optimizer.h"
#include "learners/replicas/sma.h"
#include "learners/replicas/sma_group.h"
#include "learners/tasks/loss.h"
#include "platform/cpu_features.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>
#include <random>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

using namespace starling;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int steps = 0;  // 0: a count per model
  std::vector<std::string> models{"mlp", "cnn", "resnet8"};
  std::vector<int> batches{8, 16, 32};
  kernels::Backend backend = kernels::Backend::native;
  bool fused = true;  // the optimizer step inside the backward, as training runs it
  std::vector<int> learners{1};
  int sync_every = 1;  // steps between SMA rounds (node.sync_every)
  int repeats = 1;
  bool thread_clock = false;  // the thread's CPU time instead of wall time
  std::string isa;            // empty: STARLING_ISA or the CPU's best
  bool peak_only = false;     // --peak
};

bool is_gpt(const std::string& model) {
  return model == kGptKind ||
         std::any_of(std::begin(kGptPresets), std::end(kGptPresets), [&](const GptPreset& p) { return model == p.name; });
}

// The model kinds' presets (learners/models/model_description.h) and every GPT preset by name.
std::vector<std::string> model_names() {
  std::vector<std::string> names = model_preset_names();
  for (const GptPreset& p : kGptPresets) names.push_back(p.name);
  return names;
}

// Set once from the options before any learner thread starts.
bool g_thread_clock = false;

// Seconds on the clock the options chose.
double now() {
  if (!g_thread_clock) return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Exits 2 with CLI11's message on a bad option or value; `--help` prints the options and exits 0.
Options parse(int argc, char** argv) {
  Options o;
  std::string backend = "native", optimizer = "fused", clock = "wall";
  CLI::App app{"bench_step: where a training step's time goes, part by part, one learner a thread"};
  app.add_option("--steps", o.steps, "Steps per run (default: 2000 MLP, 200 CNN, 60 resnet8)")->check(CLI::Range(1, 10000000));
  app.add_option("--models", o.models, "Models, comma-separated")
      ->delimiter(',')
      ->check(CLI::IsMember(model_names()));
  app.add_option("--batches", o.batches, "Batch sizes, comma-separated")->delimiter(',')->check(CLI::Range(1, 4096));
  app.add_option("--backend", backend, "GEMM backend")->check(CLI::IsMember({"native", "onednn"}));
  app.add_option("--optimizer", optimizer, "The SGD step inside the backward (fused) or as a pass of its own")
      ->check(CLI::IsMember({"fused", "separate"}));
  app.add_option("--learners", o.learners, "Learner counts to compare, comma-separated, each on threads of its own")
      ->delimiter(',')
      ->check(CLI::Range(1, 256));
  app.add_option("--sync-every", o.sync_every, "Steps between SMA rounds (node.sync_every)")->check(CLI::Range(1, 1000000));
  app.add_option("--repeats", o.repeats, "Runs of each learner count, interleaved; their median is compared")
      ->check(CLI::Range(1, 1000));
  app.add_option("--clock", clock, "Time parts by wall time, or by the CPU time of the thread that runs them")
      ->check(CLI::IsMember({"wall", "thread"}));
  app.add_option("--isa", o.isa, "Cap both backends at this instruction set")
      ->check(CLI::IsMember({"scalar", "avx2", "avx512"}));
  app.add_flag("--peak", o.peak_only, "Print the FMA peak and the GPT's FLOPs a token as JSON, and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  kernels::parse_backend(backend, o.backend);
  if (!kernels::backend_available(o.backend)) {
    std::fprintf(stderr, "bench_step: --backend %s: not a backend of this build\n", backend.c_str());
    std::exit(2);
  }
  o.fused = optimizer == "fused";
  o.thread_clock = clock == "thread";
  const bool gpt = std::any_of(o.models.begin(), o.models.end(), is_gpt);
  if (gpt && (o.learners.size() != 1 || o.learners[0] != 1)) {
    std::fprintf(stderr, "bench_step: --models gpt runs one learner (--learners 1)\n");
    std::exit(2);
  }
  return o;
}

// Multiply-adds of one sample's forward pass through a GEMM layer (dense or convolution):
// its training step does three such products (forward, input and weight gradients).
double gemm_macs(const LayerDesc& d) {
  if (d.kind() == "dense") return static_cast<double>(d.in.size()) * d.integer("size");
  if (d.kind() == "conv2d")
    return static_cast<double>(d.out.h) * d.out.w * d.integer("size") * d.integer("kernel") * d.integer("kernel") * d.in.c;
  double macs = 0.0;
  for (const auto* list : {&d.body, &d.shortcut})
    for (const LayerDesc& inner : *list) macs += gemm_macs(inner);
  return macs;
}

// Accumulated seconds per named part over the timed steps, in first-seen order.
class Parts {
 public:
  template <typename F>
  void time(const std::string& name, F&& f) {
    if (!on_) return f();
    double& seconds = slot(name);  // listed before the parts inside f
    const double t0 = now();
    f();
    seconds += now() - t0;
  }
  // Books seconds measured elsewhere under `name`.
  void add(const std::string& name, double seconds) {
    if (on_) slot(name) += seconds;
  }
  double total(const std::string& name) const {
    auto it = seconds_.find(name);
    return it == seconds_.end() ? 0.0 : it->second;
  }
  void set_on(bool on) { on_ = on; }  // off during warm-up
  const std::vector<std::string>& order() const { return order_; }

 private:
  double& slot(const std::string& name) {
    auto [it, fresh] = seconds_.try_emplace(name, 0.0);
    if (fresh) order_.push_back(name);
    return it->second;
  }

  std::map<std::string, double> seconds_;
  std::vector<std::string> order_;
  bool on_ = true;
};

// Wraps a layer and books its forward and backward into Parts under its name, indented by
// depth; a residual block's own time includes its layers', each listed under it.
class TimedLayer final : public Layer {
 public:
  TimedLayer(std::unique_ptr<Layer> inner, std::string label, Parts& parts)
      : inner_(std::move(inner)), label_(std::move(label)), parts_(parts) {}
  std::string name() const override { return inner_->name(); }
  Shape input_shape() const override { return inner_->input_shape(); }
  Shape output_shape() const override { return inner_->output_shape(); }
  std::size_t param_count() const override { return inner_->param_count(); }
  void bind(float* params, float* grads) override { inner_->bind(params, grads); }
  void init(std::mt19937_64& rng) override { inner_->init(rng); }
  void reserve(int batch) override { inner_->reserve(batch); }
  void set_mode(bool training, uint64_t key) override { inner_->set_mode(training, key); }
  bool renames_only() const override { return inner_->renames_only(); }  // then the chain runs neither pass
  void forward(kernels::Backend backend, int batch, const float* x, float* y) override {
    parts_.time(label_ + " fwd", [&] { inner_->forward(backend, batch, x, y); });
  }
  void backward(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                float* dx) override {
    parts_.time(label_ + " bwd", [&] { inner_->backward(backend, batch, x, y, dy, dx); });
  }
  bool backward_update(kernels::Backend backend, int batch, const float* x, const float* y, const float* dy,
                       float* dx, const ParamUpdate& update) override {
    bool fused = false;
    parts_.time(label_ + " bwd", [&] { fused = inner_->backward_update(backend, batch, x, y, dy, dx, update); });
    return fused;
  }

 private:
  std::unique_ptr<Layer> inner_;
  std::string label_;
  Parts& parts_;
};

void time_layers(LayerChain& chain, const std::string& prefix, Parts& parts) {
  auto& layers = chain.layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::string label = prefix + std::to_string(i) + " " + layers[i]->name();
    if (auto* block = dynamic_cast<Residual*>(layers[i].get())) {
      label = prefix + std::to_string(i) + " residual block" + (block->relu_output() ? ", relu" : "");
      time_layers(block->body(), prefix + "  " + std::to_string(i) + ".body.", parts);
      time_layers(block->shortcut(), prefix + "  " + std::to_string(i) + ".shortcut.", parts);
    }
    layers[i] = std::make_unique<TimedLayer>(std::move(layers[i]), label, parts);
  }
}

// Seconds a step of `steps` timed calls of step(i), after a tenth as many (at least 2)
// untimed ones with the parts off; i counts every call from 0.
template <typename Step>
double timed_steps(Parts& p, int steps, Step&& step) {
  const int warmup = std::max(2, steps / 10);
  double seconds = 0.0;
  for (int s = -warmup; s < steps; ++s) {
    p.set_on(s >= 0);
    const double t0 = now();
    step(s + warmup);
    if (s >= 0) seconds += now() - t0;
  }
  return seconds / steps;
}

struct Run {
  Parts parts;
  double step_seconds = 0.0;  // per step, all parts
  std::vector<double> compute_seconds;  // with several learners, each one's step less its round
};

// SGD with the shipped configs' Nesterov momentum and weight decay (kUpdateFmas counts its work).
OptimizerSpec bench_optimizer() {
  OptimizerSpec o;
  o.momentum = 0.9, o.nesterov = true, o.weight_decay = 1e-4;
  return o;
}

const std::string kSmaWaits = "SMA round: barrier waits";
const std::string kSmaAveraging = "SMA round: averaging its slice";

// One learner's steps, followed by its share of an SMA round every sync_every steps when it
// has a group (α = 1/learners and no central momentum, the defaults of [node]).
Run learner_steps(const ModelSpec& spec, int batch, int steps, const Options& options, const TrainTest& data,
                  int index, sma::SmaGroup* group) {
  const kernels::Backend backend = options.backend;
  Model model(spec);
  model.init(1);
  auto optimizer = make_optimizer(model.param_count(), bench_optimizer());
  Run run;
  Parts& p = run.parts;
  time_layers(model.chain(), "", p);
  AlignedBuffer<float> x(static_cast<std::size_t>(batch) * spec.input.size());  // as the learner's batch
  std::vector<float> dlogits(static_cast<std::size_t>(batch) * spec.classes);
  std::vector<int32_t> labels(static_cast<std::size_t>(batch));
  std::vector<uint32_t> indices(static_cast<std::size_t>(batch));
  model.chain().set_mode(true, 1);
  run.step_seconds = timed_steps(p, steps, [&](int s) {
    p.time("gather", [&] {
      for (int i = 0; i < batch; ++i)  // each learner its own walk through the rows
        indices[i] = static_cast<uint32_t>((s * (index + 1)) * batch + i) % data.train.size();
      data.train.gather(indices.data(), batch, x.data(), labels.data());
    });
    const float* logits = model.forward(backend, batch, x.data());
    p.time("softmax + loss", [&] { softmax_cross_entropy(batch, spec.classes, logits, labels.data(), dlogits.data()); });
    ParamUpdate update;
    if (options.fused && optimizer->fused_step(model.params(), 0.01f, update)) {
      model.backward(backend, batch, x.data(), dlogits.data(), &update);  // each layer's step in its "bwd"
    } else {
      model.backward(backend, batch, x.data(), dlogits.data());
      p.time("optimizer", [&] { optimizer->step(model.params(), model.grads(), model.param_count(), 0.01f); });
    }
    if (group && (s + 1) % options.sync_every == 0) {
      sma::RoundTimes round;
      group->round(index, model.params(), &round);
      p.add(kSmaWaits, round.waiting);
      p.add(kSmaAveraging, round.averaging);
    }
  });
  return run;
}

// `learners` learners on threads of their own, in one SMA group; returns learner 0's parts
// and the slowest learner's step time.
Run profile(const ModelSpec& spec, int batch, int steps, const Options& options, const TrainTest& data, int learners) {
  if (learners == 1) return learner_steps(spec, batch, steps, options, data, 0, nullptr);
  Model central(spec);
  central.init(1);  // every learner starts from the same model
  sma::SmaGroup group(central.params(), nullptr, learners, central.param_count(), sma::alpha_for(0.0, learners), 0.f);
  std::vector<Run> runs(static_cast<std::size_t>(learners));
  std::vector<std::thread> others;
  for (int j = 1; j < learners; ++j)
    others.emplace_back([&, j] { runs[j] = learner_steps(spec, batch, steps, options, data, j, &group); });
  runs[0] = learner_steps(spec, batch, steps, options, data, 0, &group);
  for (std::thread& t : others) t.join();
  std::vector<double> compute;
  for (const Run& r : runs)
    compute.push_back(r.step_seconds - (r.parts.total(kSmaWaits) + r.parts.total(kSmaAveraging)) / steps);
  for (const Run& r : runs) runs[0].step_seconds = std::max(runs[0].step_seconds, r.step_seconds);
  runs[0].compute_seconds = std::move(compute);

  return std::move(runs[0]);
}

// A GPT bench_step profiles: the kind alone is the first preset (gpt-nano, nanoGPT's CPU
// configuration), or a preset by name, on bytes.
ModelSpec gpt_model(const std::string& name) {
  const std::string preset = name == kGptKind ? kGptPresets[0].name : name;
  ModelSpec spec;
  spec.kind = kGptKind;
  spec.classes = 256;
  for (const GptPreset& p : kGptPresets)
    if (preset == p.name) spec.blocks = p.layers, spec.heads = p.heads, spec.width = p.width, spec.context = p.context;
  spec.input = Shape{1, spec.context, 1};
  return spec;
}

// Training FLOPs a token of a GPT step: per block the fused QKV, output and two MLP products
// (12·C² multiply-adds) and the attention's two T × T products (2·T·C, the masked half
// counted), plus the tied head (C·V); three times that for the forward, input and weight
// gradients, two FLOPs a multiply-add.
double gpt_flops_per_token(const ModelSpec& s) {
  const double c = s.width, t = s.context;
  return 2.0 * 3.0 * (s.blocks * (12.0 * c * c + 2.0 * t * c) + c * s.classes);
}

// AdamW as configs/fortunes-gpt.toml sets it.
OptimizerSpec gpt_optimizer() {
  OptimizerSpec o;
  o.kind = "adamw", o.beta1 = 0.9, o.beta2 = 0.99, o.weight_decay = 0.1, o.clip_norm = 1.0;
  return o;
}

// One GPT learner's steps on random bytes: windows of context + 1 tokens, each position
// scored against the next, then AdamW over the arena.
Run gpt_steps(const ModelSpec& spec, int batch, int steps, const Options& options) {
  Model model(spec);
  model.init(1);
  auto optimizer = make_optimizer(model.param_count(), gpt_optimizer(), model.matrix_spans());
  Run run;
  Parts& p = run.parts;
  time_layers(model.chain(), "", p);
  const std::size_t positions = static_cast<std::size_t>(batch) * spec.context;
  AlignedBuffer<float> x(positions), dlogits(positions * spec.classes);
  std::vector<int32_t> targets(positions);
  std::mt19937 rng(1);
  model.chain().set_mode(true, 1);
  run.step_seconds = timed_steps(p, steps, [&](int) {
    p.time("gather", [&] {
      for (std::size_t i = 0; i < positions; ++i) x[i] = static_cast<float>(rng() % spec.classes);
      for (std::size_t i = 0; i < positions; ++i) targets[i] = static_cast<int32_t>(rng() % spec.classes);
    });
    const float* logits = model.forward(options.backend, batch, x.data());
    p.time("softmax + loss", [&] {
      sequence_cross_entropy(batch, spec.context, spec.classes, logits, targets.data(), dlogits.data());
    });
    model.backward(options.backend, batch, x.data(), dlogits.data());
    p.time("optimizer (AdamW, clipping)", [&] { optimizer->step(model.params(), model.grads(), model.param_count(), 1e-4f); });
  });
  return run;
}

void report_gpt(const ModelSpec& spec, int batch, int steps, const Run& run, double peak) {
  const double tokens = static_cast<double>(batch) * spec.context, flops = gpt_flops_per_token(spec) * tokens;
  const double step_us = run.step_seconds * 1e6;
  std::printf("\ngpt (%d blocks, %d heads, width %d, context %d), batch %d: %.1f µs a step (%d steps), %.0f tokens/s; "
              "%.2f MFLOP a token, %.1f GFLOP/s = %.0f %% of the FMA peak (%.1f GFLOP/s a core)\n",
              spec.blocks, spec.heads, spec.width, spec.context, batch, step_us, steps, tokens / run.step_seconds,
              gpt_flops_per_token(spec) * 1e-6, flops / run.step_seconds * 1e-9,
              peak > 0 ? 100.0 * flops / run.step_seconds * 1e-9 / peak : 0.0, peak);
  std::printf("  %-58s %10s %7s\n", "part", "µs/step", "%");
  for (const std::string& name : run.parts.order()) {
    const double us = run.parts.total(name) / steps * 1e6;
    std::printf("  %-58s %10.1f %6.1f%%\n", name.c_str(), us, 100.0 * us / step_us);
  }
}

// The update of a vector of weights under bench_optimizer(), in the fused step of
// sgd_args.h: 4 FMAs, and the stores of the weights and their velocity.
constexpr double kUpdateFmas = 4.0, kUpdateStores = 2.0;

// The most of the FMA peak a step can reach: its GEMM work at the peak, and the update of
// every parameter at the FMA slots its arithmetic and stores take; every other cost zero.
double peak_ceiling(double gemm_flops, std::size_t params, double store_slots) {
  const double update_flops = 2.0 * static_cast<double>(params) * (kUpdateFmas + kUpdateStores * store_slots);
  return gemm_flops / (gemm_flops + update_flops);
}

// What the machine allows a step: its FMA peak a core, and the FMA slots a vector store takes.
struct Machine {
  double peak = 0.0;
  double store_slots = 0.0;
};

// gemm_flops: one learner's GEMM work per step; params: the model's.
void report(const std::string& kind, int batch, int learners, int steps, const Run& run, double gemm_flops,
            std::size_t params, const Machine& machine) {
  const double peak = machine.peak;
  const double step_us = run.step_seconds * 1e6;
  std::printf("\n%s, batch %d, %d learner%s: %.1f µs a step (%d steps), %.0f samples/s; GEMM work %.1f GFLOP/s a "
              "learner = %.0f %% of the FMA peak (%.1f GFLOP/s a core)\n",
              kind.c_str(), batch, learners, learners == 1 ? "" : "s", step_us, steps, learners * batch / run.step_seconds,
              gemm_flops / run.step_seconds * 1e-9, peak > 0 ? 100.0 * gemm_flops / run.step_seconds * 1e-9 / peak : 0.0,
              peak);
  std::printf("  at most %.0f %% of the peak with the update of its %zu parameters: %.0f FMAs and %.0f vector stores "
              "a vector of weights, a store taking %.2f FMA slots on this core\n",
              100.0 * peak_ceiling(gemm_flops, params, machine.store_slots), params, kUpdateFmas, kUpdateStores,
              machine.store_slots);
  std::printf("  %-58s %10s %7s\n", "part", "µs/step", "%");
  for (const std::string& name : run.parts.order()) {
    const double us = run.parts.total(name) / steps * 1e6;
    std::printf("  %-58s %10.1f %6.1f%%\n", name.c_str(), us, 100.0 * us / step_us);
  }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Seconds of one SMA averaging pass over a private copy of a learner's slice (z and every
// replica's slice, as in the round), on every learner's thread at once, the copy as close to
// the core as its size allows: the round's averaging where no line is shared between cores
// and none was pushed out by a step. The median over the threads.
double private_averaging_seconds(std::size_t n, int learners) {
  constexpr int kPasses = 200;
  const std::size_t slice = sma::slice_bound(n, learners, 1);
  std::vector<double> seconds(static_cast<std::size_t>(learners), 0.0);
  auto passes = [&](int t) {
    AlignedBuffer<float> z(slice);
    std::vector<AlignedBuffer<float>> replicas(static_cast<std::size_t>(learners), AlignedBuffer<float>(slice));
    std::vector<float*> pointers;
    for (AlignedBuffer<float>& r : replicas) pointers.push_back(r.data());
    std::fill(z.data(), z.data() + slice, 0.f);
    for (AlignedBuffer<float>& r : replicas) std::fill(r.data(), r.data() + slice, 1.f);
    for (int pass = 0; pass < kPasses; ++pass) {
      const auto t0 = Clock::now();
      sma::average_slice(z.data(), nullptr, pointers.data(), learners, 1.f / learners, 0.f, 0, slice);
      seconds[static_cast<std::size_t>(t)] += std::chrono::duration<double>(Clock::now() - t0).count() / kPasses;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < learners; ++t) threads.emplace_back(passes, t);
  passes(0);
  for (std::thread& t : threads) t.join();
  return median(seconds);
}

// The SMA round of a run of `learners` on a model of n parameters: its averaging's traffic
// and speed against the same pass over private memory and, where each learner has a core,
// the bound the averaging puts on k learners' speed-up over one (each as fast as one alone).
void report_round(const Run& run, int steps, int sync_every, std::size_t n, int learners) {
  const double rounds = static_cast<double>(steps) / sync_every;
  const double averaging = run.parts.total(kSmaAveraging) / rounds;
  const double private_pass = private_averaging_seconds(n, learners);
  const double bytes = 2.0 * sizeof(float) * (learners + 1.0) * sma::slice_bound(n, learners, 1);
  std::printf("  SMA averaging: %.2f MB read and written by a learner a round, %.1f µs = %.0f GB/s; over private "
              "memory, on every learner's thread at once: %.1f µs = %.0f GB/s\n",
              bytes * 1e-6, averaging * 1e6, bytes / averaging * 1e-9, private_pass * 1e6, bytes / private_pass * 1e-9);
  std::printf("  Each learner's step without the round:");
  for (std::size_t j = 0; j < run.compute_seconds.size(); ++j)
    std::printf("%s %.1f", j ? "," : "", run.compute_seconds[j] * 1e6);
  std::printf(" µs (the waits are their differences and each step's jitter)\n");
  if (learners > static_cast<int>(std::thread::hardware_concurrency())) return;
  // The faster of the two, so that a noisy private pass never loosens the bound; and the
  // fastest learner's step, as if every learner ran as fast.
  const double fastest = std::min(averaging, private_pass);
  const double compute = *std::min_element(run.compute_seconds.begin(), run.compute_seconds.end());
  std::printf("  With the faster of the two, %d learners on %d cores are at most %.2fx one at this step time\n",
              learners, learners, learners * compute / (compute + fastest / sync_every));
}

void summarize(const std::string& kind, int batch, const std::vector<int>& learners,
               const std::map<int, std::vector<double>>& rates) {
  const std::vector<double>& first = rates.at(learners.front());
  std::printf("\n%s, batch %d: median samples/s of %zu interleaved runs\n", kind.c_str(), batch, first.size());
  for (int k : learners) {
    const double rate = median(rates.at(k));
    std::printf("  %2d learner%s %10.0f  %5.2fx the first count\n", k, k == 1 ? " " : "s", rate, rate / median(first));
  }
}

}  // namespace

// Caps Starling (force_isa) and oneDNN (ONEDNN_MAX_CPU_ISA, read at its first call, which
// is later) at `isa`, then prints what each runs: a cap above the CPU's best leaves the best.
void cap_isa(const std::string& isa) {
  platform::Isa cap{};
  if (platform::parse_isa(isa, cap)) {
    platform::force_isa(cap);
    const char* onednn = cap == platform::Isa::scalar ? "SSE41" : cap == platform::Isa::avx2 ? "AVX2" : "AVX512_CORE";
    setenv("ONEDNN_MAX_CPU_ISA", onednn, 1);
  }
  std::printf("isa: starling %s", std::string(platform::isa_name(platform::active_isa())).c_str());
  if (kernels::backend_available(kernels::Backend::onednn))
    std::printf(", onednn %s", kernels::backend_isa(kernels::Backend::onednn).c_str());
  std::printf("\n");
}

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  cap_isa(o.isa);
  g_thread_clock = o.thread_clock;
  kernels::set_threads(1);
  // Re-measured before every run, the best so far kept: a figure taken while a neighbour on
  // the host held the core would flatter every percentage after it, and loosen the ceiling.
  Machine machine;
  machine.store_slots = 1e30;
  if (o.peak_only) {
    const auto first_gpt = std::find_if(o.models.begin(), o.models.end(), is_gpt);
    const std::string peak_model = first_gpt == o.models.end() ? std::string(kGptKind) : *first_gpt;
    std::printf("{\"isa\": \"%s\", \"fma_peak_gflops\": %.3f, \"gpt_flops_per_token\": %.0f}\n",
                std::string(platform::isa_name(platform::active_isa())).c_str(),
                bench::fma_peak_gflops(platform::active_isa(), o.thread_clock), gpt_flops_per_token(gpt_model(peak_model)));
    return 0;
  }
  const TrainTest data = make_synthetic(4096, 16, 1);
  for (const std::string& kind : o.models) {
    if (is_gpt(kind)) {
      for (int batch : o.batches)
        for (int r = 0; r < o.repeats; ++r) {
          machine.peak = std::max(machine.peak, bench::fma_peak_gflops(platform::active_isa(), o.thread_clock));
          const Run run = gpt_steps(gpt_model(kind), batch, o.steps > 0 ? o.steps : 40, o);
          if (r + 1 == o.repeats) report_gpt(gpt_model(kind), batch, o.steps > 0 ? o.steps : 40, run, machine.peak);
        }
      continue;
    }
    ModelSpec spec;
    spec.kind = kind;
    // Three products per GEMM layer, less the first one's input gradient, which no step computes.
    double macs = 0.0, first = 0.0;
    for (const LayerDesc& d : describe_model(spec)) {
      if (first == 0.0) first = gemm_macs(d);
      macs += gemm_macs(d);
    }
    const std::size_t params = Model(spec).param_count();
    for (int batch : o.batches) {
      const int steps = o.steps > 0 ? o.steps : kind == "mlp" ? 2000 : kind == "cnn" ? 200 : 60;
      // Learner counts interleaved over the repeats; the parts of each count's last run.
      std::map<int, std::vector<double>> rates;
      for (int r = 0; r < o.repeats; ++r)
        for (int k : o.learners) {
          machine.peak = std::max(machine.peak, bench::fma_peak_gflops(platform::active_isa(), o.thread_clock));
          machine.store_slots = std::min(machine.store_slots, bench::vector_store_slots(platform::active_isa()));
          const Run run = profile(spec, batch, steps, o, data, k);
          rates[k].push_back(k * batch / run.step_seconds);
          if (r + 1 < o.repeats) continue;
          report(kind, batch, k, steps, run, 2.0 * (3.0 * macs - first) * batch, params, machine);
          if (k > 1) report_round(run, steps, o.sync_every, params, k);
        }
      if (o.learners.size() > 1) summarize(kind, batch, o.learners, rates);
    }
  }
  return 0;
}
