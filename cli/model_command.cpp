#include "cli/model_command.h"

#include "cli/config.h"
#include "cli/model_config.h"
#include "job/exit_codes.h"
#include "job/task_kind.h"
#include "learners/models/model.h"
#include "learners/models/model_description.h"
#include "learners/models/model_export.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>

namespace starling::cli {

using job::exit_code_of;
using job::task_kind;

namespace {

std::string shape_text(Shape s) { return std::to_string(s.h) + "x" + std::to_string(s.w) + "x" + std::to_string(s.c); }

std::string or_dash(int value) { return value > 0 ? std::to_string(value) : "-"; }

// A key's value where the row has it, 0 (printed "-") where not.
int key_or_zero(const LayerDesc& d, const char* key) { return d.row->key(key) ? d.integer(key) : 0; }

void print_rows(const std::vector<LayerDesc>& layers, const std::string& indent) {
  for (const LayerDesc& d : layers) {
    const bool window = d.row->key("stride") != nullptr;
    const std::string name = indent + std::string(d.kind()) + (d.row->label ? d.row->label(d) : "");
    std::printf("%-24s %6s %6s %6s %7s %12s %12s\n", name.c_str(), or_dash(key_or_zero(d, "size")).c_str(),
                or_dash(key_or_zero(d, "kernel")).c_str(), window ? std::to_string(d.integer("stride")).c_str() : "-",
                window ? std::to_string(key_or_zero(d, "padding")).c_str() : "-", shape_text(d.in).c_str(),
                shape_text(d.out).c_str());
    if (!d.row->nested) continue;
    std::printf("%s  body:\n", indent.c_str());
    print_rows(d.body, indent + "    ");
    std::printf("%s  shortcut:%s\n", indent.c_str(), d.shortcut.empty() ? " identity" : "");
    print_rows(d.shortcut, indent + "    ");
  }
}

void print_table(const ModelSpec& spec) {
  if (const ModelKind* kind = model_kind(spec.kind); kind && kind->heading) std::printf("%s\n", kind->heading(spec).c_str());
  std::printf("%-24s %6s %6s %6s %7s %12s %12s\n", "layer", "size", "kernel", "stride", "padding", "input", "output");
  print_rows(describe_model(spec), "");
  std::printf("%zu parameters\n", Model(spec).trainable_count());
}

}  // namespace

int run_model(const ModelOptions& options) {
  return exit_code_of([&] {
    Config config = load_config(options.config, options.overrides);
    ModelSpec& spec = config.node.train.learner.model;
    task_kind(config.data).fit_model(config);
    if (options.json) std::cout << model_json(spec) << "\n";
    else if (options.layers) std::cout << layers_toml(spec);
    else {
      print_table(spec);
      const TrainingMemory memory = training_memory(config);
      std::printf("training needs at least %s: %d learner(s) at batch %d with their optimizer state\n",
                  format_bytes(memory.bytes).c_str(), memory.learners, config.node.train.learner.batch);
    }
    return 0;
  });
}

}  // namespace starling::cli
