// The config schema: one row per key (cli/config_schema.h); the rules across keys are in
// cli/config_checks.cpp.
#include "cli/config_schema.h"

#include "cli/compression_keys.h"
#include "cli/key_types.h"
#include "job/owner_keys.h"
#include "job/peer_graph.h"

#include "actors/backend_choice.h"
#include "learners/data/partition.h"
#include "learners/data/tokenizer.h"
#include "learners/models/gpt.h"
#include "learners/models/model_description.h"

#include <algorithm>
#include <limits>

namespace starling::cli {
namespace {

using V = const KeyValue&;
using namespace key_types;

// model.preset: "none" or a name of learners/models/gpt.h's table.
KeyType gpt_preset_choice() {
  std::vector<std::string> names{"none"};
  for (const GptPreset& p : kGptPresets) names.push_back(p.name);
  return choice("none", std::move(names));
}

// kernels.backend: "auto" (the default) or a backend's name.
KeyType backend_choice() {
  std::vector<std::string> names{actors::kAutoBackendName};
  names.insert(names.end(), std::begin(kernels::kBackendNames), std::end(kernels::kBackendNames));
  return choice(actors::kAutoBackendName, std::move(names));
}

std::chrono::milliseconds millis(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(seconds * 1000)));
}

// [run]: the run's name, seed, length and checkpoints.
std::vector<KeySpec> run_keys() {
  return {
    {"run.name", text("run"), "names the output files", [](V v, Config& c) { c.run.name = v.text; }},
    {"run.seed", integer(1, 0, kInt64Max), "model initialisation, data order and partition; same seed, same model",
     [](V v, Config& c) {
       c.run.seed = c.node.train.learner.seed = c.node.exchange.seed = static_cast<uint64_t>(v.integer);
       c.data.partition.seed = partition_seed(c.run.seed);
     }},
    {"run.epochs", number(1.0, 0.0, 1e6, kOpen), "may be fractional",
     [](V v, Config& c) { c.run.epochs = c.node.train.epochs = v.number; }},
    {"run.target_accuracy", number(0.0, 0.0, 1.0), "for `time_to_target_seconds`; 0 for none",
     [](V v, Config& c) { c.run.target_accuracy = v.number; }},
    {"run.eval_every", number(1.0, 0.0, 1e6, kOpen), "epochs between test-set evaluations",
     [](V v, Config& c) { c.run.eval_every = c.node.train.eval_every = v.number; }},
    {"run.steps", integer(0, 0, kInt64Max),
     "text: training steps of one `optimizer.batch` each, in place of `epochs` (a node of k learners takes steps / k "
     "iterations); 0: one step",
     [](V v, Config& c) { c.run.steps = v.integer; }},
    {"run.eval_steps", integer(0, 0, kInt64Max), "text: steps (batches) between validations; 0: only at the end",
     [](V v, Config& c) { c.run.eval_steps = v.integer; }},
    {"run.target_bpb", number(0.0, 0.0, 1e3), "text: validation bits per byte for `time_to_target_seconds`; 0 for none",
     [](V v, Config& c) { c.run.target_bpb = v.number; }},
    {"run.data_dir", text(""), "cache of packed datasets; empty: `$STARLING_DATA_DIR` or `~/.cache/starling`",
     [](V v, Config& c) { c.run.data_dir = v.text; }},
    {"run.out_dir", text("results"), "metrics CSV and default summary", [](V v, Config& c) { c.run.out_dir = v.text; }},
    {"run.checkpoint_dir", text("", KeyKind::path),
     "folder of checkpoints (a peer uses `peer<ID>/` inside it); empty: no checkpoints",
     [](V v, Config& c) { c.node.checkpoint_dir = v.text; }},
    {"run.checkpoint_every", integer(0, 0, kInt64Max), "iterations between checkpoints; 0: off; needs `checkpoint_dir`",
     [](V v, Config& c) { c.node.checkpoint_every = v.integer; }},
    {"run.init_from", text("", KeyKind::path),
     "language models: a safetensors file with nanoGPT's parameter names (as `bench/nanogpt.py` or `starling export` "
     "writes it) whose weights the GPT starts from in place of the seed's draw; its tensors must match the model's "
     "shapes; empty: the seed's draw",
     [](V v, Config& c) {
       c.run.init_from = v.text;
       c.run.init_from_at = v.at;
     }},
    {"run.checkpoint_keep", integer(3, 1, 1000), "newest checkpoints kept",
     [](V v, Config& c) { c.node.checkpoint_keep = static_cast<int>(v.integer); }},
  };
}

