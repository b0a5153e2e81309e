// strata eval hierarchy: the hierarchy F1 (seed 001 §5.2) of linearised question-summary
// hierarchies, read back from prediction/reference pairs with the robust parser.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/jsonl.h"
#include "strata/core/progress.h"
#include "strata/eval/qs_hierarchy.h"

namespace strata::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

struct HierarchyOptions {
  std::string pairs;
  bool json = false;
};

struct TextPair {
  std::string prediction;
  std::string reference;
};

std::vector<TextPair> read_text_pairs(const std::string& path) {
  std::vector<TextPair> pairs;
  JsonlReader reader(path);
  nlohmann::json object;
  while (reader.next(object))
    pairs.push_back({reader.string_field(object, "prediction"), reader.string_field(object, "reference")});
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

struct HierarchyReport {
  HierarchyF1 mean;
  SideStats generated;
  SideStats reference;
  std::size_t count = 0;
};

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
  for (std::size_t i = 0; i < n; ++i) {
    report.generated.add(generated[i], generated_repairs[i]);
    report.reference.add(reference[i], reference_repairs[i]);
  }
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

void run_hierarchy(const HierarchyOptions& options) {
  const HierarchyReport report = score_pairs(read_text_pairs(options.pairs));
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
                                {"generated", side_json(report.generated, report.count)},
                                {"reference", side_json(report.reference, report.count)}};
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void register_eval_hierarchy(CLI::App& eval) {
  CLI::App* sub = eval.add_subcommand(
      "hierarchy", "hierarchy F1 of linearised question-summary hierarchies (seed 001 §5.2)");
  auto options = std::make_shared<HierarchyOptions>();
  sub->add_option("--pairs", options->pairs,
                  "JSONL file, one {\"prediction\": ..., \"reference\": ...} per line, each a "
                  "linearised hierarchy (\"Q? A [L↑] Q? A [L-] ...\")")
      ->required();
  sub->add_flag("--json", options->json, "print the summary as one JSON object");
  on_run(sub, [options] { run_hierarchy(*options); });
}

}  // namespace strata::cli
