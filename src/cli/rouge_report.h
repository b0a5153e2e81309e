#pragma once
// ROUGE over many pairs with bootstrap intervals, as a table for people and JSON for
// programs: shared by `strata eval rouge` and `strata eval summarize`.
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/eval/bootstrap.h"
#include "strata/eval/paired_bootstrap.h"
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
  PairedBootstrap test;
};
std::vector<PairedRouge> paired_rouge(const RougeReport& a, const RougeReport& b, const BootstrapOptions& bootstrap);
// One line per type: A's and B's mean F1, which is ahead, the interval of A - B and p.
void print_paired_rouge(const std::vector<PairedRouge>& paired, const std::string& a, const std::string& b,
                        const BootstrapOptions& bootstrap);
nlohmann::ordered_json paired_rouge_json(const std::vector<PairedRouge>& paired, std::size_t resamples);

}  // namespace strata::cli
