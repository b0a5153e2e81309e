#pragma once
// Seed 001 §5.1's two generation tasks, made from question-summary hierarchies
// (eval/qs_hierarchy.h) as seq2seq examples (data.task = qs_hierarchy):
//
// - Task I, QSGen-Hier (QsTask::Hierarchy): one sample per top-level QS pair. The source is
//   the pair's question, then the document; the target is the pair's subtree linearised
//   without that question, so it starts with the root's summary:
//     source "Q1? <document>"  →  target "A1 [L↑] Q1.1? A1.1 [L-] Q1.2? A1.2 [L↑] Q1.2.1? A1.2.1"
// - Task II, QSGen-ChildQ (QsTask::ChildQuestions): one sample per pair that has children.
//   The source is "question summary", then the document; the target is the children's
//   questions in order, separated by spaces:
//     source "Q1? A1 <document>"  →  target "Q1.1? Q1.2?"
//
// The prompt goes in as the first paragraph of the document's root, so the document keeps its
// section tree (the input of HIBRIDS and of the section tokens). The document of an example
// is the whole input: as in the seed, the sections aligned with the hierarchy.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "strata/data/seq2seq_examples.h"
#include "strata/doc/document.h"
#include "strata/eval/qs_hierarchy.h"

namespace strata {

enum class QsTask { Hierarchy, ChildQuestions };

// "hierarchy" (Task I) or "child_questions" (Task II); strata::Error for any other name.
QsTask qs_task_from_name(std::string_view name);
const char* qs_task_name(QsTask task);

// One input → output pair of a task, before tokenization.
struct QsSample {
  std::string id;   // the example's id, then "#" and the pair's path: "hud-1#2" (second
                    // top-level pair), "hud-1#1.3" (its third child)
  Document source;  // the prompt paragraph, then the document
  std::string target;
};

// The samples one annotated example yields for `task`, in depth-first order of their pairs.
std::vector<QsSample> qs_samples(const QsExample& example, QsTask task);

// The samples of every example of a QS JSONL file (load_qs_hierarchies), tokenized as
// seq2seq examples: the reference is the untruncated target. strata::Error naming the file
// when it yields no sample (Task II needs pairs with children).
std::vector<Seq2SeqExample> load_qs_examples(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                             const TruncationOptions& options, QsTask task, bool verbose);

}  // namespace strata
