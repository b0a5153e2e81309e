#include <gtest/gtest.h>

#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/jsonl.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/byte_unicode.h"

namespace strata {
namespace {

const std::string kFixtureDir = std::string(STRATA_FIXTURES_DIR) + "/text/";

// A vocabulary of the 256 byte pieces, then one piece per merge, then `extra` tokens.
ByteBpeTokenizer make(const std::vector<ByteBpeTokenizer::Merge>& merges,
                      const std::vector<std::string>& extra = {}, SpecialTokens specials = {}) {
  ByteBpeTokenizer::Vocab vocab;
  for (const unsigned char b : gpt2_byte_order())
    vocab.emplace(bytes_to_symbols(std::string(1, static_cast<char>(b))),
                  static_cast<std::int32_t>(vocab.size()));
  for (const auto& [left, right] : merges)
    vocab.emplace(left + right, static_cast<std::int32_t>(vocab.size()));
  for (const std::string& token : extra)
    vocab.emplace(token, static_cast<std::int32_t>(vocab.size()));
  return ByteBpeTokenizer(vocab, merges, extra, std::move(specials));
}

std::vector<std::string> pieces_of(const Tokenizer& t, std::string_view text) {
  std::vector<std::string> pieces;
  for (const std::int32_t id : t.encode(text)) pieces.push_back(t.id_to_piece(id));
  return pieces;
}

using Strings = std::vector<std::string>;

TEST(ByteBpe, MergesApplyLowestRankFirst) {
  // "wer": with (e r) ranked first the result is w|er; with (w e) first it is we|r.
  EXPECT_EQ(pieces_of(make({{"e", "r"}, {"w", "e"}}), "wer"), (Strings{"w", "er"}));
  EXPECT_EQ(pieces_of(make({{"w", "e"}, {"e", "r"}}), "wer"), (Strings{"we", "r"}));
  // " lower": Ġ l -> Ġl, l o is ranked after it and never applies; then o w, Ġl ow, e r,
  // Ġlow er, by rank.
  const ByteBpeTokenizer t = make({{"\u0120", "l"},
                                   {"l", "o"},
                                   {"o", "w"},
                                   {"\u0120l", "ow"},
                                   {"e", "r"},
                                   {"\u0120low", "er"}});
  EXPECT_EQ(pieces_of(t, " lower"), (Strings{"\u0120lower"}));
  EXPECT_EQ(pieces_of(t, "lower"), (Strings{"lo", "w", "er"}));
  EXPECT_EQ(pieces_of(t, " slower"), (Strings{"\u0120", "s", "lo", "w", "er"}));
}

TEST(ByteBpe, EveryOccurrenceOfTheBestPairMergesInOnePass) {
  // encoder.py merges all (x y) in "xyxy" before it looks at (xy x), even though (xy x)
  // has the lower rank; merging one pair at a time would give xyx|y instead.
  EXPECT_EQ(pieces_of(make({{"xy", "x"}, {"x", "y"}}), "xyxy"), (Strings{"xy", "xy"}));
  // Overlapping occurrences merge left to right.
  EXPECT_EQ(pieces_of(make({{"a", "a"}}), "aaa"), (Strings{"aa", "a"}));
}

TEST(ByteBpe, BytesOutsideAsciiUseTheByteAlphabet) {
  const ByteBpeTokenizer t = make({{"\u00C3", "\u00A9"}});  // the two bytes of "é"
  EXPECT_EQ(pieces_of(t, "é"), (Strings{"\u00C3\u00A9"}));
  EXPECT_EQ(t.decode(t.encode("café")), "café");
}

// Ids that GPT-2's encoder.py gives with the fixture vocabulary (make_gpt2_fixture.py).
void expect_reference_encodings(const Tokenizer& t) {
  JsonlReader reader(kFixtureDir + "gpt2_reference.jsonl");
  nlohmann::json line;
  int cases = 0;
  while (reader.next(line)) {
    const std::string text = line["text"];
    EXPECT_EQ(t.encode(text), line["ids"].get<std::vector<std::int32_t>>()) << text;
    EXPECT_EQ(t.decode(t.encode(text)), text);
    ++cases;
  }
  EXPECT_GE(cases, 30);
}

TEST(ByteBpe, EncodesLikeGpt2FromVocabAndMerges) {
  const auto t = ByteBpeTokenizer::from_vocab_merges(kFixtureDir + "gpt2_tiny/vocab.json",
                                                     kFixtureDir + "gpt2_tiny/merges.txt");
  expect_reference_encodings(*t);
  EXPECT_EQ(t->vocab_size(), 422);
  EXPECT_EQ(t->eos_id(), 421);  // <|endoftext|> plays bos and eos, as in GPT-2
  EXPECT_EQ(t->bos_id(), 421);
  EXPECT_FALSE(t->pad_id().has_value());
}

TEST(ByteBpe, EncodesLikeGpt2FromTokenizerJson) {
  const auto t = ByteBpeTokenizer::from_tokenizer_json(kFixtureDir + "gpt2_tiny_tokenizer.json");
  expect_reference_encodings(*t);
  EXPECT_EQ(t->encode("a<|endoftext|>b"), (std::vector<std::int32_t>{64, 421, 65}));
}

TEST(ByteBpe, RoundTripsRandomBytes) {
  const auto t = ByteBpeTokenizer::from_tokenizer_json(kFixtureDir + "gpt2_tiny_tokenizer.json");
  std::mt19937 rng(11);
  for (int round = 0; round < 500; ++round) {
    std::string text(rng() % 200, '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    EXPECT_EQ(t->decode(t->encode(text)), text);
  }
}

TEST(ByteBpe, RoundTripsRandomUtf8) {
  const auto t = ByteBpeTokenizer::from_tokenizer_json(kFixtureDir + "gpt2_tiny_tokenizer.json");
  const std::vector<std::string> alphabet{"a", "e",  "th", " ",      "  ", "\n", "\t", "'s",
                                          "é", "東", "👍",  "\u00A0", "7",  "!",  ".",  "\u0301"};
  std::mt19937 rng(5);
  for (int round = 0; round < 500; ++round) {
    std::string text;
    for (int n = rng() % 40; n > 0; --n) text += alphabet[rng() % alphabet.size()];
    EXPECT_EQ(t->decode(t->encode(text)), text);
  }
}

TEST(ByteBpe, StructuralMarkersStayWhole) {
  SpecialTokens specials;
  specials.structural = SpecialTokens::default_structural(2);
  const ByteBpeTokenizer t = make({{"\u0120", "t"}}, specials.all(), specials);
  const std::string text = "[SEC] intro[SEC-L1]x [L↑][L-] t [SEC-L3]";
  const Strings pieces = pieces_of(t, text);
  EXPECT_EQ(pieces[0], "[SEC]");
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "[SEC-L1]"), pieces.end());
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "[L↑]"), pieces.end());
  EXPECT_NE(std::find(pieces.begin(), pieces.end(), "[L-]"), pieces.end());
  // "[SEC-L3]" is not a marker of this tokenizer: it is spelled out in bytes.
  EXPECT_EQ(std::count(pieces.begin(), pieces.end(), "["), 1);
  EXPECT_EQ(t.decode(t.encode(text)), text);
  EXPECT_EQ(t.sep_id(), t.piece_to_id("[SEP]"));
}

