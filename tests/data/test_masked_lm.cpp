#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "strata/core/error.h"
#include "strata/data/masked_lm.h"
#include "strata/data/mlm_examples.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"

namespace strata {
namespace {

using test_support::error_of;

constexpr std::int32_t kCls = 1, kSep = 2, kMask = 4, kSection = 5, kVocab = 50;

MaskingVocabulary vocabulary() { return {kMask, kVocab, {0, kCls, kSep, 3, kMask, kSection}}; }

bool special(std::int32_t id) {
  const std::vector<std::int32_t> specials = vocabulary().specials;
  return std::binary_search(specials.begin(), specials.end(), id);
}

// [CLS], then `n` text tokens (ids 10..49) with a section marker every 50, then [SEP].
std::vector<std::int32_t> sequence(std::size_t n) {
  std::vector<std::int32_t> ids{kCls};
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 50 == 0) ids.push_back(kSection);
    ids.push_back(10 + static_cast<std::int32_t>(i % 40));
  }
  ids.push_back(kSep);
  return ids;
}

TEST(MaskedLm, ChoosesFifteenPercentOfTheRealTokensSplitEightyTenTen) {
  const std::vector<std::int32_t> ids = sequence(20000);
  std::size_t chosen = 0, masked = 0, replaced = 0, kept = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const MaskedTokens out = mask_tokens(ids, vocabulary(), 0.15, seed);
    ASSERT_EQ(out.inputs.size(), ids.size());
    ASSERT_EQ(out.labels.size(), ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (out.labels[i] == kUnscoredLabel) {
        EXPECT_EQ(out.inputs[i], ids[i]) << i;  // unchosen tokens stay
        continue;
      }
      ASSERT_FALSE(special(ids[i])) << "special token chosen at " << i;
      EXPECT_EQ(out.labels[i], ids[i]);
      ++chosen;
      if (out.inputs[i] == kMask) {
        ++masked;
      } else if (out.inputs[i] == ids[i]) {
        ++kept;
      } else {
        ++replaced;
        EXPECT_FALSE(special(out.inputs[i])) << "random token " << out.inputs[i] << " is special";
        EXPECT_LT(out.inputs[i], kVocab);
      }
    }
  }
  EXPECT_EQ(chosen, 5u * 3000u);  // round(0.15 × 20000) per sequence, exactly
  const double n = static_cast<double>(chosen);
  EXPECT_NEAR(masked / n, 0.8, 0.02);
  // A random token equal to the original counts as kept: 1/44 of the 10 % (44 non-specials).
  EXPECT_NEAR(replaced / n, 0.1 * 43 / 44, 0.015);
  EXPECT_NEAR(kept / n, 0.1 + 0.1 / 44, 0.015);
}

TEST(MaskedLm, TheSameSeedDrawsTheSameMasksAndAnotherSeedOthers) {
  const std::vector<std::int32_t> ids = sequence(300);
  const MaskedTokens a = mask_tokens(ids, vocabulary(), 0.15, 7), b = mask_tokens(ids, vocabulary(), 0.15, 7),
                     c = mask_tokens(ids, vocabulary(), 0.15, 8);
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.labels, c.labels);
}

TEST(MaskedLm, ScoresAtLeastOneTokenOfAShortSequenceAndNoneOfOnlySpecials) {
  const std::vector<std::int32_t> short_ids{kCls, 11, 12, kSep};  // round(0.15 × 2) = 0 -> 1
  const MaskedTokens one = mask_tokens(short_ids, vocabulary(), 0.15, 3);
  EXPECT_EQ(std::count_if(one.labels.begin(), one.labels.end(), [](auto l) { return l != kUnscoredLabel; }), 1);
  EXPECT_EQ(one.labels.front(), kUnscoredLabel);
  EXPECT_EQ(one.labels.back(), kUnscoredLabel);

  const std::vector<std::int32_t> specials_only{kCls, kSection, kSep};
  const MaskedTokens none = mask_tokens(specials_only, vocabulary(), 0.15, 3);
  EXPECT_EQ(none.inputs, specials_only);
  EXPECT_TRUE(std::all_of(none.labels.begin(), none.labels.end(), [](auto l) { return l == kUnscoredLabel; }));
}

