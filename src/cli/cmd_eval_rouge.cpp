// strata eval rouge: ROUGE of prediction/reference pairs as rouge-score computes it, with
// bootstrap confidence intervals, optionally one line of scores per pair.
#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/core/progress.h"
#include "strata/eval/bootstrap.h"
#include "strata/eval/rouge.h"

namespace strata::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

// Scoring runs at tens of thousands of pairs a second: below this, progress is noise.
constexpr std::size_t kPairsWorthProgress = 50000;

struct RougeOptions {
  std::string pairs;
  bool stem = false;
  std::vector<std::string> types{"rouge1", "rouge2", "rougeL", "rougeLsum"};
  std::string per_example;
  bool json = false;
  std::uint64_t seed = BootstrapOptions{}.seed;
  std::size_t resamples = BootstrapOptions{}.resamples;
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

ordered_json estimate_json(const Estimate& e) {
  return {{"mean", e.mean}, {"low", e.low}, {"mid", e.mid}, {"high", e.high}};
}

void print_table(const RougeOptions& options, std::size_t count,
                 const std::vector<std::pair<std::string, RougeAggregate>>& aggregates) {
  std::printf(
      "ROUGE over %zu pairs, stemming %s. mean: plain mean; low/high: 2.5th/97.5th\n"
      "percentiles of %zu bootstrap resample means (seed %llu).\n\n",
      count, options.stem ? "on" : "off", options.resamples,
      static_cast<unsigned long long>(options.seed));
  std::printf("%-10s %-10s %8s %8s %8s\n", "type", "measure", "mean", "low", "high");
  for (const auto& [name, aggregate] : aggregates) {
    const std::pair<const char*, const Estimate*> measures[] = {{"precision", &aggregate.precision},
                                                                {"recall", &aggregate.recall},
                                                                {"fmeasure", &aggregate.fmeasure}};
    for (const auto& [measure, e] : measures) {
      std::printf("%-10s %-10s %8.5f %8.5f %8.5f\n", name.c_str(), measure, e->mean, e->low,
                  e->high);
    }
  }
}

void run_rouge(const RougeOptions& options) {
  // Everything that can be wrong with the options is checked before any work is done.
  const RougeScorer scorer(options.types, options.stem);
  if (options.resamples == 0) throw Error("--resamples must be positive");
  const Pairs pairs = read_pairs(options.pairs);

  std::vector<std::vector<RougeScore>> rows;
  {
    const bool quiet = pairs.predictions.size() < kPairsWorthProgress;
    Progress progress("rouge", pairs.predictions.size(), "pairs", quiet);
    rows = scorer.score_batch(pairs.references, pairs.predictions, 0, &progress);
  }
  if (!options.per_example.empty()) write_per_example(options.per_example, scorer, rows);

  const BootstrapOptions bootstrap{options.resamples, 0.95, options.seed};
  std::vector<std::pair<std::string, RougeAggregate>> aggregates;
  for (std::size_t t = 0; t < scorer.types().size(); ++t) {
    std::vector<RougeScore> column;
    column.reserve(rows.size());
    for (const auto& row : rows) column.push_back(row[t]);
    aggregates.emplace_back(scorer.types()[t].name(), bootstrap_aggregate(column, bootstrap));
  }

  if (!options.json) {
    print_table(options, rows.size(), aggregates);
    return;
  }
  ordered_json summary = {{"count", rows.size()},
                          {"stemmed", options.stem},
                          {"resamples", options.resamples},
                          {"seed", options.seed},
                          {"confidence", bootstrap.confidence}};
  ordered_json scores = ordered_json::object();
  for (const auto& [name, aggregate] : aggregates) {
    scores[name] = {{"precision", estimate_json(aggregate.precision)},
                    {"recall", estimate_json(aggregate.recall)},
                    {"fmeasure", estimate_json(aggregate.fmeasure)}};
  }
  summary["scores"] = scores;
  std::printf("%s\n", summary.dump().c_str());
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
  sub->add_flag("--json", options->json, "print the summary as one JSON object");
  sub->add_option("--seed", options->seed, "bootstrap seed")->capture_default_str();
  sub->add_option("--resamples", options->resamples, "bootstrap resamples")->capture_default_str();
  on_run(sub, [options] { run_rouge(*options); });
}

}  // namespace strata::cli