// [data]: the data set and its partition across peers.
std::vector<KeySpec> data_keys() {
  return {
    {"data.dataset", choice("fashion-mnist", {"fashion-mnist", "idx", "cifar10", "synthetic", "text"}),
     "`\"idx\"`: any IDX image set (MNIST, KMNIST, EMNIST…; image size and class count read from the files); "
     "`\"cifar10\"`: CIFAR-10's binary batches; `\"synthetic\"`: seeded, learnable (for tests); `\"text\"`: "
     "byte tokens from `path` for language models (see docs/language-models.md). "
     "The model's input and class count follow the data",
     [](V v, Config& c) {
       c.data.dataset = v.text;
       c.data.dataset_at = v.at;
     }},
    {"data.path", text("", KeyKind::path),
     "the set's folder; empty: Debian's `/usr/share/datasets/fashion-mnist`; needed for `\"idx\"` "
     "(`train-images-idx3-ubyte`, `train-labels-idx1-ubyte`, `t10k-…`, each `.gz` or plain) and `\"cifar10\"` "
     "(`data_batch_1.bin` … `data_batch_5.bin`, `test_batch.bin`). Nothing is downloaded; each set is converted "
     "once into the packed cache (`run.data_dir`), again when its files change. `\"text\"`: a file, or a folder "
     "whose regular files are read in name order (links, hidden files and `.dat` indexes skipped), e.g. Debian's "
     "`/usr/share/games/fortunes`",
     [](V v, Config& c) {
       c.data.path = v.text;
       c.data.path_at = v.at;
     }},
    {"data.validation_fraction", number(0.1, 0.0, 0.5),
     "`\"text\"`: each file's last fraction of bytes (rounded down) is held out for validation",
     [](V v, Config& c) { c.data.validation_fraction = v.number; }},
    {"data.tokenizer", choice("bytes", {"bytes", "sentencepiece"}),
     "`\"text\"`: what a token is: a byte (vocabulary 256), or a SentencePiece subword of a model of `vocab_size` "
     "tokens (`tokenizer_model`, trained on the training split when missing; see "
     "[tokenizer](language-models.md#subword-tokens-sentencepiece)). Metrics stay in bits per byte",
     [](V v, Config& c) {
       c.data.tokenizer = v.text;
       c.data.tokenizer_model_at = v.at;
     }},
    {"data.vocab_size", integer(2048, 1, 1000000),
     "`\"sentencepiece\"`: tokens in the vocabulary (the model's classes), the 256 byte tokens and the unknown "
     "token included; an existing `tokenizer_model` must hold as many",
     [](V v, Config& c) { c.data.vocab_size = static_cast<int>(v.integer); }},
    {"data.tokenizer_model", text("", KeyKind::path),
     "`\"sentencepiece\"`: the SentencePiece model file; trained first when missing (`starling tokenizer train`); "
     "empty: `tokenizer.model` in `run.checkpoint_dir`, or `<run.out_dir>/<run.name>.tokenizer.model` without one",
     [](V v, Config& c) {
       c.data.tokenizer_model = v.text;
       if (v.given) c.data.tokenizer_model_at = v.at;
     }},
    {"data.tokenizer_type", choice_of(kTokenizerTypes),
     "`\"sentencepiece\"`: the model SentencePiece trains, `\"bpe\"` or `\"unigram\"`",
     [](V v, Config& c) { c.data.tokenizer_type = v.text; }},
    {"data.synthetic_train", integer(6000, 10, 10000000), "size of the synthetic training set",
     [](V v, Config& c) { c.data.synthetic_train = static_cast<int>(v.integer); }},
    {"data.synthetic_test", integer(1000, 10, 10000000), "size of the synthetic test set",
     [](V v, Config& c) { c.data.synthetic_test = static_cast<int>(v.integer); }},
    {"data.partition", choice_of(kPartitionNames),
     "how the training set is split across peers (see [Partitions](heterogeneous-data.md#partitions-across-peers)); "
     "`\"by-file\"`: text only, each peer its own files; text takes `\"iid\"`, `\"by-file\"` and `\"dirichlet\"` "
     "(over its files)",
     [](V v, Config& c) {
       c.data.partition.kind = parse_partition(v.text);
       c.data.partition_at = v.at;
     }},
    {"data.alpha", number(0.5, 0.0, kInf, kOpen), "`\"dirichlet\"`: the concentration α; small α, few peers per class",
     [](V v, Config& c) {
       c.data.partition.alpha = v.number;
       c.data.alpha_at = v.at;
     }},
    {"data.classes_per_peer", integer(2, 1, 256),
     "`\"shards\"`: classes per peer, at most the dataset's classes; peers × this must reach the classes",
     [](V v, Config& c) {
       c.data.partition.classes_per_peer = static_cast<int>(v.integer);
       c.data.classes_per_peer_at = v.at;
     }},
  };
}

