#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/tokenizer_sidecar.h"
#include "text_test_util.h"
#include "support/expect.h"

namespace strata {
namespace {

using nlohmann::json;

const std::string kFixture = std::string(STRATA_FIXTURES_DIR) + "/text/gpt2_tiny_tokenizer.json";

json fixture() { return json::parse(read_file(kFixture)); }

using test_support::error_of;

TEST(ByteBpeIo, MergesAsPairsReadLikeMergesAsStrings) {
  test::TempDir dir("bpe-pairs");
  json root = fixture();
  json pairs = json::array();
  for (const json& merge : root["model"]["merges"]) {
    const std::string text = merge;
    pairs.push_back({text.substr(0, text.find(' ')), text.substr(text.find(' ') + 1)});
  }
  root["model"]["merges"] = pairs;
  write_file_atomic(dir / "tokenizer.json", root.dump());
  const auto expected = ByteBpeTokenizer::from_tokenizer_json(kFixture);
  const auto t = ByteBpeTokenizer::from_tokenizer_json(dir / "tokenizer.json");
  const std::string text = "The document's sections, 2024.";
  EXPECT_EQ(t->encode(text), expected->encode(text));
}

TEST(ByteBpeIo, AddPrefixSpaceAndAddedTokens) {
  test::TempDir dir("bpe-prefix");
  json root = fixture();
  root["pre_tokenizer"]["add_prefix_space"] = true;
  root["added_tokens"].push_back({{"id", 500}, {"content", "[SEC]"}, {"special", true}});
  write_file_atomic(dir / "tokenizer.json", root.dump());
  const auto t = ByteBpeTokenizer::from_tokenizer_json(dir / "tokenizer.json");
  const auto plain = ByteBpeTokenizer::from_tokenizer_json(kFixture);
  // Each stretch of text between added tokens gets its space, as HF's ByteLevel does.
  EXPECT_EQ(t->encode("the"), plain->encode(" the"));
  std::vector<std::int32_t> expected = plain->encode(" a");
  expected.push_back(500);
  for (const std::int32_t id : plain->encode(" b")) expected.push_back(id);
  EXPECT_EQ(t->encode("a[SEC]b"), expected);
  EXPECT_EQ(t->vocab_size(), 501);
  EXPECT_EQ(t->specials().structural, std::vector<std::string>{"[SEC]"});
}

TEST(ByteBpeIo, UnsupportedTokenizerJsonsAreClearErrors) {
  test::TempDir dir("bpe-unsupported");
  const auto message_for = [&](const std::function<void(json&)>& edit) {
    json root = fixture();
    edit(root);
    write_file_atomic(dir / "tokenizer.json", root.dump());
    return error_of([&] { ByteBpeTokenizer::from_tokenizer_json(dir / "tokenizer.json"); });
  };
  EXPECT_NE(
      message_for([](json& r) { r["model"]["type"] = "WordPiece"; }).find("\"WordPiece\" model"),
      std::string::npos);
  EXPECT_NE(message_for([](json& r) {
              r["pre_tokenizer"] = {{"type", "Whitespace"}};
            }).find("not GPT-2's byte-level"),
            std::string::npos);
  EXPECT_NE(message_for([](json& r) {
              r["normalizer"] = {{"type", "NFC"}};
            }).find("normalizer"),
            std::string::npos);
  EXPECT_NE(message_for([](json& r) {
              r["model"]["merges"].push_back("Ġ zz");
            }).find("'zz' is not in the vocabulary"),
            std::string::npos);
  EXPECT_NE(message_for([](json& r) { r["model"]["vocab"]["x"] = "seven"; }).find("non-integer"),
            std::string::npos);
  EXPECT_NE(message_for([](json& r) { r["model"]["merges"] = 3; }).find("tokenizer.json"),
            std::string::npos);
  // Found by the tokenizer_json fuzz target: an id past int32 was truncated, and one in range
  // but far past the pieces sized a table of that many entries.
  EXPECT_NE(message_for([](json& r) { r["model"]["vocab"]["x"] = 21111111111146; }).find("outside 0 .. 2^31 - 1"),
            std::string::npos);
  EXPECT_NE(message_for([](json& r) { r["model"]["vocab"]["x"] = 2000000000; }).find("the ids do not number the pieces"),
            std::string::npos);
}

TEST(ByteBpeIo, SaveWritesTokenizerJsonAndSidecar) {
  test::TempDir dir("bpe-save");
  SpecialTokens specials;
  specials.structural = {"[SEC]", "[L↑]"};
  const std::vector<std::string> texts{"the section of the document", "[SEC] the section"};
  const auto trained = ByteBpeTokenizer::train(texts, 300, specials);
  trained->save(dir.path());
  const auto sidecar = read_sidecar(dir.path());
  ASSERT_TRUE(sidecar.has_value());
  EXPECT_EQ(sidecar->kind, "byte-bpe");
  EXPECT_EQ(sidecar->specials.structural, specials.structural);
  const json saved = json::parse(read_file(dir / "tokenizer.json"));
  EXPECT_EQ(saved["model"]["type"], "BPE");
  EXPECT_EQ(saved["added_tokens"].size(), 8u);

  const auto loaded = ByteBpeTokenizer::from_tokenizer_json(dir / "tokenizer.json");
  EXPECT_EQ(loaded->vocab_size(), trained->vocab_size());
  EXPECT_EQ(loaded->merges(), trained->merges());
  EXPECT_EQ(loaded->specials().all(), specials.all());
  const std::string text = "[SEC] the document [L↑] sections";
  EXPECT_EQ(loaded->encode(text), trained->encode(text));
}

TEST(ByteBpeIo, MergesTxtLinesAreChecked) {
  test::TempDir dir("bpe-merges");
  write_file_atomic(dir / "vocab.json", json{{"a", 0}}.dump());
  write_file_atomic(dir / "merges.txt", "#version: 0.2\na b\nabc\n");
  const std::string message = error_of(
      [&] { ByteBpeTokenizer::from_vocab_merges(dir / "vocab.json", dir / "merges.txt"); });
  EXPECT_NE(message.find("merges.txt:3"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata
