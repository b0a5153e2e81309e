#include "strata/data/qs_examples.h"

#include <fmt/format.h>

#include <cstdio>

#include "strata/core/error.h"
#include "strata/core/strings.h"
#include "strata/doc/dataset.h"

namespace strata {

namespace {

// `document` with `prompt` as the root's first paragraph; sections and their text unchanged.
Document with_prompt(const Document& document, std::string_view prompt) {
  nlohmann::json native = to_native_json(document);
  nlohmann::json& paragraphs = native["paragraphs"];
  paragraphs.insert(paragraphs.begin(), std::string(trim(prompt)));
  return from_native_json(native, {}, 0);
}

std::string join_nonempty(std::string_view a, std::string_view b) {
  const std::string_view x = trim(a), y = trim(b);
  if (x.empty()) return std::string(y);
  if (y.empty()) return std::string(x);
  return std::string(x) + " " + std::string(y);
}

void child_question_samples(const QsExample& example, const QsNode& node, const std::string& path,
                            std::vector<QsSample>& out) {
  if (!node.children.empty()) {
    std::string questions;
    for (const QsNode& child : node.children) questions = join_nonempty(questions, child.question);
    out.push_back({example.id + "#" + path, with_prompt(example.document, join_nonempty(node.question, node.summary)),
                   questions});
  }
  for (std::size_t i = 0; i < node.children.size(); ++i)
    child_question_samples(example, node.children[i], fmt::format("{}.{}", path, i + 1), out);
}

}  // namespace

QsTask qs_task_from_name(std::string_view name) {
  if (name == "hierarchy") return QsTask::Hierarchy;
  if (name == "child_questions") return QsTask::ChildQuestions;
  throw Error(fmt::format("data.qs_task: expected 'hierarchy' (Task I, QSGen-Hier) or 'child_questions' "
                          "(Task II, QSGen-ChildQ), got '{}'",
                          name));
}

const char* qs_task_name(QsTask task) {
  return task == QsTask::Hierarchy ? "hierarchy" : "child_questions";
}

std::vector<QsSample> qs_samples(const QsExample& example, QsTask task) {
  std::vector<QsSample> samples;
  const std::vector<QsNode>& roots = example.hierarchy.roots;
  for (std::size_t i = 0; i < roots.size(); ++i) {
    const std::string path = std::to_string(i + 1);
    if (task == QsTask::ChildQuestions) {
      child_question_samples(example, roots[i], path, samples);
      continue;
    }
    QsNode answer_first = roots[i];  // the question is the prompt: the output starts with its summary
    answer_first.question.clear();
    samples.push_back({example.id + "#" + path, with_prompt(example.document, roots[i].question),
                       linearize(QsHierarchy{{answer_first}})});
  }
  return samples;
}

std::vector<Seq2SeqExample> load_qs_examples(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                             const TruncationOptions& options, QsTask task, bool verbose) {
  const std::vector<QsExample> annotated = load_qs_hierarchies(jsonl);
  std::vector<Document> sources;
  std::vector<std::string> ids;
  for (const QsExample& example : annotated) {
    for (QsSample& sample : qs_samples(example, task)) {
      sample.source.summary = std::move(sample.target);
      ids.push_back(std::move(sample.id));
      sources.push_back(std::move(sample.source));
    }
  }
  if (sources.empty())
    throw error_at(jsonl, 0, "",
                   fmt::format("no {} sample in {} examples{}", qs_task_name(task), annotated.size(),
                               task == QsTask::ChildQuestions ? " (Task II needs QS pairs with children)" : ""));
  Seq2SeqLoadStats stats;
  std::vector<Seq2SeqExample> examples = make_seq2seq_examples(sources, tokenizer, options, &stats);
  for (std::size_t i = 0; i < examples.size(); ++i) examples[i].id = std::move(ids[i]);
  if (verbose)
    std::fprintf(stderr, "%s: %zu %s samples from %zu hierarchies; %zu sources truncated to %zu tokens, %zu targets to %zu\n",
                 jsonl.string().c_str(), examples.size(), qs_task_name(task), annotated.size(), stats.sources_truncated,
                 options.max_source_tokens, stats.targets_truncated, options.max_target_tokens);
  return examples;
}

}  // namespace strata
