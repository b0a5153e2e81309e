#include "strata/chain/chain_scores.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <optional>

#include "strata/core/error.h"
#include "strata/eval/bleu.h"
#include "strata/eval/chrf.h"
#include "strata/eval/formality.h"
#include "strata/eval/list_items.h"

namespace strata::chain {

namespace {

std::optional<FormalityLanguage> formality_language(const std::string& code) {
  if (code == "es" || code == "fr" || code == "de") return parse_formality_language(code);
  return std::nullopt;
}

// One system's per-example statistics; each score is a corpus score over a list of indices.
struct PerExample {
  std::vector<BleuStats> bleu;
  std::vector<ChrfStats> chrf;
  // Scores that are means over the examples they apply to (nullopt: does not apply).
  std::map<std::string, std::vector<std::optional<double>>> means;

  PerExample(const std::vector<ChainExample>& examples, const std::vector<ChainOutput>& outputs,
             const ChainScoreOptions& options) {
    if (outputs.size() != examples.size())
      throw Error(fmt::format("chain scores: {} outputs for {} examples", outputs.size(), examples.size()));
    const BleuOptions bleu_options;
    const auto language = formality_language(options.language);
    const std::size_t n = examples.size();
    auto& exact = means["exact_match"];
    for (std::size_t i = 0; i < n; ++i) {
      const ChainExample& example = examples[i];
      const std::string& translation = outputs[i].translation;
      bleu.push_back(bleu_segment_stats(translation, {example.reference}, bleu_options));
      chrf.push_back(chrf_segment_stats(translation, {example.reference}));
      exact.push_back(join_tokens(translation) == join_tokens(example.reference) ? 100.0 : 0.0);
      if (language && (example.label == "formal" || example.label == "informal")) {
        const bool right = classify_formality(*language, translation) == parse_formality(example.label);
        add("formality_accuracy", i, n, right ? 100.0 : 0.0);
      }
      if (example.type == "polysemy") {
        const std::vector<std::string> items = split_list_items(translation);
        for (const std::size_t list_n : options.list_n) {
          add(fmt::format("hit@{}", list_n), i, n, hit_at_n(items, example.reference, list_n) ? 100.0 : 0.0);
          add(fmt::format("bleu@{}", list_n), i, n, bleu_at_n(items, example.reference, list_n));
          add(fmt::format("chrf@{}", list_n), i, n, chrf_at_n(items, example.reference, list_n));
        }
      }
      if (!outputs[i].question.empty() || !outputs[i].answer.empty())
        if (!example.answer.empty()) add("answer_accuracy", i, n, outputs[i].answer == example.answer ? 100.0 : 0.0);
    }
  }

  void add(const std::string& name, std::size_t i, std::size_t n, double value) {
    auto& values = means[name];
    values.resize(n);
    values[i] = value;
  }

  double score(const std::string& name, std::span<const std::size_t> indices) const {
    if (name == "bleu") {
      BleuStats sum;
      for (const std::size_t i : indices) sum += bleu[i];
      return bleu_from_stats(sum, BleuOptions{}).score;
    }
    if (name == "chrf") {
      ChrfStats sum = chrf[indices[0]];
      for (std::size_t k = 1; k < indices.size(); ++k) sum += chrf[indices[k]];
      return chrf_from_stats(sum);
    }
    double total = 0;
    std::size_t counted = 0;
    for (const std::size_t i : indices)
      if (const auto& value = means.at(name)[i]) total += *value, ++counted;
    return counted ? total / static_cast<double>(counted) : 0.0;
  }

  std::size_t applies(const std::string& name) const {
    std::size_t counted = 0;
    for (const auto& value : means.at(name)) counted += value.has_value();
    return counted;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> all = {"bleu", "chrf"};
    for (const auto& [name, values] : means) all.push_back(name);
    return all;
  }
};

std::vector<std::size_t> every_index(std::size_t n) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  return all;
}

}  // namespace

nlohmann::json score_chain_system(const std::vector<ChainExample>& examples, const std::vector<ChainOutput>& outputs,
                                  const ChainScoreOptions& options) {
  const PerExample stats(examples, outputs, options);
  const std::vector<std::size_t> all = every_index(examples.size());
  nlohmann::json scores = {{"examples", examples.size()}};
  for (const std::string& name : stats.names()) {
    scores[name] = stats.score(name, all);
    if (name == "formality_accuracy") scores["formality_examples"] = stats.applies(name);
    if (name.starts_with("hit@")) scores["list_examples"] = stats.applies(name);
    if (name == "answer_accuracy") scores["answered_examples"] = stats.applies(name);
  }
  std::size_t corrupted = 0;
  for (const ChainOutput& output : outputs) corrupted += output.corrupted;
  if (corrupted) scores["corrupted"] = corrupted;
  return scores;
}

nlohmann::json compare_chain_systems(const std::vector<ChainExample>& examples, const std::vector<ChainOutput>& a,
                                     const std::vector<ChainOutput>& b, const ChainScoreOptions& options) {
  const PerExample stats_a(examples, a, options), stats_b(examples, b, options);
  nlohmann::json comparison = nlohmann::json::object();
  for (const std::string& name : stats_a.names()) {
    if (name == "answer_accuracy" || !stats_b.means.contains(name) && name != "bleu" && name != "chrf") continue;
    const PairedBootstrap test = paired_bootstrap(
        examples.size(),
        [&](std::span<const std::size_t> indices, int system) {
          return (system == 0 ? stats_a : stats_b).score(name, indices);
        },
        options.bootstrap);
    comparison[name] = {{"a", test.a},
                        {"b", test.b},
                        {"difference_low", test.difference_low},
                        {"difference_high", test.difference_high},
                        {"p_value", test.p_value},
                        {"resamples", test.resamples}};
  }
  return comparison;
}

}  // namespace strata::chain
