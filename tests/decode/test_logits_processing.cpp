#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

#include "decode/toy_models.h"
#include "strata/decode/logits_processing.h"

namespace strata::decode {
namespace {

using Kept = std::vector<std::set<std::int64_t>>;

// Per row, the tokens whose score is not -inf.
Kept kept(const at::Tensor& scores) {
  Kept out(scores.size(0));
  for (std::int64_t r = 0; r < scores.size(0); ++r)
    for (std::int64_t v = 0; v < scores.size(1); ++v)
      if (!std::isinf(scores[r][v].item<float>())) out[r].insert(v);
  return out;
}

at::Tensor log_of(const std::vector<std::vector<float>>& probs) {
  std::vector<float> flat;
  for (const auto& row : probs) flat.insert(flat.end(), row.begin(), row.end());
  return at::tensor(flat).view({static_cast<std::int64_t>(probs.size()), -1}).log();
}

at::Tensor history_of(const std::vector<std::vector<std::int64_t>>& rows) {
  std::vector<std::int64_t> flat;
  for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
  return at::tensor(flat, at::kLong).view({static_cast<std::int64_t>(rows.size()), -1});
}

// Row 0: token 1 has 0.5, 3 has 0.3, 2 has 0.15, 0 has 0.05. Row 1: 0.1, 0.2, 0.3, 0.4.
const std::vector<std::vector<float>> kProbs{{.05f, .5f, .15f, .3f}, {.1f, .2f, .3f, .4f}};

// Per row, the candidate tokens whose logit is not -inf.
Kept kept(const SamplingCandidates& candidates) {
  Kept out(candidates.tokens.size(0));
  for (std::int64_t r = 0; r < candidates.tokens.size(0); ++r)
    for (std::int64_t c = 0; c < candidates.tokens.size(1); ++c)
      if (!std::isinf(candidates.logits[r][c].item<float>()))
        out[r].insert(candidates.tokens[r][c].item<std::int64_t>());
  return out;
}

Kept kept_with(double top_p, std::int64_t top_k = 0, double temperature = 1) {
  GenerationOptions options;
  options.top_p = top_p;
  options.top_k = top_k;
  options.temperature = temperature;
  return kept(sampling_candidates(log_of(kProbs), options));
}

TEST(LogitsProcessing, TopPKeepsTheSmallestSetReachingP) {
  EXPECT_EQ(kept_with(0.75), (Kept{{1, 3}, {3, 2, 1}}));      // .8; .9
  EXPECT_EQ(kept_with(0.85), (Kept{{1, 3, 2}, {3, 2, 1}}));   // .95; .9
  EXPECT_EQ(kept_with(0.3), (Kept{{1}, {3}}));                // the top token alone
  EXPECT_EQ(kept_with(0.92), (Kept{{1, 3, 2}, {0, 1, 2, 3}}));  // .95; 1
  EXPECT_EQ(kept_with(1.0), (Kept{{0, 1, 2, 3}, {0, 1, 2, 3}}));
}

TEST(LogitsProcessing, CandidatesKeepTheirLogitsMostLikelyFirst) {
  GenerationOptions options;
  options.top_p = 0.75;
  const at::Tensor logits = log_of(kProbs);
  const SamplingCandidates candidates = sampling_candidates(logits, options);
  EXPECT_TRUE(at::equal(candidates.tokens, at::tensor({1, 3, 2, 0, 3, 2, 1, 0}, at::kLong).view({2, 4})));
  EXPECT_EQ(candidates.logits[0][1].item<float>(), logits[0][3].item<float>());
  EXPECT_EQ(candidates.logits[1][2].item<float>(), logits[1][1].item<float>());
  // No filter: every token, in vocabulary order, with its logit.
  const SamplingCandidates all = sampling_candidates(logits, {});
  EXPECT_TRUE(at::equal(all.logits, logits));
  EXPECT_TRUE(at::equal(all.tokens, at::arange(4).expand({2, 4})));
}

TEST(LogitsProcessing, TopKKeepsTheKBest) {
  EXPECT_EQ(kept_with(1, 1), (Kept{{1}, {3}}));
  EXPECT_EQ(kept_with(1, 2), (Kept{{1, 3}, {3, 2}}));
  EXPECT_EQ(kept_with(1, 4), (Kept{{0, 1, 2, 3}, {0, 1, 2, 3}}));
  EXPECT_EQ(kept_with(1, 9), (Kept{{0, 1, 2, 3}, {0, 1, 2, 3}}));
  // Top-p then applies to the k candidates renormalised: row 0's {1, 3} become .625 / .375,
  // so 0.6 keeps token 1 alone, where over all four tokens it would keep 1 and 3 (.5 < .6).
  EXPECT_EQ(kept_with(0.7, 2), (Kept{{1, 3}, {3, 2}}));
  EXPECT_EQ(kept_with(0.6, 2), (Kept{{1}, {3, 2}}));  // row 1: .4 / .7 = .571 < .6
  EXPECT_EQ(kept_with(0.6), (Kept{{1, 3}, {3, 2}}));
}

TEST(LogitsProcessing, TemperatureDividesBeforeTopKAndTopP) {
  const at::Tensor logits = log_of(kProbs);
  GenerationOptions options;
  options.temperature = 2;
  EXPECT_TRUE(at::allclose(sampling_candidates(logits, options).logits, logits / 2));
  // At temperature 2 row 0 becomes 0.379 / 0.294 / 0.208 / 0.120 (tokens 1, 3, 2, 0): a
  // nucleus of 0.75 now needs three tokens, where at temperature 1 it needed two.
  EXPECT_EQ(kept_with(0.75, 0, 2)[0], (std::set<std::int64_t>{1, 3, 2}));
  EXPECT_EQ(kept_with(0.75, 2, 2)[0], (std::set<std::int64_t>{1, 3}));
}

TEST(LogitsProcessing, MinLengthBansEosUntilReached) {
  const at::Tensor scores = at::zeros({2, 5});
  GenerationOptions options;  // eos_id 1
  options.min_length = 2;
  const Kept all{{0, 1, 2, 3, 4}, {0, 1, 2, 3, 4}};
  EXPECT_EQ(kept(constrain(scores, history_of({{3}, {4}}), options)), (Kept{{0, 2, 3, 4}, {0, 2, 3, 4}}));
  EXPECT_EQ(kept(constrain(scores, history_of({{3, 3}, {4, 4}}), options)), all);
  EXPECT_EQ(kept(scores), all) << "the input is left alone";
}

TEST(LogitsProcessing, NoRepeatNgramBansTokensCompletingASeenNgram) {
  const at::Tensor scores = at::zeros({2, 6});
  const at::Tensor history = history_of({{3, 4, 5, 3}, {4, 4, 4, 4}});
  const auto banned = [&](std::int64_t n) {
    Kept out;
    for (const auto& row : kept(ban_repeated_ngrams(scores, history, n))) {
      std::set<std::int64_t> gone;
      for (std::int64_t v = 0; v < 6; ++v)
        if (!row.count(v)) gone.insert(v);
      out.push_back(gone);
    }
    return out;
  };
  EXPECT_EQ(banned(1), (Kept{{3, 4, 5}, {4}}));  // every token seen
  EXPECT_EQ(banned(2), (Kept{{4}, {4}}));        // "3 4" and "4 4" were seen
  EXPECT_EQ(banned(3), (Kept{{}, {4}}));         // "5 3 ?" unseen; "4 4 4" seen
  EXPECT_EQ(banned(4), (Kept{{}, {4}}));
  EXPECT_EQ(banned(5), (Kept{{}, {}}));          // history shorter than n
  EXPECT_EQ(banned(0), (Kept{{}, {}}));          // off
  GenerationOptions options;
  options.no_repeat_ngram_size = 2;
  EXPECT_EQ(kept(constrain(scores, history, options)), (Kept{{0, 1, 2, 3, 5}, {0, 1, 2, 3, 5}}));
}

}  // namespace
}  // namespace strata::decode
