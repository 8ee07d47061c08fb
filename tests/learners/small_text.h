#pragma once
// What the text suites train: a corpus whose bytes follow from the ones before them, a GPT
// small enough to learn it in a few hundred milliseconds, its task, and an observer that
// ignores the run.
#include "learners/replicas/learner.h"
#include "learners/replicas/trainer.h"
#include "learners/tasks/text_task.h"
#include "tests/temp_dir.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace starling::testing {

// Two files of a 7-byte period: each byte follows from the ones before it.
inline TextCorpus periodic_corpus(const TempDir& dir) {
  std::vector<std::string> paths;
  for (const char* name : {"a", "b"}) {
    std::string text;
    for (int i = 0; i < 600; ++i) text += "starlin"[i % 7];
    paths.push_back(dir.file(name));
    std::ofstream(paths.back(), std::ios::binary) << text;
  }
  return TextCorpus::from_files(paths, 0.2);
}

// One block, two heads, width 16, context 12, AdamW, batch 4.
inline LearnerSpec small_gpt() {
  LearnerSpec s;
  s.model.kind = "gpt";
  s.model.blocks = 1, s.model.heads = 2, s.model.width = 16, s.model.context = 12;
  s.model.input = {1, 12, 1};
  s.model.classes = kByteVocabulary;
  s.optimizer.kind = "adamw";
  s.batch = 4;
  return s;
}

// The periodic corpus's task, training on all of its text (one peer), or on `part`.
inline std::shared_ptr<const TextTask> periodic_task(const TextCorpus& corpus) {
  return std::make_shared<const TextTask>(corpus, partition_text(corpus, 1, PartitionSpec{}).front(), 13);
}

class Quiet final : public TrainObserver {};

}  // namespace starling::testing