// [model]: a preset or a layer list.
std::vector<KeySpec> model_keys() {
  return {
    {"model.kind", choice(ModelSpec{}.kind, model_preset_names()),
     "a preset layer list: `\"mlp\"` (dense layers of `hidden`), `\"cnn\"` (conv5×5×32–pool–conv5×5×64–pool–"
     "dense128–dense10) or `\"resnet8\"` (conv3×3×16 + GroupNorm(8) stem, basic blocks 16, 32/2, 64/2 with "
     "projection shortcuts, global average pool, dense); `\"gpt\"`: nanoGPT on `data.dataset = \"text\"` (`blocks`, `heads`, `width`, `context`; "
     "see docs/language-models.md); `\"layers\"` when `layers` is given",
     [](V v, Config& c) { c.node.train.learner.model.kind = v.text; }},
    {"model.hidden", integers({256, 128}), "MLP hidden layer sizes",
     [](V v, Config& c) { c.node.train.learner.model.hidden = v.integers; }},
    {"model.layers", of_kind(KeyKind::layers),
     "the model as a layer list instead of a preset: tables of a `kind` and its keys (those without a default "
     "required): " + layer_kinds_doc() + ". The last layer gives one value per class; a list that starts with a "
     "`token_embedding` is a language model on `data.dataset = \"text\"` (beside `context`), and its last layer "
     "gives one value per byte at each position. `configs/fmnist-cnn-layers.toml` spells out the CNN "
     "preset (same seed, same bits); `starling model --layers` writes any preset, the GPT included, as its list",
     nullptr},
    {"model.preset", gpt_preset_choice(),
     "a GPT size (`model.kind = \"gpt\"`) that sets the defaults of `blocks`, `heads`, `width` and `context`: "
     "`\"gpt-nano\"` 4 × 4 × 128, context 64 (nanoGPT's CPU configuration, the defaults); `\"gpt-10m\"` "
     "6 × 6 × 384, context 256 (nanoGPT's Shakespeare-char); `\"gpt2-small\"` 12 × 12 × 768, context 1024 "
     "(GPT-2 small; on bytes its vocabulary is 256); keys set beside it win",
     nullptr},
    {"model.blocks", integer(4, 1, 1024), "`\"gpt\"`: transformer blocks (nanoGPT's `n_layer`)",
     [](V v, Config& c) { c.node.train.learner.model.blocks = static_cast<int>(v.integer); }},
    {"model.heads", integer(4, 1, 1 << 16), "`\"gpt\"`: attention heads; they divide `width`",
     [](V v, Config& c) { c.node.train.learner.model.heads = static_cast<int>(v.integer); }},
    {"model.width", integer(128, 1, 1 << 16), "`\"gpt\"`: embedding width (nanoGPT's `n_embd`)",
     [](V v, Config& c) { c.node.train.learner.model.width = static_cast<int>(v.integer); }},
    {"model.mlp", choice_of(kGptMlps),
     "`\"gpt\"`: each block's MLP: `\"gelu\"`, nanoGPT's 4× MLP with exact GELU; `\"swiglu\"`, the SwiGLU "
     "feed-forward W2·(silu(W1 x) ⊙ W3 x) with 8/3 × `width` hidden units (rounded up to a multiple of 8), about "
     "as many parameters",
     [](V v, Config& c) { c.node.train.learner.model.mlp = v.text; }},
    {"model.context", integer(64, 1, 1 << 20),
     "language models: bytes of context; a training window is `context` + 1 bytes, and every text file's "
     "training part must hold one",
     [](V v, Config& c) {
       c.node.train.learner.model.context = static_cast<int>(v.integer);
       c.data.context_at = v.at;
     }},
  };
}

