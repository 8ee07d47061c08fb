// The task registry's lookups (job/task_kind.h): the only place that tells the kinds of data
// and of model apart by name.
#include "job/task_kind.h"

#include "learners/models/gpt.h"
#include "learners/models/model_description.h"

namespace starling::job {

const TaskKind& task_kind(const DataOptions& data) {
  return data.dataset == "text" ? language_model_kind() : classification_kind();
}

const TaskKind& model_task(const ModelSpec& model) {
  return is_language_model(model) ? language_model_kind() : classification_kind();
}

bool always_on_tokens(const ModelSpec& model) {
  const ModelKind* kind = model_kind(model.kind);
  return kind && kind->language_model;
}

bool is_gpt(const ModelSpec& model) { return model.kind == kGptKind; }

}  // namespace starling::job
