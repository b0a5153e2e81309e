#include "strata/data/masked_lm.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/core/split_mix64.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {

bool is_special(const MaskingVocabulary& vocabulary, std::int32_t id) {
  return std::binary_search(vocabulary.specials.begin(), vocabulary.specials.end(), id);
}

}  // namespace

MaskingVocabulary masking_vocabulary(const Tokenizer& tokenizer, const std::filesystem::path& tokenizer_path) {
  const std::optional<std::int32_t> mask = tokenizer.mask_id();
  if (!mask) {
    const std::string& piece = tokenizer.specials().mask;
    throw Error(fmt::format("{}: the {} tokenizer has no mask token{}, which masked-LM pretraining (data.task = mlm, "
                            "`strata pretrain`) needs; `strata tokenizer train` makes tokenizers with <mask>",
                            tokenizer_path.string(), tokenizer.kind(), piece.empty() ? "" : " (" + piece + ")"));
  }
  MaskingVocabulary vocabulary{*mask, tokenizer.vocab_size(), {}};
  for (const std::string& piece : tokenizer.specials().all())
    if (const auto id = tokenizer.piece_to_id(piece)) vocabulary.specials.push_back(*id);
  std::sort(vocabulary.specials.begin(), vocabulary.specials.end());
  vocabulary.specials.erase(std::unique(vocabulary.specials.begin(), vocabulary.specials.end()),
                            vocabulary.specials.end());
  return vocabulary;
}

void check_mlm_probability(double probability) {
  if (!(probability > 0 && probability <= 1))
    throw Error(fmt::format("pretrain.mlm_probability: the share of tokens masked must be in (0, 1], got {}",
                            probability));
}

MaskedTokens mask_tokens(std::span<const std::int32_t> ids, const MaskingVocabulary& vocabulary, double probability,
                         std::uint64_t seed) {
  check_mlm_probability(probability);
  if (vocabulary.vocab_size <= static_cast<std::int32_t>(vocabulary.specials.size()))
    throw Error(fmt::format("masked LM: a vocabulary of {} tokens, {} of them special, has no token to draw",
                            vocabulary.vocab_size, vocabulary.specials.size()));
  MaskedTokens out{std::vector<std::int32_t>(ids.begin(), ids.end()),
                   std::vector<std::int64_t>(ids.size(), kUnscoredLabel)};
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (!is_special(vocabulary, ids[i])) candidates.push_back(i);
  if (candidates.empty()) return out;
  const std::size_t n = candidates.size();
  const std::size_t chosen =
      std::clamp<std::size_t>(static_cast<std::size_t>(std::llround(probability * static_cast<double>(n))), 1, n);
  SplitMix64 rng(seed);
  for (std::size_t k = 0; k < chosen; ++k) {  // the first `chosen` of a random permutation
    std::swap(candidates[k], candidates[k + rng.below(n - k)]);
    const std::size_t i = candidates[k];
    out.labels[i] = ids[i];
    const double roll = rng.uniform();
    if (roll < 0.8) {
      out.inputs[i] = vocabulary.mask_id;
    } else if (roll < 0.9) {
      std::int32_t random;
      do random = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(vocabulary.vocab_size)));
      while (is_special(vocabulary, random));
      out.inputs[i] = random;
    }
  }
  return out;
}

}  // namespace strata