// [optimizer]: the update rule and the learning-rate schedule.
std::vector<KeySpec> optimizer_keys() {
  return {
    {"optimizer.kind", choice("sgd", {"sgd", "adam", "adamw"}),
     "the update rule; `\"adamw\"`: decoupled weight decay on matrices only, global-norm clipping (see "
     "docs/language-models.md)",
     [](V v, Config& c) { c.node.train.learner.optimizer.kind = v.text; }},
    {"optimizer.lr", number(0.05, 0.0, 1e3, kOpen), "peak learning rate",
     [](V v, Config& c) { c.node.train.schedule.lr = v.number; }},
    {"optimizer.momentum", number(0.9, 0.0, 0.999999),
     "SGD momentum; under `exchange.mode = \"clique-averaging\"` it acts on the clique's mean change, not the local gradient",
     [](V v, Config& c) { c.node.train.learner.optimizer.momentum = v.number; }},
    {"optimizer.nesterov", flag(false), "SGD: Nesterov momentum",
     [](V v, Config& c) { c.node.train.learner.optimizer.nesterov = v.flag; }},
    {"optimizer.weight_decay", number(0.0, 0.0, 1.0),
     "sgd, adam: L2, folded into the gradient; adamw: decoupled, w·(1 − lr·λ), on dense weights and convolution "
     "kernels, not on biases or normalisations",
     [](V v, Config& c) { c.node.train.learner.optimizer.weight_decay = v.number; }},
    {"optimizer.beta1", number(0.9, 0.0, 0.999999), "Adam, AdamW: first-moment decay",
     [](V v, Config& c) { c.node.train.learner.optimizer.beta1 = v.number; }},
    {"optimizer.beta2", number(0.999, 0.0, 0.99999999), "Adam, AdamW: second-moment decay",
     [](V v, Config& c) { c.node.train.learner.optimizer.beta2 = v.number; }},
    {"optimizer.clip_norm", number(1.0, 0.0, 1e6, kOpen),
     "AdamW: the gradient's global L2 norm is clipped to this before each step (nanoGPT's 1.0); only with "
     "`kind = \"adamw\"`",
     [](V v, Config& c) { c.node.train.learner.optimizer.clip_norm = v.number; }},
    {"optimizer.batch", integer(32, 1, 65536), "samples per step, per learner",
     [](V v, Config& c) { c.node.train.learner.batch = static_cast<int>(v.integer); }},
    {"optimizer.schedule", choice("constant", {"constant", "step", "cosine"}),
     "learning rate over time: `\"step\"` × `gamma` every `step_epochs`, `\"cosine\"` to `min_lr` at the last step",
     [](V v, Config& c) { c.node.train.schedule.kind = v.text; }},
    {"optimizer.warmup_steps", integer(0, 0, kInt32Max), "steps of linear warm-up",
     [](V v, Config& c) { c.node.train.schedule.warmup_steps = v.integer; }},
    {"optimizer.step_epochs", number(1.0, 0.0, kInf, kOpen), "step schedule: epochs between drops",
     [](V v, Config& c) { c.node.train.schedule.step_epochs = v.number; }},
    {"optimizer.gamma", number(0.1, 0.0, 1.0, kOpen), "step schedule: the factor of each drop",
     [](V v, Config& c) { c.node.train.schedule.gamma = v.number; }},
    {"optimizer.min_lr", number(0.0, 0.0, 1e3), "cosine schedule: the rate it decays to, at most `lr`",
     [](V v, Config& c) { c.node.train.schedule.min_lr = v.number; }},
  };
}

// [kernels] and [node]: a peer's compute and its learners.
std::vector<KeySpec> node_keys() {
  return {
    {"kernels.backend", backend_choice(),
     "`\"auto\"`: the faster of the two for this model, timed at start; `\"native\"`: Starling's kernels; `\"onednn\"`: oneDNN's (not in a build configured with `-DSTARLING_ONEDNN=OFF`)",
     [](V v, Config& c) {
       c.node.choose_backend = v.text == actors::kAutoBackendName;
       if (!c.node.choose_backend) kernels::parse_backend(v.text, c.node.train.learner.backend);
     }},
    {"kernels.threads", integer(1, 1, 1024), "threads per kernel call (parallelism normally comes from learners)",
     [](V v, Config& c) { c.kernel_threads = static_cast<int>(v.integer); }},

    {"node.learners", integer(1, 1, 256, KeyKind::integer_or_auto),
     "learners in the node (actors, each on a thread of its own), or `\"auto\"` (Crossbow's auto-tuning)",
     [](V v, Config& c) { c.node.learners = static_cast<int>(v.integer); }},
    {"node.intra_sync", choice_of(actors::kIntraSyncNames),
     "`\"sma\"`: synchronous model averaging; `\"average\"`: synchronous SGD (the default with `adam` or `adamw` on several learners, or with "
     "`exchange.average = \"gradients\"`); `\"none\"`: independent replicas",
     [](V v, Config& c) { actors::parse_intra_sync(v.text, c.node.intra_sync); }},
    {"node.alpha", number(0.0, 0.0, 1.0), "SMA elasticity α; 0: 1/learners",
     [](V v, Config& c) { c.node.alpha = v.number; }},
    {"node.momentum", number(0.0, 0.0, 0.999), "momentum μ of the central model",
     [](V v, Config& c) { c.node.momentum = v.number; }},
    {"node.sync_every", integer(1, 1, 1000000), "iterations between SMA corrections",
     [](V v, Config& c) { c.node.sync_every = static_cast<int>(v.integer); }},
    {"node.threads", integer(0, 0, 1024), "CAF scheduler threads; 0: all cores",
     [](V v, Config& c) { c.node.threads = static_cast<int>(v.integer); }},
    {"node.autotune_threshold", number(0.1, 0.0, 10.0), "add learners while throughput rises by more than this",
     [](V v, Config& c) { c.node.autotune_threshold = v.number; }},
    {"node.max_learners", integer(16, 1, 256), "ceiling for auto-tuning (never above the cores)",
     [](V v, Config& c) { c.node.max_learners = static_cast<int>(v.integer); }},
    {"node.slowdown", number(1.0, 1.0, 1e3),
     "emulates a CPU this many times slower, for tests of slow peers: after each step the learners sleep "
     "(slowdown − 1) × the step's compute time, counted as compute (docs/swarm.md#slow-peers)",
     [](V v, Config& c) { c.node.slowdown = v.number; }},
  };
}

