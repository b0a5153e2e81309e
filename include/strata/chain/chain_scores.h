#pragma once
// How well a system translated, and whether one system beats another: corpus BLEU and chrF
// (SacreBLEU's definitions), exact match, formality accuracy by the rules of App. C.1.6 for
// examples labelled formal/informal in es/fr/de, Hit@n, BLEU@n and chrF@n over list items for
// polysemy examples (eval/list_items.h; means over those examples),
// and, for the chain, how often the answer the translator got was the right one. Comparisons
// are paired bootstrap tests (eval/paired_bootstrap.h) over the same examples.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/chain/chain_examples.h"
#include "strata/chain/chain_runner.h"
#include "strata/eval/paired_bootstrap.h"

namespace strata::chain {

struct ChainScoreOptions {
  std::string language;  // the target language ("fr"); formality accuracy needs es, fr or de
  std::vector<std::size_t> list_n = {1, 3};
  PairedBootstrapOptions bootstrap;
};

// {"examples", "bleu", "chrf", "exact_match", and where they apply "formality_accuracy" with
// "formality_examples", "hit@N" with "list_examples", "answer_accuracy" with
// "answered_examples", "corrupted"}. Scores are 0..100.
nlohmann::json score_chain_system(const std::vector<ChainExample>& examples, const std::vector<ChainOutput>& outputs,
                                  const ChainScoreOptions& options);

// For each score both systems have: {"a", "b", "difference_low", "difference_high" (the 95 %
// interval of a - b, with the default options), "p_value", "resamples"}.
nlohmann::json compare_chain_systems(const std::vector<ChainExample>& examples, const std::vector<ChainOutput>& a,
                                     const std::vector<ChainOutput>& b, const ChainScoreOptions& options);

}  // namespace strata::chain
