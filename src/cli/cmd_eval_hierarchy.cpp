// strata eval hierarchy: Table 1's scores of linearised question-summary hierarchies, read
// back from prediction/reference pairs with the robust parser: hierarchy F1 (seed 001 §5.2),
// ROUGE of the summaries and BLEU-4 of the questions (NLTK's, as the seed, beside SacreBLEU's).
#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/jsonl.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/doc/dataset.h"
#include "strata/eval/bleu.h"
#include "strata/eval/qs_hierarchy.h"
#include "strata/eval/rouge.h"

namespace strata::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

struct HierarchyOptions {
  std::string pairs;
  std::string per_example;
  bool json = false;
};

struct TextPair {
  std::string id;
  std::string prediction;
  std::string reference;
};

std::vector<TextPair> read_text_pairs(const std::string& path) {
  std::vector<TextPair> pairs;
  JsonlReader reader(path);
  nlohmann::json object;
  while (reader.next(object))
    pairs.push_back({object.contains("id") ? document_id(object, "id", reader.path(), reader.line())
                                           : std::to_string(reader.line()),
                     reader.string_field(object, "prediction"), reader.string_field(object, "reference")});
  if (pairs.empty()) throw error_at(path, 0, "", "no pairs to score");
  return pairs;
}

// What one side (predictions or references) looked like once parsed.
struct SideStats {
  std::size_t pairs = 0;      // QS pairs, summed over the hierarchies
  std::size_t edges = 0;      // parent-child edges, summed
  std::size_t malformed = 0;  // texts whose parse repaired something
  std::size_t without_question = 0;

  void add(const QsHierarchy& hierarchy, const QsParseRepairs& repairs) {
    pairs += hierarchy.size();
    edges += hierarchy.edges();
    malformed += repairs.any() ? 1 : 0;
    without_question += repairs.pairs_without_question;
  }
};

// ROUGE-1, -2 and -L F of one hierarchy's summaries against the reference's.
constexpr int kRougeTypes = 3;
const char* const kRougeNames[kRougeTypes] = {"rouge1", "rouge2", "rougeL"};

struct HierarchyReport {
  HierarchyF1 mean;
  std::vector<HierarchyF1> scores;                        // per pair of the file
  std::vector<std::array<double, kRougeTypes>> rouge;     // per pair, F
  std::array<double, kRougeTypes> rouge_mean{};
  BleuScore bleu_nltk;   // NLTK 3.5's corpus_bleu on whitespace tokens, no smoothing
  BleuScore bleu_sacre;  // SacreBLEU's default: 13a tokens, exponential smoothing
  SideStats generated;
  SideStats reference;
  std::size_t count = 0;
};

// NLTK's corpus_bleu (the seed's BLEU, NLTK 3.5) over str.split() tokens with its default
// method0 (no smoothing: a zero n-gram precision makes the score 0) is SacreBLEU's arithmetic
// with no tokenisation and no smoothing: clipped counts summed over the corpus, the closest
// reference length, the brevity penalty over summed lengths.
BleuOptions nltk_bleu_options() {
  BleuOptions options;
  options.tokenize = BleuTokenize::kNone;
  options.smooth = BleuSmooth::kNone;
  return options;
}

HierarchyReport score_pairs(const std::vector<TextPair>& pairs) {
  const std::size_t n = pairs.size();
  std::vector<HierarchyF1> scores(n);
  std::vector<QsHierarchy> generated(n), reference(n);
  std::vector<QsParseRepairs> generated_repairs(n), reference_repairs(n);
  Progress progress("hierarchy F1", n, "pairs");
#pragma omp parallel for schedule(dynamic)
  for (std::size_t i = 0; i < n; ++i) {
    generated[i] = parse_hierarchy(pairs[i].prediction, {}, &generated_repairs[i]);
    reference[i] = parse_hierarchy(pairs[i].reference, {}, &reference_repairs[i]);
    scores[i] = hierarchy_f1(generated[i], reference[i]);
    progress.add();
  }
  progress.finish();
  HierarchyReport report;
  report.count = n;
  report.mean = mean_hierarchy_f1(scores);
  report.scores = std::move(scores);
  const RougeScorer scorer({"rouge1", "rouge2", "rougeL"}, /*use_stemmer=*/true);
  report.rouge.resize(n);
  std::vector<std::string> questions(n);
  std::vector<std::vector<std::string>> reference_questions(n);
#pragma omp parallel for schedule(dynamic)
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<RougeScore> row = scorer.score_row(summaries_text(reference[i]), summaries_text(generated[i]));
    for (int t = 0; t < kRougeTypes; ++t) report.rouge[i][t] = row[t].fmeasure;
    questions[i] = questions_text(generated[i]);
    reference_questions[i] = {questions_text(reference[i])};
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (int t = 0; t < kRougeTypes; ++t) report.rouge_mean[t] += report.rouge[i][t] / static_cast<double>(n);
    report.generated.add(generated[i], generated_repairs[i]);
    report.reference.add(reference[i], reference_repairs[i]);
  }
  report.bleu_nltk = corpus_bleu(questions, reference_questions, nltk_bleu_options());
  report.bleu_sacre = corpus_bleu(questions, reference_questions);
  return report;
}

double per_hierarchy(std::size_t total, std::size_t count) {
  return static_cast<double>(total) / static_cast<double>(count);
}

