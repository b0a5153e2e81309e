// Hit@n, BLEU@n and chrF@n over the items of a polysemy output list (thesis ch. 4).
#include "strata/eval/list_items.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "strata/core/error.h"
#include "strata/core/strings.h"
#include "strata/eval/bleu.h"
#include "strata/eval/chrf.h"

namespace strata {

namespace {

std::size_t checked_count(const std::vector<std::string>& items, std::size_t n) {
  if (n == 0) throw Error("list items: n must be at least 1");
  return std::min(n, items.size());
}

double best_item_score(const std::vector<std::string>& items, std::size_t n,
                       const std::function<double(const std::string&)>& score) {
  double best = 0;
  const std::size_t count = checked_count(items, n);
  for (std::size_t i = 0; i < count; ++i) best = std::max(best, score(items[i]));
  return best;
}

double mean_over(const std::vector<std::string>& outputs, const std::vector<std::string>& references,
                 const std::function<double(const std::vector<std::string>&, const std::string&)>& score) {
  if (outputs.size() != references.size() || outputs.empty())
    throw Error(fmt::format("list items: {} outputs and {} references (need equal, > 0)", outputs.size(),
                            references.size()));
  double sum = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) sum += score(split_list_items(outputs[i]), references[i]);
  return sum / static_cast<double>(outputs.size());
}

}  // namespace

std::vector<std::string> split_list_items(std::string_view output) { return split_list(output, ','); }

std::string normalize_list_item(std::string_view item) { return join_tokens(python_lower(item)); }

bool hit_at_n(const std::vector<std::string>& items, std::string_view reference, std::size_t n) {
  const std::string target = normalize_list_item(reference);
  const std::size_t count = checked_count(items, n);
  return std::any_of(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(count),
                     [&](const std::string& item) { return normalize_list_item(item) == target; });
}

double bleu_at_n(const std::vector<std::string>& items, std::string_view reference, std::size_t n) {
  const std::vector<std::string> references{std::string(reference)};
  return best_item_score(items, n, [&](const std::string& item) { return sentence_bleu(item, references).score; });
}

double chrf_at_n(const std::vector<std::string>& items, std::string_view reference, std::size_t n) {
  const std::vector<std::string> references{std::string(reference)};
  return best_item_score(items, n, [&](const std::string& item) { return sentence_chrf(item, references); });
}

double mean_hit_at_n(const std::vector<std::string>& outputs, const std::vector<std::string>& references,
                     std::size_t n) {
  return mean_over(outputs, references, [n](const std::vector<std::string>& items, const std::string& reference) {
    return hit_at_n(items, reference, n) ? 1.0 : 0.0;
  });
}

double mean_bleu_at_n(const std::vector<std::string>& outputs, const std::vector<std::string>& references,
                      std::size_t n) {
  return mean_over(outputs, references, [n](const std::vector<std::string>& items, const std::string& reference) {
    return bleu_at_n(items, reference, n);
  });
}

double mean_chrf_at_n(const std::vector<std::string>& outputs, const std::vector<std::string>& references,
                      std::size_t n) {
  return mean_over(outputs, references, [n](const std::vector<std::string>& items, const std::string& reference) {
    return chrf_at_n(items, reference, n);
  });
}

}  // namespace strata
