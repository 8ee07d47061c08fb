#pragma once
// What a model will need in memory, computed from its description before anything is
// allocated, so that a model too large for the machine is refused at the key that makes it
// large instead of failing in the allocator. The figures are a floor: the exchange's
// buffers and the data set come on top.
#include "learners/models/model.h"

#include <string>
#include <vector>

namespace starling {

/// One part of a model: a top-level layer of its description, or a part of a GPT.
struct PartMemory {
  int layer = -1;       // index into describe_model's list; −1 for a GPT part
  std::string key;      // the model key that sizes it: "layers", "hidden", "kind", "width", "blocks", "context"
  std::string what;     // e.g. "dense of 1000000 units on 784 inputs"
  double parameters = 0;           // trainable floats
  double activations_per_sample = 0;  // floats a forward keeps for the backward, per sample
};

/// How the parts are held: floats kept per parameter (the arena, its gradients, the
/// optimizer's slots, for each learner, plus the node's central model with its gradients,
/// its previous value and a scratch arena, and its own optimizer where it steps the model)
/// and per activation (each learner's batch, and the central model's validation forward).
struct MemoryUse {
  int batch = 1;
  int learners = 1;
  int optimizer_slots = 0;   // sgd with momentum 1, adam/adamw 2
  int node_slots = 0;        // the node's optimizer (node.intra_sync = "average"): optimizer_slots, else 0
  int evaluation_batch = 0;  // samples a validation forward takes at once

  double part_bytes(const PartMemory& part) const;
};

/// The parts of `spec` in order; throws ModelError (model_description.h) as describe_model does.
std::vector<PartMemory> estimate_memory(const ModelSpec& spec);

/// The optimizer's slots per parameter for an optimizer kind and momentum.
int optimizer_slots(const std::string& kind, double momentum);

/// The machine's physical memory in bytes (MemTotal), 0 when it cannot be read.
double physical_memory_bytes();

/// "1.5 GiB", "16.0 TiB".
std::string format_bytes(double bytes);

}  // namespace starling
