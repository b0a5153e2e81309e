#include "rouge_report.h"

#include <cstdio>

#include "strata/core/error.h"
#include "strata/core/progress.h"

namespace strata::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

// Scoring runs at tens of thousands of pairs a second: below this, progress is noise.
constexpr std::size_t kPairsWorthProgress = 50000;

ordered_json estimate_json(const Estimate& e) {
  return {{"mean", e.mean}, {"low", e.low}, {"mid", e.mid}, {"high", e.high}};
}

}  // namespace

RougeReport rouge_report(const RougeScorer& scorer, std::span<const std::string> references,
                         std::span<const std::string> predictions, const BootstrapOptions& bootstrap) {
  if (bootstrap.resamples == 0) throw Error("--resamples must be positive");
  RougeReport report;
  report.stemmed = scorer.use_stemmer();
  report.bootstrap = bootstrap;
  {
    Progress progress("rouge", predictions.size(), "pairs", predictions.size() < kPairsWorthProgress);
    report.rows = scorer.score_batch(references, predictions, 0, &progress);
  }
  for (std::size_t t = 0; t < scorer.types().size(); ++t) {
    std::vector<RougeScore> column;
    column.reserve(report.rows.size());
    for (const auto& row : report.rows) column.push_back(row[t]);
    report.aggregates.emplace_back(scorer.types()[t].name(), bootstrap_aggregate(column, bootstrap));
  }
  return report;
}

void print_rouge_table(const RougeReport& report) {
  std::printf(
      "ROUGE over %zu pairs, stemming %s. mean: plain mean; low/high: 2.5th/97.5th\n"
      "percentiles of %zu bootstrap resample means (seed %llu).\n\n",
      report.rows.size(), report.stemmed ? "on" : "off", report.bootstrap.resamples,
      static_cast<unsigned long long>(report.bootstrap.seed));
  std::printf("%-10s %-10s %8s %8s %8s\n", "type", "measure", "mean", "low", "high");
  for (const auto& [name, aggregate] : report.aggregates) {
    const std::pair<const char*, const Estimate*> measures[] = {{"precision", &aggregate.precision},
                                                                {"recall", &aggregate.recall},
                                                                {"fmeasure", &aggregate.fmeasure}};
    for (const auto& [measure, e] : measures)
      std::printf("%-10s %-10s %8.5f %8.5f %8.5f\n", name.c_str(), measure, e->mean, e->low, e->high);
  }
}

ordered_json rouge_report_json(const RougeReport& report) {
  ordered_json summary = {{"count", report.rows.size()},
                          {"stemmed", report.stemmed},
                          {"resamples", report.bootstrap.resamples},
                          {"seed", report.bootstrap.seed},
                          {"confidence", report.bootstrap.confidence}};
  ordered_json scores = ordered_json::object();
  for (const auto& [name, aggregate] : report.aggregates)
    scores[name] = {{"precision", estimate_json(aggregate.precision)},
                    {"recall", estimate_json(aggregate.recall)},
                    {"fmeasure", estimate_json(aggregate.fmeasure)}};
  summary["scores"] = scores;
  return summary;
}

}  // namespace strata::cli
