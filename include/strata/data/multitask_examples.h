#pragma once
// A multi-task suite (docs/formats.md, "Multi-task suites": what `strata data debian` and
// `strata data glue` write) read as encoder inputs: each example [CLS] text [SEP] (or, for a
// pair task, [CLS] text [SEP] text_b [SEP]), cut to at most max_tokens by trimming the longer
// text first (BERT's rule), with its task's index and label.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "strata/text/tokenizer.h"

namespace strata {

struct SuiteTask {
  std::string name;
  bool regression = false;
  bool pair = false;
  std::vector<std::string> labels;  // classification: the classes, in label-index order
  // How the task is scored (eval/classification_metrics.h): accuracy, macro_f1, f1 (of the
  // first label), mcc, pearson or spearman; tasks.json's "metric", else accuracy, or pearson
  // for a regression.
  std::string metric;
  bool transfer = false;  // a held-out task (tasks.json "transfer"): only read when named
  std::int64_t classes() const { return regression ? 1 : static_cast<std::int64_t>(labels.size()); }
};

struct MultitaskExample {
  std::size_t task = 0;           // index into the loaded tasks
  std::vector<std::int32_t> ids;  // framed and cut
  std::int64_t label = -1;        // classification: the class index
  double value = 0;               // regression: the target
};

// The tasks of SUITE/tasks.json, in its order, or the ones `names` lists in that order
// (empty = all but the held-out transfer tasks). strata::Error naming the file and field when it is malformed, or an unknown
// task and the known ones.
std::vector<SuiteTask> read_suite_tasks(const std::filesystem::path& suite_dir, const std::vector<std::string>& names = {});

// Every example of `split` ("train", "validation", "test") of each task, task by task, read
// from SUITE/tasks/TASK/SPLIT.jsonl (a missing file gives no examples of that task).
// strata::Error naming the file, line and field for a missing text, a label the task does not
// list, a non-numeric regression label, or a tokenizer without [CLS] (bos) and [SEP] (sep or eos).
std::vector<MultitaskExample> load_multitask_examples(const std::filesystem::path& suite_dir, const std::string& split,
                                                      const std::vector<SuiteTask>& tasks, const Tokenizer& tokenizer,
                                                      std::size_t max_tokens);

}  // namespace strata
