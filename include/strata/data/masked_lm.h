#pragma once
// BERT's masked-LM corruption (Devlin et al. 2019, §3.1 and appendix A.1) for pretraining an
// encoder on raw text: a share of the real tokens is chosen, and of those 80 % become <mask>,
// 10 % a random token and 10 % stay; the model predicts the original of every chosen token.
// Special tokens ([CLS], [SEP], section markers, <unk>, ...) are never chosen, nor drawn as
// random tokens.
//
// Masking is a pure function of its seed: the training task seeds it with (train.seed, epoch,
// example), so every epoch sees fresh masks and a resumed run draws the same again.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace strata {

class Tokenizer;

// The label of a position the loss does not score (the ignore index of cross-entropy).
inline constexpr std::int64_t kUnscoredLabel = -100;

struct MaskingVocabulary {
  std::int32_t mask_id = 0;
  std::int32_t vocab_size = 0;        // random tokens are drawn from [0, vocab_size) less the specials
  std::vector<std::int32_t> specials;  // sorted, unique: never chosen, never drawn
};

// The tokenizer's mask id, vocabulary size and special ids (every named and structural special
// it has). strata::Error naming `tokenizer_path` when it has no mask token.
MaskingVocabulary masking_vocabulary(const Tokenizer& tokenizer, const std::filesystem::path& tokenizer_path);

// strata::Error naming pretrain.mlm_probability unless 0 < probability <= 1.
void check_mlm_probability(double probability);

struct MaskedTokens {
  std::vector<std::int32_t> inputs;  // the ids, chosen positions masked, replaced or kept
  std::vector<std::int64_t> labels;  // the original id at a chosen position, kUnscoredLabel elsewhere
};

// Chooses max(1, round(probability × n)) of the n non-special positions of `ids` (none when n
// is 0), as BERT's data generation does, so that every sequence with text scores something;
// each chosen one becomes mask_id with probability 0.8, a random non-special token with 0.1,
// and stays with 0.1. strata::Error when the vocabulary has no non-special token to draw.
MaskedTokens mask_tokens(std::span<const std::int32_t> ids, const MaskingVocabulary& vocabulary, double probability,
                         std::uint64_t seed);

}  // namespace strata