// [exchange]: how peers mix their models, and how they cope with peers that die, join, stall or flood.
std::vector<KeySpec> exchange_keys() {
  return {
    {"exchange.mode", choice_of(gossip::kExchangeModeNames),
     "how peers mix their models (`\"gradient-tracking\"`: gossip with a tracker of the average local change, "
     "exact on heterogeneous data; `\"push-sum\"`: SGP's push-sum gossip, a numerator and a weight per peer, "
     "the model their quotient, on SGP's graph with `topology = \"one-peer-exponential\"`; `\"exact-diffusion\"`: "
     "D-PSGD corrected by the last round's local change, exact on heterogeneous data at D-PSGD's bytes; "
     "`\"clique-averaging\"`: D-PSGD on `\"d-cliques\"` stepping with its clique's mean change, the momentum on that "
     "mean, Bellet et al.'s Clique Averaging); `\"none\"` for one node",
     [](V v, Config& c) { gossip::parse_exchange_mode(v.text, c.node.exchange.mode); }},
    {"exchange.topology", choice(job::topology_names().front(), job::topology_names()),
     "for gossip, gradient tracking, exact diffusion, push-sum and clique averaging: the graph of neighbours (`\"d-cliques\"`: cliques whose pooled "
     "label distributions are close to the global one, chosen from the data partition, joined as `inter_clique` says; "
     "the default under `\"clique-averaging\"`)",
     [](V v, Config& c) { c.node.exchange.topology = v.text; }},
    {"exchange.random_degree", integer(3, 1, 1024), "degree of the `\"random\"` regular graph",
     [](V v, Config& c) { c.node.exchange.random_degree = static_cast<int>(v.integer); }},
    {"exchange.clique_size", integer(0, 0, 1024),
     "peers per clique of `\"d-cliques\"`; 0: the dataset's number of classes",
     [](V v, Config& c) {
       c.node.exchange.clique_size = static_cast<int>(v.integer);
       c.clique_size_at = v.at;
     }},
    {"exchange.inter_clique", choice(job::inter_clique_names().front(), job::inter_clique_names()),
     "how `\"d-cliques\"` joins its cliques: `\"fully-connected\"`, one edge between every pair of cliques; "
     "`\"small-world\"`, the paper's sparser edges, each clique to the two nearest of every exponentially larger "
     "stretch of a ring of cliques (about 4·log2(cliques) a clique)",
     [](V v, Config& c) { job::parse_inter_clique(v.text, c.node.exchange.inter_clique); }},
    {"exchange.ring_peers", integer(0, 0, 1000000),
     "`\"ring-and-leaves\"`: the first this many peers form a ring, each later one is a leaf of one ring peer, two "
     "to each in turn (with attacking leaves, ClippedGossip's Byzantine-majority graph); 0: all on the ring",
     [](V v, Config& c) { c.node.exchange.ring_peers = static_cast<int>(v.integer); }},
    {"exchange.period", integer(1, 1, 1000000), "iterations between exchanges; 10 when unset under `\"local-sgd\"`",
     [](V v, Config& c) { c.node.period = static_cast<int>(v.integer); }},
    {"exchange.overlap", flag(false),
     "mix a snapshot of z beside the learners' compute and apply it when it lands (`overlap_steps`), strict after "
     "the last iteration and at checkpoints (see [strict or overlapped](algorithms.md#when-the-exchange-runs-strict-or-"
     "overlapped)); `allreduce`, `local-sgd`, `gossip`, with or without an outer step; with `async-gossip`, a "
     "gradient all-reduce or an algorithm that steps from the last mixed model a config error (exit 2)",
     [](V v, Config& c) { c.node.overlap = v.flag; }},
    {"exchange.overlap_steps", integer(0, 0, 1000000),
     "with `overlap`: the iterations (text: steps) a mix runs beside before it lands, fewer than `period` "
     "(Streaming DiLoCo's τ); 0: it lands at the next exchange point",
     [](V v, Config& c) { c.node.overlap_steps = static_cast<int>(v.integer); }},
    {"exchange.timeout_seconds", number(60.0, 0.0, 86400.0, kOpen),
     "a view change, a join or a model hand-over that waits longer fails the run; the first round's deadline (later "
     "rounds' are learned: 4× the longest of the last 16, at least `failure_timeout_seconds`, doubled after each "
     "round cut short; a round cut short is retried in a new view)",
     [](V v, Config& c) { c.node.exchange.timeout = millis(v.number); }},
    {"exchange.gamma", number(0.5, 0.0, 1.0, kOpen),
     "CHOCO-SGD's consensus step; NoLoCo's pull of each outer model toward its partner's (gossip with an outer step)",
     [](V v, Config& c) { c.node.exchange.gamma = v.number; }},
    {"exchange.quasi_global_momentum", number(0.0, 0.0, 0.999999),
     "with `\"gossip\"` (D-PSGD): quasi-global momentum μ (Lin et al. 2021), a momentum of the mixed model's "
     "change that replaces the local one (`optimizer.momentum` must be 0); 0: off",
     [](V v, Config& c) { c.node.exchange.quasi_global_momentum = v.number; }},
    {"exchange.average", choice("models", {"models", "gradients"}),
     "what an all-reduce every step averages: `\"models\"` after each peer's own optimizer step, "
     "or `\"gradients\"` before one common step, as PyTorch's DDP (with AdamW the two differ: see "
     "docs/language-models.md); `\"gradients\"` makes `node.intra_sync` default to `\"average\"`",
     [](V v, Config& c) { c.node.average_gradients = v.text == "gradients"; }},
    {"exchange.outer_lr", number(1.0, 0.0, 100.0, kOpen),
     "with `\"allreduce\"` or `\"local-sgd\"`: the outer learning rate α of SlowMo/DiLoCo's outer step on the "
     "change since the last synchronisation (see [SlowMo/DiLoCo](algorithms.md#outer-optimizer-slowmo--diloco)); "
     "1 with `outer_momentum = 0`: plain all-reduce; with `\"gossip\"`, ≠ 1 or with an outer momentum: NoLoCo's "
     "outer step with one random partner a round (docs/language-models.md)",
     [](V v, Config& c) { c.node.exchange.outer_lr = v.number; }},
    {"exchange.outer_momentum", number(0.0, 0.0, 0.999999),
     "with `\"allreduce\"`, `\"local-sgd\"` or `\"gossip\"` (NoLoCo): the outer momentum β; 0: none",
     [](V v, Config& c) { c.node.exchange.outer_momentum = v.number; }},
    {"exchange.outer_nesterov", flag(true), "the outer momentum as Nesterov's (DiLoCo) rather than heavy ball (SlowMo)",
     [](V v, Config& c) { c.node.exchange.outer_nesterov = v.flag; }},
    {"exchange.aggregator", choice_of(gossip::kAggregatorNames),
     "with `\"gossip\"` (D-PSGD): how a peer mixes its neighbours' models in (docs/byzantine.md): the mean, "
     "`\"clipped\"` (ClippedGossip's self-centred clipping), or coordinate-wise `\"trimmed-mean\"` or `\"median\"`",
     [](V v, Config& c) { gossip::parse_aggregator(v.text, c.node.exchange.aggregator.kind); }},
    {"exchange.clip_radius", number_or_adaptive(0.0, 1e12),
     "`\"clipped\"`: the radius τ of every neighbour's difference; `\"adaptive\"`: each round the second-largest "
     "neighbour distance",
     [](V v, Config& c) { c.node.exchange.aggregator.clip_radius = v.number; }},
    {"exchange.clip_relative", number(0.0, 0.0, 1e6),
     "`\"clipped\"`: each round τ = this × ‖the peer's own change since its last round‖ / Σ_j W_ij, so its "
     "neighbours together move it at most this many times as far as its own training does; 0: off (`clip_radius` rules)",
     [](V v, Config& c) { c.node.exchange.aggregator.clip_relative = v.number; }},
    {"exchange.trim", integer(1, 1, 100000), "`\"trimmed-mean\"`: values dropped at each end of every coordinate",
     [](V v, Config& c) { c.node.exchange.aggregator.trim = static_cast<int>(v.integer); }},
    {"exchange.max_staleness", integer(4, 0, 1000000), "async gossip: steps ahead of a neighbour",
     [](V v, Config& c) { c.node.exchange.max_staleness = static_cast<uint64_t>(v.integer); }},
    {"exchange.slow_peers", choice("wait", {"wait", "defer"}),
     "`allreduce`, `local-sgd`: `\"wait\"`: every round waits for every member; `\"defer\"`: the outer step goes on "
     "without a slow peer and applies its pseudo-gradient at a later round (see [slow peers](swarm.md#slow-peers))",
     [](V v, Config& c) { c.node.exchange.defer_slow_peers = v.text == "defer"; }},
    {"exchange.staleness_scaling", flag(false),
     "async gossip: divide the mixed-in change by the gap; `slow_peers = \"defer\"`: weigh a late pseudo-gradient "
     "by 1/(1 + its staleness in rounds)",
     [](V v, Config& c) { c.node.exchange.staleness_scaling = v.flag; }},
    {"exchange.heartbeat_seconds", number(0.5, 0.0, 60.0, kOpen),
     "every peer's I/O thread heartbeats the peers it watches (at most 2·⌈log2 n⌉) this often",
     [](V v, Config& c) { c.node.exchange.heartbeat = millis(v.number); }},
    {"exchange.failure_timeout_seconds", number(5.0, 0.0, 3600.0, kOpen),
     "a peer silent this long is dead; must exceed the heartbeat",
     [](V v, Config& c) { c.node.exchange.failure_timeout = millis(v.number); }},
    {"exchange.start_timeout_seconds", number(30.0, 0.0, 86400.0, kOpen),
     "how long peers wait at the start after the last new peer was heard; then they go on if `min_peers` are "
     "there (else wait as long again), and one never heard from is dead",
     [](V v, Config& c) { c.node.exchange.start_timeout = millis(v.number); }},
    {"exchange.min_peers", integer(0, 0, 100000),
     "with fewer live peers the survivors stop (checkpoint, message, exit 1); 0: a majority of the `[[peer]]` entries",
     [](V v, Config& c) { c.node.exchange.min_peers = static_cast<int>(v.integer); }},
    {"exchange.max_message_mb", number(16.0, 0.0, 2048.0, kOpen),
     "larger frames from a peer are dropped (`oversized`); beyond twice that ZeroMQ cuts the connection",
     [](V v, Config& c) { c.node.exchange.max_message_bytes = static_cast<uint32_t>(std::llround(v.number * 1048576.0)); }},
    {"exchange.max_receive_rate", integer(50000, 0, 100000000),
     "messages per second accepted from one peer (a one-second burst); more are dropped (`rate_limited`); 0 for no cap",
     [](V v, Config& c) { c.node.exchange.max_messages_per_second = static_cast<uint32_t>(v.integer); }},
  };
}

