#pragma once
// How generate() turns a model's next-token log-probabilities into sequences: greedy search
// (the default), beam search (beam_size > 1) or sampling (do_sample), with the constraints
// they share. Field meanings follow HF transformers' generate(); lengths count generated
// tokens (the start token is not generated, eos is).
#include <cstdint>

namespace strata::decode {

struct GenerationOptions {
  std::int64_t max_length = 64;  // tokens generated at most, eos included
  std::int64_t min_length = 0;   // eos is banned until this many tokens are generated
  std::int64_t beam_size = 1;
  // Beam search ranks finished hypotheses by sum log-probs / length^length_penalty:
  // > 0 favours longer sequences, 0 ranks by total log-probability.
  double length_penalty = 1.0;
  // n > 0: a token that would complete an n-gram already in the row's generated tokens is
  // banned. 0 = off.
  std::int64_t no_repeat_ngram_size = 0;
  // Beam search: true stops an input once beam_size hypotheses are finished; false stops it
  // when the best live beam, scored at its current length, cannot beat the worst finished
  // hypothesis (HF's heuristic; exact when length_penalty is 0).
  bool early_stopping = false;
  bool do_sample = false;    // sampling; needs beam_size 1
  std::int64_t top_k = 0;    // sampling: keep the k most likely tokens; 0 = off
  double top_p = 1.0;        // sampling: keep the smallest set of mass >= top_p; 1 = off
  double temperature = 1.0;  // sampling: logits are divided by it before top-k and top-p
  std::uint64_t seed = 0;    // sampling: the same seed gives the same sequences
  // The first generated token is this one (-1 = free), and the last one max_length allows is
  // eos (BART's forced_bos_token_id / forced_eos_token_id).
  std::int64_t forced_bos_id = -1;
  bool forced_eos = false;
  std::int64_t start_id = 0;  // the first token fed to the model (bos / decoder start)
  std::int64_t eos_id = 1;
  std::int64_t pad_id = 2;    // fed to rows that have finished

  // strata::Error naming the first bad field ("generation.top_p: ...").
  void check() const;
};

}  // namespace strata::decode
