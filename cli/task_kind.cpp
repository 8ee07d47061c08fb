#include "cli/task_kind.h"

namespace starling::cli {

const TaskKind& task_kind(const DataOptions& data) {
  return data.dataset == "text" ? language_model_kind() : classification_kind();
}

}  // namespace starling::cli
