#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "strata/core/split_mix64.h"
#include "strata/data/denoising.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"

namespace strata {
namespace {

using test_support::error_of;

constexpr std::int32_t kMask = 3;
constexpr std::int32_t kEos = 2;
constexpr std::int32_t kFirstWord = 100;  // text tokens are kFirstWord, kFirstWord + 1, ...

// `sections` sections below the root, each with sentences of 1 to 12 tokens, then eos. Every
// text token is distinct and numbered in document order, so order is easy to check.
Layout synthetic_layout(int sections, int sentences_per_section, std::uint64_t seed) {
  SplitMix64 rng(seed);
  Layout layout;
  layout.tree.parent = {-1};
  layout.tree.depth = {0};
  layout.tree.heading = {""};
  std::int32_t token = kFirstWord, sentence = 0, paragraph = 0;
  for (int s = 1; s <= sections; ++s) {
    layout.tree.parent.push_back(0);
    layout.tree.depth.push_back(1);
    layout.tree.heading.emplace_back("section");
    for (int k = 0; k < sentences_per_section; ++k, ++sentence) {
      if (k % 3 == 0 && k > 0) ++paragraph;
      const auto length = 1 + static_cast<int>(rng.below(12));
      for (int t = 0; t < length; ++t) {
        layout.token.push_back(token++);
        layout.section.push_back(s);
        layout.paragraph.push_back(paragraph);
        layout.sentence.push_back(sentence);
      }
    }
    ++paragraph;
  }
  layout.token.push_back(kEos);
  layout.section.push_back(0);
  layout.paragraph.push_back(-1);
  layout.sentence.push_back(-1);
  for (std::size_t p = 0; p < layout.size(); ++p) {
    layout.position.push_back(static_cast<std::int32_t>(p));
    layout.segment.push_back(0);
  }
  return layout;
}

std::size_t text_tokens(const Layout& layout) {
  return static_cast<std::size_t>(std::count_if(layout.sentence.begin(), layout.sentence.end(),
                                                [](std::int32_t s) { return s >= 0; }));
}

// Checks the infilling contract on a layout whose text tokens are kFirstWord + their index:
// kept tokens in order, each run of removed tokens replaced by exactly one mask, no two masks
// together. Returns the number of text tokens removed.
std::size_t check_infilled(const Layout& clean, const Layout& noised) {
  const std::size_t text = text_tokens(clean);
  std::int64_t previous = -1;  // index of the last kept text token
  std::size_t masks_since = 0, removed = 0;
  const auto close_gap = [&](std::int64_t next) {
    const auto skipped = static_cast<std::size_t>(next - previous - 1);
    EXPECT_LE(masks_since, 1u) << "two masks in one gap";
    if (skipped > 0) {
      EXPECT_EQ(masks_since, 1u) << "removed tokens without a mask before index " << next;
    }
    removed += skipped;
    masks_since = 0;
  };
  for (std::size_t p = 0; p < noised.size(); ++p) {
    const std::int32_t token = noised.token[p];
    if (token == kMask) {
      ++masks_since;
    } else if (token >= kFirstWord) {
      const std::int64_t index = token - kFirstWord;
      EXPECT_GT(index, previous) << "kept tokens out of order";
      close_gap(index);
      previous = index;
    }
  }
  close_gap(static_cast<std::int64_t>(text));
  EXPECT_EQ(noised.token.back(), kEos);
  return removed;
}

TEST(Denoising, InfillingMasksTheRatioOfTextTokens) {
  std::size_t text = 0, removed = 0;
  for (std::uint64_t doc = 0; doc < 200; ++doc) {
    const Layout clean = synthetic_layout(3, 6, doc);
    const Layout noised = infill_text(clean, kMask, 0.3, 3.0, 1, doc);
    const std::size_t n = text_tokens(clean), gone = check_infilled(clean, noised);
    EXPECT_EQ(gone, static_cast<std::size_t>(std::llround(0.3 * static_cast<double>(n))));
    text += n;
    removed += gone;
  }
  EXPECT_NEAR(static_cast<double>(removed) / static_cast<double>(text), 0.3, 0.01);
}

TEST(Denoising, InfillingRedoesPositionsAndSegmentsAndKeepsTheIdsOfEachToken) {
  const Layout clean = synthetic_layout(2, 8, 5);
  const Layout noised = infill_text(clean, kMask, 0.3, 3.0, 4, 9);
  ASSERT_LT(noised.size(), clean.size());
  for (std::size_t p = 0; p < noised.size(); ++p) {
    EXPECT_EQ(noised.position[p], static_cast<std::int32_t>(p));
    EXPECT_EQ(noised.segment[p], even_segment(p, noised.size(), 4));
    if (noised.token[p] >= kFirstWord) {
      const auto original = static_cast<std::size_t>(noised.token[p] - kFirstWord);
      EXPECT_EQ(noised.sentence[p], clean.sentence[original]);
      EXPECT_EQ(noised.section[p], clean.section[original]);
    }
  }
  EXPECT_EQ(noised.tree.parent, clean.tree.parent);
}

TEST(Denoising, SpanLengthsArePoissonAndCoverTheTokensExactly) {
  SplitMix64 rng(17);
  const std::vector<std::size_t> lengths = draw_span_lengths(300000, 3.0, rng);
  EXPECT_EQ(std::accumulate(lengths.begin(), lengths.end(), std::size_t{0}), 300000u);
  double sum = 0, squares = 0, zeros = 0;
  for (std::size_t length : lengths) {
    sum += static_cast<double>(length);
    squares += static_cast<double>(length * length);
    zeros += length == 0;
  }
  const double n = static_cast<double>(lengths.size()), mean = sum / n;
  EXPECT_NEAR(mean, 3.0, 0.05);
  EXPECT_NEAR(squares / n - mean * mean, 3.0, 0.1);  // a Poisson's variance is its mean
  EXPECT_NEAR(zeros / n, std::exp(-3.0), 0.005);     // spans of length 0: insertions
  SplitMix64 none(1);
  EXPECT_TRUE(draw_span_lengths(0, 3.0, none).empty());
}

TEST(Denoising, NoiseIsAFunctionOfItsSeed) {
  Seq2SeqExample clean;
  clean.source = synthetic_layout(3, 5, 1);
  clean.target = clean.source.token;
  const DenoisingOptions options;
  const Seq2SeqExample a = add_noise(clean, kMask, options, 1, 42), b = add_noise(clean, kMask, options, 1, 42);
  const Seq2SeqExample c = add_noise(clean, kMask, options, 1, 43);
  EXPECT_EQ(a.source.token, b.source.token);
  EXPECT_EQ(a.source.sentence, b.source.sentence);
  EXPECT_NE(a.source.token, c.source.token);
  EXPECT_EQ(a.target, clean.target);  // the target stays clean
  EXPECT_NE(noise_seed(1, 0, 0), noise_seed(1, 1, 0));
  EXPECT_NE(noise_seed(1, 0, 0), noise_seed(1, 0, 1));
  EXPECT_NE(noise_seed(1, 0, 0), noise_seed(2, 0, 0));
  EXPECT_EQ(noise_seed(1, 2, 3), noise_seed(1, 2, 3));
}

TEST(Denoising, SentencePermutationShufflesWholeSentencesWithinSections) {
  const Layout clean = synthetic_layout(3, 6, 3);
  std::map<std::int32_t, std::vector<std::int32_t>> sentences;  // first token -> the sentence's tokens
  for (std::size_t p = 0; p < clean.size(); ++p)
    if (clean.sentence[p] >= 0) {
      const bool starts = p == 0 || clean.sentence[p - 1] != clean.sentence[p];
      auto& tokens = starts ? sentences[clean.token[p]] : sentences.rbegin()->second;
      tokens.push_back(clean.token[p]);
    }
  bool moved = false;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    const Layout permuted = permute_sentences(clean, seed);
    ASSERT_EQ(permuted.size(), clean.size());
    EXPECT_EQ(permuted.section, clean.section);  // sections stay where they were
    EXPECT_EQ(permuted.position, clean.position);
    auto a = permuted.token, b = clean.token;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b);  // the same tokens
    moved = moved || permuted.token != clean.token;
    // Every sentence arrives whole, and sentence ids appear in increasing order.
    std::int32_t last_sentence = -1;
    for (std::size_t p = 0; p < permuted.size(); ++p) {
      if (permuted.sentence[p] < 0 || (p > 0 && permuted.sentence[p - 1] == permuted.sentence[p])) continue;
      EXPECT_GT(permuted.sentence[p], last_sentence);
      last_sentence = permuted.sentence[p];
      const auto& whole = sentences.at(permuted.token[p]);
      ASSERT_LE(p + whole.size(), permuted.size());
      EXPECT_TRUE(std::equal(whole.begin(), whole.end(), permuted.token.begin() + static_cast<std::ptrdiff_t>(p)));
    }
    EXPECT_EQ(permuted.token.back(), kEos);
  }
  EXPECT_TRUE(moved);
}