TEST(MaskedLm, AProbabilityOutsideZeroToOneNamesTheKey) {
  EXPECT_NE(error_of([&] { mask_tokens(sequence(10), vocabulary(), 0.0, 1); }).find("pretrain.mlm_probability"),
            std::string::npos);
  EXPECT_NE(error_of([&] { check_mlm_probability(1.5); }).find("pretrain.mlm_probability"), std::string::npos);
}

TEST(MaskedLm, ATokenizerWithoutMaskIsAnErrorNamingItsPath) {
  test_support::WordTokenizer words;  // no <mask>
  const std::string message = error_of([&] { masking_vocabulary(words, "tokenizers/words"); });
  EXPECT_NE(message.find("tokenizers/words"), std::string::npos) << message;
  EXPECT_NE(message.find("no mask token"), std::string::npos) << message;
}

// 10 text tokens in sections 1 and 2 of a root with two children.
Layout text_layout() {
  Layout text;
  text.tree.parent = {-1, 0, 0};
  text.tree.depth = {0, 1, 1};
  text.tree.heading = {"", "A", "B"};
  for (std::int32_t i = 0; i < 10; ++i) {
    text.token.push_back(100 + i);
    text.position.push_back(i);
    text.section.push_back(i < 6 ? 1 : 2);
    text.paragraph.push_back(i / 3);
    text.sentence.push_back(i / 2);
    text.segment.push_back(0);
  }
  return text;
}

TEST(MaskedLm, ChunksCutTheTextEvenlyFramedByClsAndSep) {
  const std::vector<Layout> chunks = cut_into_chunks(text_layout(), /*max_tokens=*/6, kCls, kSep, /*segments=*/2);
  ASSERT_EQ(chunks.size(), 3u);  // 10 tokens, 4 a chunk at most: 3 + 3 + 4
  EXPECT_EQ(chunks[0].token, (std::vector<std::int32_t>{kCls, 100, 101, 102, kSep}));
  EXPECT_EQ(chunks[1].token, (std::vector<std::int32_t>{kCls, 103, 104, 105, kSep}));
  EXPECT_EQ(chunks[2].token, (std::vector<std::int32_t>{kCls, 106, 107, 108, 109, kSep}));
  const Layout& last = chunks[2];
  EXPECT_EQ(last.position, (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(last.section, (std::vector<std::int32_t>{0, 2, 2, 2, 2, 0}));
  EXPECT_EQ(last.sentence, (std::vector<std::int32_t>{-1, 3, 3, 4, 4, -1}));
  EXPECT_EQ(last.segment, (std::vector<std::int32_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(last.tree.heading, text_layout().tree.heading);
  EXPECT_NE(error_of([&] { cut_into_chunks(text_layout(), 2, kCls, kSep, 1); }).find("data.max_source_tokens"),
            std::string::npos);
}

std::size_t chunks_costs_sum(const std::vector<Layout>& chunks) {
  std::size_t sum = 0;
  for (const std::size_t cost : chunk_costs(chunks)) sum += cost;
  return sum;
}

TEST(MaskedLm, LoadedDocumentsAreCutWholeIntoChunks) {
  const auto path = std::filesystem::temp_directory_path() / ("strata_mlm_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << nlohmann::json{{"document", "a b c. d e f g h."}, {"summary", ""}}.dump() << "\n";
    out << nlohmann::json{{"document", ""}, {"summary", ""}}.dump() << "\n";
    out << nlohmann::json{{"document", "i j."}, {"summary", ""}}.dump() << "\n";
  }
  const test_support::WordTokenizer tokenizer;  // <s> = 1, </s> = 2 (it has no [SEP]), words from 4
  TruncationOptions options;
  options.max_source_tokens = 5;
  const std::vector<Layout> chunks = load_mlm_chunks(path, tokenizer, options, false);
  std::filesystem::remove(path);
  // The first body is 8 words (dots kept): 3 chunks of at most 3; the second, 2 words, fits in 1.
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks_costs_sum(chunks), 4u * 2 + 10);
  for (const Layout& chunk : chunks) {
    EXPECT_EQ(chunk.token.front(), 1);
    EXPECT_EQ(chunk.token.back(), 2);
    EXPECT_LE(chunk.size(), 5u);
  }
  EXPECT_EQ(tokenizer.decode(std::span(chunks[3].token).subspan(1, 2)), "i j.");
}

}  // namespace
}  // namespace strata