void print_table(const HierarchyReport& r) {
  std::printf("Hierarchy F1 over %zu pairs (seed 001 §5.2): each generated QS pair is mapped to the\n"
              "reference pair whose summary has the highest ROUGE-1 F + ROUGE-2 F (stemmed); a\n"
              "generated edge matches when its mapped parent is an ancestor of its mapped child,\n"
              "weighted by those scores / 4. Means over the pairs.\n\n",
              r.count);
  std::printf("%10s %10s %10s\n", "precision", "recall", "f1");
  std::printf("%10.4f %10.4f %10.4f\n\n", r.mean.precision, r.mean.recall, r.mean.f1);
  std::printf("Summaries (one per line, stemmed ROUGE F, mean over pairs):  R-1 %.4f  R-2 %.4f  R-L %.4f\n",
              r.rouge_mean[0], r.rouge_mean[1], r.rouge_mean[2]);
  std::printf("Questions, BLEU-4: %.2f (NLTK 3.5 corpus_bleu on whitespace tokens, no smoothing, as the seed)  "
              "%.2f (SacreBLEU: %s)\n\n",
              r.bleu_nltk.score, r.bleu_sacre.score, bleu_signature(BleuOptions{}, 1).c_str());
  std::printf("%-28s %10s %10s\n", "", "generated", "reference");
  std::printf("%-28s %10.2f %10.2f\n", "QS pairs per hierarchy", per_hierarchy(r.generated.pairs, r.count),
              per_hierarchy(r.reference.pairs, r.count));
  std::printf("%-28s %10.2f %10.2f\n", "edges per hierarchy", per_hierarchy(r.generated.edges, r.count),
              per_hierarchy(r.reference.edges, r.count));
  std::printf("%-28s %10zu %10s\n", "matched edges", r.mean.matched_edges, "-");
  std::printf("%-28s %10zu %10zu\n", "malformed (parse repaired)", r.generated.malformed,
              r.reference.malformed);
  std::printf("%-28s %10zu %10zu\n", "pairs without a question", r.generated.without_question,
              r.reference.without_question);
}

ordered_json side_json(const SideStats& side, std::size_t count) {
  return {{"pairs_per_hierarchy", per_hierarchy(side.pairs, count)},
          {"edges_per_hierarchy", per_hierarchy(side.edges, count)},
          {"edges", side.edges},
          {"malformed", side.malformed},
          {"pairs_without_question", side.without_question}};
}

// One line per pair: what a paired bootstrap between two systems resamples.
void write_per_example(const std::string& path, const std::vector<TextPair>& pairs, const HierarchyReport& r) {
  std::string lines;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    ordered_json line{{"id", pairs[i].id},
                      {"precision", r.scores[i].precision},
                      {"recall", r.scores[i].recall},
                      {"f1", r.scores[i].f1}};
    for (int t = 0; t < kRougeTypes; ++t) line[kRougeNames[t]] = r.rouge[i][t];
    lines += line.dump() + "\n";
  }
  write_file_atomic(path, lines);
}

ordered_json bleu_json(const BleuScore& bleu) {
  return {{"score", bleu.score}, {"bp", bleu.bp}, {"precisions", bleu.precisions}, {"sys_len", bleu.sys_len},
          {"ref_len", bleu.ref_len}};
}

void run_hierarchy(const HierarchyOptions& options) {
  const std::vector<TextPair> pairs = read_text_pairs(options.pairs);
  const HierarchyReport report = score_pairs(pairs);
  if (!options.per_example.empty()) write_per_example(options.per_example, pairs, report);
  if (!options.json) {
    print_table(report);
    return;
  }
  const ordered_json summary = {{"count", report.count},
                                {"precision", report.mean.precision},
                                {"recall", report.mean.recall},
                                {"f1", report.mean.f1},
                                {"matched_edges", report.mean.matched_edges},
                                {"stemmed", true},
                                {"summary_rouge", {{"rouge1", report.rouge_mean[0]},
                                                   {"rouge2", report.rouge_mean[1]},
                                                   {"rougeL", report.rouge_mean[2]}}},
                                {"question_bleu_nltk", bleu_json(report.bleu_nltk)},
                                {"question_bleu_sacrebleu", bleu_json(report.bleu_sacre)},
                                {"generated", side_json(report.generated, report.count)},
                                {"reference", side_json(report.reference, report.count)}};
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void register_eval_hierarchy(CLI::App& eval) {
  CLI::App* sub = eval.add_subcommand(
      "hierarchy", "hierarchy F1, summary ROUGE and question BLEU of linearised question-summary hierarchies "
                   "(seed 001 §5.2, Table 1)");
  auto options = std::make_shared<HierarchyOptions>();
  sub->add_option("--pairs", options->pairs,
                  "JSONL file, one {\"prediction\": ..., \"reference\": ...} per line, each a "
                  "linearised hierarchy (\"Q? A [L↑] Q? A [L-] ...\")")
      ->required();
  sub->add_option("--per-example", options->per_example,
                  "write {id, precision, recall, f1, rouge1, rouge2, rougeL} per pair to this JSONL file (for paired "
                  "bootstraps between systems)");
  sub->add_flag("--json", options->json, "print the summary as one JSON object");
  on_run(sub, [options] { run_hierarchy(*options); });
}

}  // namespace strata::cli
