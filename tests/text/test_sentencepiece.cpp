#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/text/sentencepiece_tokenizer.h"
#include "strata/text/tokenizer_sidecar.h"
#include "text_test_util.h"
#include "support/expect.h"

namespace strata {
namespace {

SentencePieceOptions small_options(const std::string& type) {
  SentencePieceOptions options;
  options.model_type = type;
  options.vocab_size = 300;
  return options;
}

using test_support::error_of;

class SentencePieceKinds : public ::testing::TestWithParam<std::string> {};

TEST_P(SentencePieceKinds, TrainsWritesAndReloads) {
  test::TempDir dir("spm-" + GetParam());
  const auto sentences = test::generated_sentences(2000);
  const auto t = SentencePieceTokenizer::train(sentences, small_options(GetParam()), dir.path());
  EXPECT_EQ(t->kind(), "sentencepiece");
  EXPECT_EQ(t->vocab_size(), 300);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "tokenizer.model"));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / kSidecarName));
  // Control pieces, then user-defined symbols.
  test::expect_standard_special_ids(*t);
  EXPECT_EQ(t->piece_to_id("[L-]"), 13);
  EXPECT_FALSE(t->piece_to_id("no-such-piece").has_value());

  const std::string text = "[SEC] the model reads [SEC-L2]long documents[L↑] with sections.";
  const std::vector<std::int32_t> ids = t->encode(text);
  for (const char* marker : {"[SEC]", "[SEC-L2]", "[L↑]"})
    EXPECT_NE(std::find(ids.begin(), ids.end(), *t->piece_to_id(marker)), ids.end()) << marker;
  EXPECT_EQ(t->decode(ids), text);

  const auto loaded = SentencePieceTokenizer::load(dir / "tokenizer.model");
  EXPECT_EQ(loaded->encode(text), ids);
  EXPECT_EQ(loaded->specials().all(), t->specials().all());
}

INSTANTIATE_TEST_SUITE_P(UnigramAndBpe, SentencePieceKinds, ::testing::Values("unigram", "bpe"));

TEST(SentencePiece, TrainsFromFilesAndSamples) {
  test::TempDir dir("spm-files");
  std::string lines;
  for (const std::string& s : test::generated_sentences(1500)) lines += s + "\n";
  write_file_atomic(dir / "a.txt", lines);
  write_file_atomic(dir / "b.txt", lines);
  SentencePieceOptions options = small_options("unigram");
  options.input_sentence_size = 1000;
  const std::vector<std::filesystem::path> files{dir / "a.txt", dir / "b.txt"};
  const auto t = SentencePieceTokenizer::train_files(files, options, dir / "out");
  EXPECT_EQ(t->vocab_size(), 300);
  EXPECT_TRUE(std::filesystem::is_regular_file(dir / "out" / "tokenizer.model"));
}

TEST(SentencePiece, IdentityNormalizationKeepsWhitespace) {
  test::TempDir dir("spm-identity");
  SentencePieceOptions options = small_options("bpe");
  options.normalization = "identity";
  options.character_coverage = 1.0;
  const auto t =
      SentencePieceTokenizer::train(test::generated_sentences(2000), options, dir.path());
  const std::string text = "  the  model   reads ";
  EXPECT_EQ(t->decode(t->encode(text)), text);
}

// nmt_nfkc_cf: a word and its capitalised form are one token sequence, and the structural
// markers (user-defined symbols) are kept as written.
TEST(SentencePiece, CaseFoldingNormalizationFoldsWordsButKeepsMarkers) {
  test::TempDir dir("spm-casefold");
  SentencePieceOptions options = small_options("unigram");
  options.normalization = "nmt_nfkc_cf";
  const auto t = SentencePieceTokenizer::train(test::generated_sentences(2000), options, dir.path());
  EXPECT_EQ(t->encode("The Model READS documents"), t->encode("the model reads documents"));
  EXPECT_EQ(t->decode(t->encode("The Model READS documents")), "the model reads documents");
  const std::vector<std::int32_t> ids = t->encode("[SEC-L2]Long Sections");
  ASSERT_FALSE(ids.empty());
  EXPECT_NE(std::find(ids.begin(), ids.end(), *t->piece_to_id("[SEC-L2]")), ids.end());
  EXPECT_EQ(t->decode(ids), "[SEC-L2]long sections");
  EXPECT_EQ(SentencePieceTokenizer::load(dir / "tokenizer.model")->encode("Model"), t->encode("model"));
}

TEST(SentencePiece, LoadWithoutSidecarUsesTheModelIds) {
  test::TempDir dir("spm-nosidecar");
  SentencePieceOptions options = small_options("unigram");
  options.specials.bos.clear();  // T5-style: no bos
  const auto t =
      SentencePieceTokenizer::train(test::generated_sentences(2000), options, dir.path());
  std::filesystem::remove(dir / kSidecarName);
  const auto loaded = SentencePieceTokenizer::load(dir / "tokenizer.model");
  EXPECT_FALSE(loaded->bos_id().has_value());
  EXPECT_EQ(loaded->eos_id(), 0);
  EXPECT_EQ(loaded->pad_id(), 1);
  EXPECT_EQ(loaded->sep_id(), 3);
  EXPECT_EQ(loaded->specials().structural, SpecialTokens::default_structural());
}

TEST(SentencePiece, BadOptionsAndDataAreErrors) {
  test::TempDir dir("spm-bad");
  const auto sentences = test::generated_sentences(200);
  SentencePieceOptions options = small_options("wordpiece");
  EXPECT_NE(error_of([&] {
              SentencePieceTokenizer::train(sentences, options, dir.path());
            }).find("expected unigram or bpe"),
            std::string::npos);
  options = small_options("unigram");
  options.vocab_size = 100000;
  const std::string message =
      error_of([&] { SentencePieceTokenizer::train(sentences, options, dir.path()); });
  EXPECT_NE(message.find("Vocabulary size too high"), std::string::npos) << message;
  EXPECT_FALSE(std::filesystem::exists(dir / "tokenizer.model"));
  options = small_options("unigram");
  options.specials.structural = {"[A,B]"};
  EXPECT_NE(error_of([&] {
              SentencePieceTokenizer::train(sentences, options, dir.path());
            }).find("comma"),
            std::string::npos);
}

TEST(SentencePiece, BadIdsAreErrors) {
  test::TempDir dir("spm-ids");
  const auto t = SentencePieceTokenizer::train(test::generated_sentences(2000),
                                               small_options("bpe"), dir.path());
  EXPECT_THROW(t->decode(std::vector<std::int32_t>{1, 300}), Error);
  EXPECT_THROW(t->id_to_piece(-1), Error);
  EXPECT_THROW(SentencePieceTokenizer("not a model", {}, "x"), Error);
}

TEST(SentencePiece, InvalidUtf8EncodesToValidIds) {
  test::TempDir dir("spm-utf8");
  const auto t = SentencePieceTokenizer::train(test::generated_sentences(2000),
                                               small_options("unigram"), dir.path());
  const std::vector<std::int32_t> ids = t->encode("model \xFF\xFE data \xC3");
  EXPECT_FALSE(ids.empty());
  for (const std::int32_t id : ids) EXPECT_TRUE(id >= 0 && id < t->vocab_size());
  EXPECT_NE(t->decode(ids).find("data"), std::string::npos);
}

}  // namespace
}  // namespace strata
