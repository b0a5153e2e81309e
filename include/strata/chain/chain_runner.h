#pragma once
// Interactive chain prompting (thesis ch. 4, Eqs. 1.17-1.19 with one question, J = 1) and its
// two baselines, over any backends:
//   NoExtra       translator: S -> A
//   WithContext   translator: S, C -> A          (the thesis's LLMwCXT: all the information)
//   Chain         translator: S -> Q; user: S, C, Q -> U; translator: S, Q, U -> A
// In the chain's last step the translator never sees C: the user's answer is the only way
// the context reaches the translation. The user is a backend or, with no backend, the
// example's known answer (a perfect user, the human of the deployment story).
//
// Corruption (the analogue of the thesis's weaker users, Fig. 4.5): a share of the user's
// answers is replaced by a wrong one, drawn from the other answers the data knows. Which
// examples are corrupted depends only on the seed and the example's id, so runs at 10 % and
// 30 % corrupt nested sets, and every system sees the same examples.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/chain/chain_backend.h"
#include "strata/chain/chain_examples.h"
#include "strata/chain/chain_prompts.h"

namespace strata::chain {

enum class ChainSystem { kNoExtra, kWithContext, kChain };

// "no_extra", "with_context", "chain"; strata::Error naming the choices otherwise.
ChainSystem parse_chain_system(std::string_view name);
std::string_view chain_system_name(ChainSystem system);

struct ChainRunOptions {
  std::int64_t max_tokens = 64;  // per step
  double temperature = 0;
  std::uint64_t seed = 1;
  double corrupt = 0;            // share of the user's answers replaced by a wrong one
  std::size_t concurrency = 1;   // examples in flight at once
  bool quiet = false;
};

struct ChainOutput {
  std::string question;     // chain: the translator's question
  std::string answer;       // chain: the answer the translator got (after any corruption)
  std::string user_answer;  // chain: what the user said
  bool corrupted = false;
  std::string translation;  // every system: the translation (first line of the completion)
};

// One output per example, in order. `user` may be null for the perfect user (then every
// example needs an answer). strata::Error when corrupt > 0 and the examples know fewer than
// two distinct answers, or when a backend fails.
std::vector<ChainOutput> run_chain_system(ChainSystem system, const std::vector<ChainExample>& examples,
                                          const ChainPrompts& prompts, ChainBackend& translator, ChainBackend* user,
                                          const ChainRunOptions& options);

}  // namespace strata::chain