// [launch]: how `starling launch` runs the peers.
std::vector<KeySpec> launch_keys() {
  return {
    {"launch.in_process", flag(false),
     "every peer a thread of one process (each with the same exchange, the peers reaching each other in memory), "
     "for experiments with up to a thousand peers on one host; `starling launch --in-process` sets it",
     [](V v, Config& c) { c.launch.in_process = v.flag; }},
    {"launch.endpoints", choice("peers", {"peers", "slurm", "openmpi"}),
     "where the job's peers come from: `\"peers\"`, the `[[peer]]` list; `\"slurm\"`, the Slurm job step the "
     "peers are tasks of (`srun`): peer i is task `SLURM_PROCID` i on the node Slurm placed it on, at `base_port` "
     "plus its index among the step's tasks on that node; `\"openmpi\"`, the ranks of `mpirun` (all on one host). "
     "Either with no `[[peer]]` entries (docs/slurm.md)",
     [](V v, Config& c) {
       c.launch.endpoints = v.text;
       c.launch.endpoints_at = v.at;
     }},
    {"launch.base_port", integer(5600, 1, 65535),
     "with `endpoints` from an allocation: the port of the first peer on each node; a node's further peers take "
     "the ports after it",
     [](V v, Config& c) { c.launch.base_port = static_cast<int>(v.integer); }},
  };
}

