// strata eval rouge: ROUGE of prediction/reference pairs as rouge-score computes it, with
// bootstrap confidence intervals, optionally one line of scores per pair.
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "rouge_report.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/core/progress.h"
#include "strata/eval/bootstrap.h"
#include "strata/eval/rouge.h"

namespace strata::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

struct RougeOptions {
  std::string pairs;
  bool stem = false;
  std::vector<std::string> types{"rouge1", "rouge2", "rougeL", "rougeLsum"};
  std::string per_example;
  std::string against;
  bool json = false;
  std::uint64_t seed = BootstrapOptions{}.seed;
  std::size_t resamples = BootstrapOptions{}.resamples;

  BootstrapOptions bootstrap() const { return {resamples, 0.95, seed}; }
};

struct Pairs {
  std::vector<std::string> references;
  std::vector<std::string> predictions;
};

Pairs read_pairs(const std::string& path) {
  Pairs pairs;
  JsonlReader reader(path);
  nlohmann::json object;
  while (reader.next(object)) {
    pairs.predictions.push_back(reader.string_field(object, "prediction"));
    pairs.references.push_back(reader.string_field(object, "reference"));
  }
  if (pairs.predictions.empty()) throw error_at(path, 0, "", "no pairs to score");
  return pairs;
}

// A paired test compares two systems on the same references, line by line.
void check_same_references(const Pairs& a, const Pairs& b, const RougeOptions& options) {
  if (a.references.size() != b.references.size())
    throw Error(fmt::format("{} has {} pairs but {} has {}: --against must score the same references in the same order",
                            options.pairs, a.references.size(), options.against, b.references.size()));
  for (std::size_t i = 0; i < a.references.size(); ++i)
    if (a.references[i] != b.references[i])
      throw error_at(options.against, i + 1, "reference", "differs from line " + std::to_string(i + 1) + " of " +
                                                            options.pairs + ": --against must score the same references "
                                                                            "in the same order");
}

ordered_json score_json(const RougeScore& s) {
  return {{"precision", s.precision}, {"recall", s.recall}, {"fmeasure", s.fmeasure}};
}

void write_per_example(const std::string& path, const RougeScorer& scorer,
                       const std::vector<std::vector<RougeScore>>& rows) {
  AtomicFile file(path);
  for (const auto& row : rows) {
    ordered_json line = ordered_json::object();
    for (std::size_t t = 0; t < row.size(); ++t)
      line[scorer.types()[t].name()] = score_json(row[t]);
    file.stream() << line.dump() << '\n';
  }
  file.commit();
}

void run_rouge(const RougeOptions& options) {
  // Everything that can be wrong with the options is checked before any work is done.
  const RougeScorer scorer(options.types, options.stem);
  const Pairs pairs = read_pairs(options.pairs);
  std::optional<Pairs> other;
  if (!options.against.empty()) {
    other = read_pairs(options.against);
    check_same_references(pairs, *other, options);
  }
  const RougeReport report = rouge_report(scorer, pairs.references, pairs.predictions, options.bootstrap());
  if (!options.per_example.empty()) write_per_example(options.per_example, scorer, report.rows);
  std::vector<PairedRouge> paired;
  if (other)
    paired = paired_rouge(report, rouge_report(scorer, other->references, other->predictions, options.bootstrap()),
                          options.bootstrap());
  if (options.json) {
    ordered_json summary = rouge_report_json(report);
    if (other) summary["against"] = {{"pairs", options.against}, {"paired_bootstrap", paired_rouge_json(paired, options.resamples)}};
    std::printf("%s\n", summary.dump().c_str());
  } else {
    print_rouge_table(report);
    if (other) print_paired_rouge(paired, options.pairs, options.against, options.bootstrap());
  }
}

}  // namespace

void register_eval_rouge(CLI::App& eval) {
  CLI::App* sub = eval.add_subcommand(
      "rouge", "ROUGE exactly as Google's rouge-score computes it, with bootstrap intervals");
  auto options = std::make_shared<RougeOptions>();
  sub->add_option("--pairs", options->pairs,
                  "JSONL file, one {\"prediction\": ..., \"reference\": ...} per line")
      ->required();
  sub->add_flag("--stem", options->stem, "Porter-stem tokens longer than 3 characters");
  sub->add_option("--types", options->types, "comma-separated: rouge1..rouge9, rougeL, rougeLsum")
      ->delimiter(',')
      ->capture_default_str();
  sub->add_option("--per-example", options->per_example,
                  "write one JSON line of scores per pair, in input order");
  sub->add_option("--against", options->against,
                  "a second system's pairs on the same references, line by line: adds a paired bootstrap test of "
                  "mean F1 per type (is --pairs better than --against?)");
  sub->add_flag("--json", options->json, "print the summary as one JSON object");
  sub->add_option("--seed", options->seed, "bootstrap seed")->capture_default_str();
  sub->add_option("--resamples", options->resamples, "bootstrap resamples")->capture_default_str();
  on_run(sub, [options] { run_rouge(*options); });
}

}  // namespace strata::cli