TEST(Denoising, OneSentenceAndEmptyDocumentsPassThrough) {
  Layout one = synthetic_layout(1, 1, 2);
  EXPECT_EQ(permute_sentences(one, 7).token, one.token);
  Layout only_eos = synthetic_layout(0, 0, 2);
  ASSERT_EQ(only_eos.size(), 1u);
  Seq2SeqExample clean{"id", only_eos, {kEos}, ""};
  EXPECT_EQ(add_noise(clean, kMask, {}, 1, 3).source.token, std::vector<std::int32_t>{kEos});
  clean.source = Layout{};
  EXPECT_EQ(add_noise(clean, kMask, {}, 1, 3).source.size(), 0u);
}

TEST(Denoising, TheSourceNeverGrowsAndExtremeRatiosWork) {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const Layout clean = synthetic_layout(1, 1 + static_cast<int>(seed % 3), seed);
    EXPECT_LE(infill_text(clean, kMask, 0.3, 3.0, 1, seed).size(), clean.size());
  }
  const Layout clean = synthetic_layout(2, 4, 8);
  EXPECT_EQ(infill_text(clean, kMask, 0.0, 3.0, 1, 1).token, clean.token);
  const Layout all = infill_text(clean, kMask, 1.0, 3.0, 1, 1);
  EXPECT_EQ(all.token, (std::vector<std::int32_t>{kMask, kEos}));
}

