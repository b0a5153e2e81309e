#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/text/byte_bpe.h"
#include "text_test_util.h"

namespace strata {
namespace {

TEST(ByteBpeTrain, VocabularyHasSpecialsBytesAndMerges) {
  SpecialTokens specials;
  specials.structural = SpecialTokens::default_structural(1);
  const auto sentences = test::generated_sentences(500);
  const auto t = ByteBpeTokenizer::train(sentences, 400, specials);
  EXPECT_EQ(t->vocab_size(), 400);
  EXPECT_GE(t->merges().size(), 400u - 11u - 256u);  // 6 named + 5 structural specials
  test::expect_standard_special_ids(*t);
  EXPECT_EQ(t->id_to_piece(11), "!");  // then the bytes in GPT-2's order
}

TEST(ByteBpeTrain, FrequentWordsBecomeOneTokenAndTextRoundTrips) {
  const auto sentences = test::generated_sentences(2000);
  const auto t = ByteBpeTokenizer::train(sentences, 600, SpecialTokens{});
  EXPECT_EQ(t->encode(" documents").size(), 1u);
  EXPECT_EQ(t->encode(" attention").size(), 1u);
  EXPECT_EQ(t->id_to_piece(t->encode(" attention")[0]), "\u0120attention");
  for (const std::string& s : sentences) EXPECT_EQ(t->decode(t->encode(s)), s);
}

TEST(ByteBpeTrain, SpecialTokensInTheTextAreNotLearned) {
  SpecialTokens specials;
  specials.structural = {"[SEC]"};
  const std::vector<std::string> texts(50, "[SEC] alpha [SEC] beta");
  const auto t = ByteBpeTokenizer::train(texts, 300, specials);
  for (std::int32_t id = 7; id < t->vocab_size(); ++id)  // past the special tokens
    EXPECT_EQ(t->id_to_piece(id).find("SEC]"), std::string::npos) << t->id_to_piece(id);
  EXPECT_EQ(t->encode("[SEC] alpha"),
            (std::vector<std::int32_t>{6, *t->piece_to_id("\u0120alpha")}));
}

TEST(ByteBpeTrain, StopsWhenNoPairRepeats) {
  const std::vector<std::string> texts{"ab"};
  const auto t = ByteBpeTokenizer::train(texts, 1000, SpecialTokens{});
  EXPECT_TRUE(t->merges().empty());
  EXPECT_EQ(t->vocab_size(), 262);
}

TEST(ByteBpeTrain, IsDeterministic) {
  const auto sentences = test::generated_sentences(300);
  EXPECT_EQ(ByteBpeTokenizer::train(sentences, 350, {})->merges(),
            ByteBpeTokenizer::train(sentences, 350, {})->merges());
}

TEST(ByteBpeTrain, TooSmallVocabularyIsAnError) {
  const std::vector<std::string> texts{"abc"};
  EXPECT_THROW(ByteBpeTokenizer::train(texts, 100, SpecialTokens{}), Error);
}

}  // namespace
}  // namespace strata