// [monitor]: watching a peer while it trains (docs/monitoring.md).
std::vector<KeySpec> monitor_keys() {
  return {
    {"monitor.metrics_port", integer(0, 0, 65535),
     "Prometheus metrics at `/metrics` and the live page at `/` on this port for the first peer, on `metrics_port` "
     "plus its index in the `[[peer]]` list for every other; 0: off; `--metrics-port` sets it",
     [](V v, Config& c) {
       c.monitor.metrics_port = static_cast<int>(v.integer);
       c.monitor.port_at = v.at;
     }},
    {"monitor.bind", text("127.0.0.1"), "the IPv4 address the monitor listens on; `\"0.0.0.0\"`: every interface",
     [](V v, Config& c) { c.monitor.bind = v.text; }},
    {"monitor.linger_seconds", number(0.0, 0.0, 3600.0),
     "keep serving this long after training ends, so the last scrape sees the final counters",
     [](V v, Config& c) { c.monitor.linger_seconds = v.number; }},
  };
}

// [security], [swarm] and [[peer]]: who the peers are, how they authenticate, who may join.
std::vector<KeySpec> peer_keys() {
  return {
    {"security.curve", flag(false), "CURVE encryption and authentication between peers", nullptr},
    {"security.keys_dir", text("keys", KeyKind::path), "with `curve`: the folder of a roster's key pairs (`starling keygen`); a swarm peer makes its own",
     [](V v, Config& c) { c.node.exchange.keys_dir = v.text; }},

    {"swarm.owner_key", text(""),
     "the job owner's Ed25519 public key, 64 hex digits (`starling invite --new-owner-key`): peers started with "
     "`--listen`/`--bootstrap` admit a newcomer only with the owner's invitation (docs/swarm.md)",
     [](V v, Config& c) {
       if (!v.text.empty() && !job::is_owner_public_key(v.text))
         throw ConfigError(v.at + ": expected 64 hex digits (an Ed25519 public key), got \"" + v.text + "\"");
       c.node.exchange.owner_key = v.text;
     }},
    {"swarm.data_parts", integer(4, 1, 65536),
     "a swarm splits the training set into this many equal parts (`data.partition = \"iid\"`); peer `id` trains on "
     "part `id` mod `data_parts`, and `run.epochs` count over one part",
     [](V v, Config& c) { c.swarm_data_parts = static_cast<int>(v.integer); }},
    {"swarm.start_peers", integer(1, 1, 65536),
     "the peer that starts a swarm (`--listen` alone) admits newcomers until the job has this many peers, itself "
     "included, before its first round (at most `exchange.start_timeout_seconds`)",
     [](V v, Config& c) { c.node.exchange.swarm_start_peers = static_cast<std::size_t>(v.integer); }},
    {"swarm.join_timeout_seconds", number(30.0, 0.0, 3600.0, kOpen),
     "a newcomer's wait for its `--bootstrap` addresses to answer, retried with back-off, before it gives up (exit 2)",
     [](V v, Config& c) { c.swarm_join_timeout_seconds = v.number; }},

    {"peer.id", required(integer(0, 0, kInt32Max)), "every peer of the job, in ring order: its id",
     [](V v, Config& c) { c.peers.back().id = static_cast<uint32_t>(v.integer); }},
    {"peer.endpoint", required(text("")), "`tcp://host:port`", [](V v, Config& c) { c.peers.back().endpoint = v.text; }},
    {"peer.learners", integer(0, 0, 256), "its learners; 0: `node.learners`; the same on every peer",
     [](V v, Config& c) { c.peers.back().learners = static_cast<int>(v.integer); }},
    {"peer.count", integer(1, 1, 65536),
     "this entry stands for `count` peers in ring order: ids `id`, `id`+1, ... on ports `port`, `port`+1, ... of one host",
     [](V v, Config& c) { c.peers.back().count = static_cast<int>(v.integer); }},
    {"peer.attack", choice_of(gossip::kAttackNames),
     "an attacking peer (docs/byzantine.md): a real peer that sends crafted models to its honest neighbours; "
     "`exchange.mode = \"gossip\"` only; reported apart from the honest peers",
     [](V v, Config& c) {
       gossip::parse_attack(v.text, c.peers.back().attack.kind);
       c.peers.back().attack_at = v.at;
     }},
    {"peer.attack_scale", number(1.0, 0.0, 1e6, kOpen), "the attack's strength s (docs/byzantine.md)",
     [](V v, Config& c) { c.peers.back().attack.scale = v.number; }},
  };
}

