// RougeScorer: names of the ROUGE types, and scoring pairs of texts, one or many at a time.
#include <omp.h>

#include <algorithm>
#include <cstddef>

#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/eval/rouge.h"

namespace strata {

namespace {

// A thread's vocabulary is dropped (between pairs) once it holds this many tokens, so that
// memory stays bounded on endless streams of new words.
constexpr std::size_t kMaxVocabulary = std::size_t{1} << 20;

constexpr std::string_view kValidTypes =
    "rouge1, rouge2, rouge3, rouge4, rouge5, rouge6, rouge7, rouge8, rouge9, rougeL, rougeLsum";

}  // namespace

RougeType RougeType::parse(std::string_view name) {
  if (name == "rougeL") return {Kind::lcs, 0};
  if (name == "rougeLsum") return {Kind::summary_lcs, 0};
  if (name.size() == 6 && name.starts_with("rouge") && name[5] >= '1' && name[5] <= '9') {
    return {Kind::ngram, name[5] - '0'};
  }
  throw Error("unknown ROUGE type '" + std::string(name) +
              "'; valid types: " + std::string(kValidTypes));
}

std::string RougeType::name() const {
  switch (kind) {
    case Kind::lcs:
      return "rougeL";
    case Kind::summary_lcs:
      return "rougeLsum";
    case Kind::ngram:
      break;
  }
  return "rouge" + std::to_string(n);
}

namespace {

std::vector<RougeType> parse_types(const std::vector<std::string>& names) {
  std::vector<RougeType> types;
  for (const std::string& name : names) types.push_back(RougeType::parse(name));
  return types;
}

}  // namespace

RougeScorer::RougeScorer(const std::vector<std::string>& types, bool use_stemmer)
    : RougeScorer(parse_types(types), use_stemmer) {}

RougeScorer::RougeScorer(std::vector<RougeType> types, bool use_stemmer)
    : types_(std::move(types)), use_stemmer_(use_stemmer) {
  if (types_.empty()) throw Error("no ROUGE types given; valid types: " + std::string(kValidTypes));
  for (std::size_t i = 0; i < types_.size(); ++i) {
    if (std::find(types_.begin(), types_.begin() + i, types_[i]) != types_.begin() + i) {
      throw Error("ROUGE type '" + types_[i].name() + "' is listed twice");
    }
  }
}

std::map<std::string, RougeScore> RougeScorer::score(std::string_view target,
                                                     std::string_view prediction) const {
  const std::vector<RougeScore> row = score_row(target, prediction);
  std::map<std::string, RougeScore> scores;
  for (std::size_t i = 0; i < types_.size(); ++i) scores.emplace(types_[i].name(), row[i]);
  return scores;
}

std::vector<RougeScore> RougeScorer::score_row(std::string_view target,
                                               std::string_view prediction) const {
  // Each thread keeps its own vocabulary and stem cache, shared by every scorer on it.
  thread_local RougeVocabulary vocabulary;
  thread_local TokenizedPair pair;
  if (vocabulary.size() > kMaxVocabulary) vocabulary.clear();
  vocabulary.tokenize(target, prediction, use_stemmer_, pair);

  std::vector<RougeScore> row;
  row.reserve(types_.size());
  for (const RougeType& type : types_) {
    switch (type.kind) {
      case RougeType::Kind::ngram:
        row.push_back(rouge_n(pair, type.n));
        break;
      case RougeType::Kind::lcs:
        row.push_back(rouge_l(pair));
        break;
      case RougeType::Kind::summary_lcs:
        row.push_back(rouge_lsum(pair));
        break;
    }
  }
  return row;
}

std::vector<std::vector<RougeScore>> RougeScorer::score_batch(
    std::span<const std::string> targets, std::span<const std::string> predictions, int threads,
    Progress* progress) const {
  if (targets.size() != predictions.size()) {
    throw Error("score_batch: " + std::to_string(targets.size()) + " targets but " +
                std::to_string(predictions.size()) + " predictions");
  }
  std::vector<std::vector<RougeScore>> rows(targets.size());
  const int team = threads > 0 ? threads : omp_get_max_threads();
  const auto count = static_cast<std::ptrdiff_t>(targets.size());
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
  for (std::ptrdiff_t i = 0; i < count; ++i) {
    rows[i] = score_row(targets[i], predictions[i]);
    if (progress != nullptr) progress->add();
  }
  return rows;
}

}  // namespace strata
