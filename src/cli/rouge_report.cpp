#include "rouge_report.h"

#include <cstdio>

#include <fmt/format.h>

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

std::vector<PairedRouge> paired_rouge(const RougeReport& a, const RougeReport& b, const BootstrapOptions& bootstrap) {
  if (a.rows.size() != b.rows.size())
    throw Error("paired ROUGE: the systems have " + std::to_string(a.rows.size()) + " and " +
                std::to_string(b.rows.size()) + " pairs; they must score the same references in the same order");
  std::vector<PairedRouge> paired;
  for (std::size_t t = 0; t < a.aggregates.size(); ++t) {
    const auto mean_f = [&](std::span<const std::size_t> indices, int system) {
      const RougeReport& report = system == 0 ? a : b;
      double sum = 0;
      for (const std::size_t i : indices) sum += report.rows[i][t].fmeasure;
      return sum / static_cast<double>(indices.size());
    };
    paired.push_back({a.aggregates[t].first,
                      paired_bootstrap(a.rows.size(), mean_f, {bootstrap.resamples, bootstrap.seed, bootstrap.confidence})});
  }
  return paired;
}

void print_paired_rouge(const std::vector<PairedRouge>& paired, const std::string& a, const std::string& b,
                        const BootstrapOptions& bootstrap) {
  const std::size_t resamples = bootstrap.resamples;
  std::printf("\npaired bootstrap of mean F1, %s against %s (%zu resamples; interval: the %g %% percentile\n"
              "interval of A - B over the resamples; p: the share of resamples where the system ahead on the\n"
              "whole set is not ahead)\n",
              a.c_str(), b.c_str(), resamples, 100 * bootstrap.confidence);
  std::printf("%-10s %10s %10s %6s %23s %10s\n", "type", "A", "B", "ahead", "A - B interval", "p");
  for (const PairedRouge& row : paired) {
    const PairedBootstrap& t = row.test;
    // No resample against: p is below one in the number of resamples, not zero.
    const std::string p = t.p_value == 0 ? fmt::format("< {:.3g}", 1.0 / static_cast<double>(resamples))
                                         : fmt::format("{:.4f}", t.p_value);
    const std::string interval = fmt::format("[{:+.5f}, {:+.5f}]", t.difference_low, t.difference_high);
    std::printf("%-10s %10.5f %10.5f %6s %23s %10s\n", row.type.c_str(), t.a, t.b, t.a > t.b ? "A" : t.b > t.a ? "B" : "-",
                interval.c_str(), p.c_str());
  }
}

ordered_json paired_rouge_json(const std::vector<PairedRouge>& paired, std::size_t resamples) {
  ordered_json types = ordered_json::object();
  for (const PairedRouge& row : paired)
    types[row.type] = {{"a", row.test.a},
                       {"b", row.test.b},
                       {"difference_low", row.test.difference_low},
                       {"difference_high", row.test.difference_high},
                       {"p_value", row.test.p_value}};
  return {{"resamples", resamples}, {"fmeasure", types}};
}

}  // namespace strata::cli
