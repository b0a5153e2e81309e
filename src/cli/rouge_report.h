#pragma once
// ROUGE over many pairs with bootstrap intervals, as a table for people and JSON for
// programs: shared by `strata eval rouge` and `strata eval summarize`.
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/eval/bootstrap.h"
#include "strata/eval/rouge.h"

namespace strata::cli {

struct RougeReport {
  bool stemmed = false;
  BootstrapOptions bootstrap;
  std::vector<std::vector<RougeScore>> rows;  // per pair, in the scorer's type order
  std::vector<std::pair<std::string, RougeAggregate>> aggregates;  // per type
};

RougeReport rouge_report(const RougeScorer& scorer, std::span<const std::string> references,
                         std::span<const std::string> predictions, const BootstrapOptions& bootstrap);
void print_rouge_table(const RougeReport& report);
nlohmann::ordered_json rouge_report_json(const RougeReport& report);

// A paired bootstrap (eval/paired_bootstrap.h) of mean ROUGE F1 per type: system A (`a`)
// against B (`b`), scored on the same pairs in the same order.
struct PairedRouge {
  std::string type;
  double a = 0, b = 0, p_value = 1;
};
std::vector<PairedRouge> paired_rouge(const RougeReport& a, const RougeReport& b, const BootstrapOptions& bootstrap);
// "paired bootstrap, A against B (N resamples): rouge1 0.312 vs 0.280 (p = 0.004) ..."
void print_paired_rouge(const std::vector<PairedRouge>& paired, const std::string& a, const std::string& b,
                        std::size_t resamples);
nlohmann::ordered_json paired_rouge_json(const std::vector<PairedRouge>& paired, std::size_t resamples);

}  // namespace strata::cli
