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

}  // namespace strata::cli