TEST(Denoising, OptionsOutOfRangeNameTheirKeys) {
  EXPECT_NE(error_of([] { check(DenoisingOptions{1.5, 3.0, true}); }).find("pretrain.mask_ratio"), std::string::npos);
  EXPECT_NE(error_of([] { check(DenoisingOptions{0.3, 0.0, true}); }).find("pretrain.poisson_lambda"),
            std::string::npos);
  EXPECT_EQ(error_of([] { check(DenoisingOptions{}); }), "(no error)");
}

TEST(Denoising, LoadedExamplesTargetTheCleanSourceAndNeedNoSummary) {
  const auto path = std::filesystem::temp_directory_path() / ("strata_denoise_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << nlohmann::json{{"document", "one two three. four five."}, {"summary", ""}}.dump() << "\n";
    out << nlohmann::json{{"document", ""}, {"summary", "x"}}.dump() << "\n";
    out << nlohmann::json{{"document", "six seven eight nine ten."}, {"summary", "six"}}.dump() << "\n";
  }
  const test_support::WordTokenizer tokenizer;
  TruncationOptions truncation;
  truncation.max_source_tokens = 5;
  const std::vector<Seq2SeqExample> examples = load_denoising_examples(path, tokenizer, truncation, false);
  std::filesystem::remove(path);
  ASSERT_EQ(examples.size(), 2u);  // the empty body is skipped; the empty summary is not
  for (const Seq2SeqExample& example : examples) {
    EXPECT_EQ(example.target, example.source.token);
    EXPECT_EQ(example.source.size(), 5u);  // cut to max_source_tokens, eos included
  }
  EXPECT_EQ(examples[0].reference, "one two three. four");
}

TEST(Denoising, WholeDocumentsAreCutIntoChunksThatCoverEveryToken) {
  const auto path =
      std::filesystem::temp_directory_path() / ("strata_denoise_chunks_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << nlohmann::json{{"id", "long"}, {"document", "one two three. four five six. seven eight nine."},
                          {"summary", ""}}.dump() << "\n";
    out << nlohmann::json{{"id", "empty"}, {"document", ""}, {"summary", ""}}.dump() << "\n";
    out << nlohmann::json{{"id", "short"}, {"document", "ten eleven."}, {"summary", ""}}.dump() << "\n";
  }
  const test_support::WordTokenizer tokenizer;  // </s> = 2
  TruncationOptions truncation;
  truncation.max_source_tokens = 4;
  const std::vector<Seq2SeqExample> heads = load_denoising_examples(path, tokenizer, truncation, false);
  const std::vector<Seq2SeqExample> chunks = load_denoising_chunks(path, tokenizer, truncation, false);
  truncation.max_source_tokens = 1;
  const std::string too_short = error_of([&] { load_denoising_chunks(path, tokenizer, truncation, false); });
  std::filesystem::remove(path);
  ASSERT_EQ(heads.size(), 2u);  // the first 3 words of each document only
  // 9 words at 3 a chunk (eos takes the fourth place), then 2 words in one chunk.
  ASSERT_EQ(chunks.size(), 4u);
  std::string long_text;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    const Seq2SeqExample& chunk = chunks[c];
    EXPECT_LE(chunk.source.size(), 4u);
    EXPECT_EQ(chunk.source.token.back(), kEos);
    EXPECT_EQ(chunk.target, chunk.source.token);
    EXPECT_EQ(chunk.source.position.front(), 0);
    if (c < 3) long_text += (c ? " " : "") + chunk.reference;
  }
  EXPECT_EQ(chunks[0].id, "long#1");
  EXPECT_EQ(chunks[2].id, "long#3");
  EXPECT_EQ(chunks[3].id, "short#1");
  EXPECT_EQ(long_text, "one two three. four five six. seven eight nine.");
  EXPECT_EQ(chunks[0].source.token, heads[0].source.token);  // the first chunk is the document's head
  EXPECT_NE(too_short.find("data.max_source_tokens"), std::string::npos) << too_short;
}

}  // namespace
}  // namespace strata