TEST(ByteBpe, LongestSpecialTokenWins) {
  const ByteBpeTokenizer t = make({}, {"[SEC]", "[SEC-L1]"});
  EXPECT_EQ(pieces_of(t, "[SEC-L1]"), (Strings{"[SEC-L1]"}));
}

TEST(ByteBpe, InconsistentVocabulariesAreErrors) {
  ByteBpeTokenizer::Vocab vocab{{"a", 0}};
  EXPECT_THROW(ByteBpeTokenizer(vocab, {}, {}, {}), Error);  // bytes missing
  try {
    make({{"q", "zz"}});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'zz' is not in the vocabulary"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(make({}, {}, {}).decode(std::vector<std::int32_t>{9999}), Error);
  EXPECT_THROW(make({}).id_to_piece(-1), Error);
}

TEST(ByteBpe, ConcurrentEncodesAgree) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += "section " + std::to_string(i * 37) + " of the document; ";
  const std::vector<std::int32_t> expected =
      ByteBpeTokenizer::from_tokenizer_json(kFixtureDir + "gpt2_tiny_tokenizer.json")->encode(text);
  // A second tokenizer with a cold cache, filled by four threads at once.
  const auto t = ByteBpeTokenizer::from_tokenizer_json(kFixtureDir + "gpt2_tiny_tokenizer.json");
  std::vector<std::vector<std::int32_t>> results(4);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) threads.emplace_back([&, k] { results[k] = t->encode(text); });
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

}  // namespace
}  // namespace strata