// The keys that may differ between one job's peers: where its files lie on each machine,
// its threads, its launch and monitor, its keys folder, a newcomer's wait. The rest define
// the job (a swarm compares them; docs/swarm.md).
bool per_peer_key(const std::string& name) {
  static const std::vector<std::string> keys = {
      "run.name", "run.data_dir", "run.out_dir", "run.checkpoint_dir", "run.checkpoint_every", "run.checkpoint_keep",
      "run.init_from", "data.path", "data.tokenizer_model", "kernels.backend", "kernels.threads", "node.threads",
      "node.autotune_threshold", "node.max_learners", "node.slowdown", "security.keys_dir", "swarm.start_peers",
      "swarm.join_timeout_seconds"};
  const std::string section = split_key(name).first;
  return section == "launch" || section == "monitor" || section == "peer" ||
         std::find(keys.begin(), keys.end(), name) != keys.end();
}

}  // namespace

const std::vector<KeySpec>& config_schema() {
  static const std::vector<KeySpec> schema = [] {
    // The sections in the order the README lists them; a new key is one row in its section.
    std::vector<KeySpec> all;
    for (auto keys : {run_keys, data_keys, model_keys, optimizer_keys, node_keys, exchange_keys, compression_keys, launch_keys,
                       monitor_keys, peer_keys})
      for (KeySpec& k : keys()) all.push_back(std::move(k));
    for (KeySpec& k : all) k.per_peer = per_peer_key(k.name);
    return all;
  }();
  return schema;
}

std::vector<std::string> config_sections() {
  std::vector<std::string> sections;
  for (const KeySpec& k : config_schema()) {
    std::string section = split_key(k.name).first;
    if (sections.empty() || sections.back() != section) sections.push_back(std::move(section));
  }
  return sections;
}

std::pair<std::string, std::string> split_key(const std::string& name) {
  const auto dot = name.find('.');
  return {name.substr(0, dot), name.substr(dot + 1)};
}

}  // namespace starling::cli
