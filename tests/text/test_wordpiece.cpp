#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/text/tokenizer.h"
#include "strata/text/wordpiece.h"
#include "text_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Ids = std::vector<std::int32_t>;

// Ids are line numbers: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, [MASK] 4, hello 5, ...
const std::vector<std::string> kPieces{
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hello", "world", "don",  "'",
    "t",     "un",    "##aff", "##able", ",",     ".",     "!",     "中",   "文",
    "[SEC]", "a",     "##b",   "##c",   "##bc",  "cafe",  "stop",  "héllo", "Hello"};

std::string lines(const std::vector<std::string>& pieces) {
  std::string text;
  for (const std::string& piece : pieces) text += piece + "\n";
  return text;
}


// An HF tokenizer.json for kPieces with the given normalizer.
json bert_tokenizer_json(const json& normalizer) {
  json vocab = json::object();
  json added = json::array();
  for (std::size_t id = 0; id < kPieces.size(); ++id) {
    vocab[kPieces[id]] = id;
    if (id <= 4)
      added.push_back({{"id", id}, {"content", kPieces[id]}, {"normalized", false}, {"special", true}});
  }
  return {{"version", "1.0"},
          {"added_tokens", added},
          {"normalizer", normalizer},
          {"pre_tokenizer", json::object({{"type", "BertPreTokenizer"}})},
          {"model",
           {{"type", "WordPiece"},
            {"unk_token", "[UNK]"},
            {"continuing_subword_prefix", "##"},
            {"max_input_chars_per_word", 100},
            {"vocab", vocab}}}};
}

const json kBertNormalizer = {{"type", "BertNormalizer"},
                              {"clean_text", true},
                              {"handle_chinese_chars", true},
                              {"strip_accents", nullptr},
                              {"lowercase", true}};

class WordPiece : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir("wordpiece");
    write_file_atomic(dir_->path() / "uncased" / "vocab.txt", lines(kPieces));
    write_file_atomic(dir_->path() / "cased" / "vocab.txt", lines(kPieces));
    write_file_atomic(dir_->path() / "cased" / "tokenizer_config.json", "{\"do_lower_case\": false}");
    uncased_ = WordPieceTokenizer::from_vocab_txt(dir_->path() / "uncased" / "vocab.txt").release();
  }
  static void TearDownTestSuite() {
    delete uncased_;
    delete dir_;
  }
  static Ids encode(std::string_view text) { return uncased_->encode(text); }

  static test::TempDir* dir_;
  static WordPieceTokenizer* uncased_;
};
test::TempDir* WordPiece::dir_ = nullptr;
WordPieceTokenizer* WordPiece::uncased_ = nullptr;

TEST_F(WordPiece, LowercasesAndStripsAccents) {
  EXPECT_EQ(uncased_->kind(), "wordpiece");
  EXPECT_EQ(encode("Héllo WORLD"), (Ids{5, 6}));
  EXPECT_EQ(encode("He\u0301llo"), (Ids{5}));  // already decomposed
  EXPECT_EQ(encode("CAFÉ"), (Ids{23}));
}

TEST_F(WordPiece, CleansControlCharactersAndBadBytes) {
  EXPECT_EQ(encode("hel\x07lo\tworld"), (Ids{5, 6}));  // BEL dropped, tab is a space
  EXPECT_EQ(encode("hel\u200Blo"), (Ids{5}));           // zero-width space (Cf) dropped
  EXPECT_EQ(encode("hello\xFF"), (Ids{5}));             // U+FFFD dropped
}

TEST_F(WordPiece, CasedVocabularyKeepsCaseAndAccents) {
  const auto cased = WordPieceTokenizer::from_vocab_txt(dir_->path() / "cased" / "vocab.txt");
  EXPECT_FALSE(cased->options().lowercase);
  EXPECT_EQ(cased->encode("Hello"), (Ids{26}));
  EXPECT_EQ(cased->encode("héllo"), (Ids{25}));  // strip_accents follows lowercase
  EXPECT_EQ(cased->encode("HELLO hello"), (Ids{1, 5}));
}

TEST_F(WordPiece, SplitsOnWhitespaceAndEveryPunctuationCharacter) {
  EXPECT_EQ(encode("don't"), (Ids{7, 8, 9}));
  EXPECT_EQ(encode("hello,world!"), (Ids{5, 13, 6, 15}));
  EXPECT_EQ(encode("  hello ,\n world  "), (Ids{5, 13, 6}));
  EXPECT_EQ(encode("hello\u2014world"), (Ids{5, 1, 6}));  // em dash (Pd): a word of its own
  EXPECT_EQ(encode("hello$world"), (Ids{5, 1, 6}));       // ASCII symbols count as punctuation
}

TEST_F(WordPiece, ContinuationsMatchGreedilyLongestFirst) {
  EXPECT_EQ(encode("unaffable"), (Ids{10, 11, 12}));
  EXPECT_EQ(encode("abc"), (Ids{19, 22}));  // ##bc, not ##b ##c
  EXPECT_EQ(encode("ab"), (Ids{19, 20}));
  EXPECT_EQ(encode("abcb"), (Ids{19, 22, 20}));
}

TEST_F(WordPiece, AWordWithAnUnmatchablePartIsOneUnk) {
  EXPECT_EQ(encode("hellox world"), (Ids{1, 6}));  // not hello + [UNK]
  EXPECT_EQ(encode("xyz"), (Ids{1}));
}

TEST_F(WordPiece, WordsLongerThanMaxInputCharsAreUnk) {
  WordPieceOptions options;
  options.lowercase = false;
  options.max_input_chars_per_word = 5;
  const WordPieceTokenizer t({"[UNK]", "héllo", "hello", "un", "##aff", "##able", "##x"}, {},
                             options);
  EXPECT_EQ(t.encode("héllo"), (Ids{1}));  // 5 characters in 6 bytes
  EXPECT_EQ(t.encode("hellox"), (Ids{0}));
  EXPECT_EQ(t.encode("unaffable hello"), (Ids{0, 2}));
}

TEST_F(WordPiece, SplitsCjkIdeographsOnly) {
  EXPECT_EQ(encode("中文"), (Ids{16, 17}));
  EXPECT_EQ(encode("hello中文world"), (Ids{5, 16, 17, 6}));
  EXPECT_EQ(encode("字"), (Ids{1}));
  EXPECT_EQ(encode("あい"), (Ids{1}));  // hiragana is not split: one word
}

TEST_F(WordPiece, SpecialTokensAreMatchedWholeBeforeNormalisation) {
  EXPECT_EQ(encode("[CLS] Hello [SEP]"), (Ids{2, 5, 3}));
  EXPECT_EQ(encode("[SEC]hello[MASK]"), (Ids{18, 5, 4}));
  EXPECT_EQ(encode("[cls]"), (Ids{1, 1, 1}));  // [ cls ]: not the special token
  EXPECT_EQ(uncased_->bos_id(), 2);
  EXPECT_EQ(uncased_->eos_id(), 3);
  EXPECT_EQ(uncased_->sep_id(), 3);
  EXPECT_EQ(uncased_->pad_id(), 0);
  EXPECT_EQ(uncased_->mask_id(), 4);
  EXPECT_EQ(uncased_->specials().unk, "[UNK]");
  EXPECT_EQ(uncased_->specials().structural, std::vector<std::string>{"[SEC]"});
  const WordPieceTokenizer bare({"[UNK]", "a"}, {});
  EXPECT_EQ(bare.bos_id(), std::nullopt);
  EXPECT_EQ(bare.mask_id(), std::nullopt);
}

TEST_F(WordPiece, DecodeRoundTripsALowercaseSentence) {
  const std::string text = "hello, world. don't stop!";
  EXPECT_EQ(encode(text), (Ids{5, 13, 6, 14, 7, 8, 9, 24, 15}));
  EXPECT_EQ(uncased_->decode(encode(text)), text);
  EXPECT_EQ(uncased_->decode(Ids{10, 11, 12}), "unaffable");
  EXPECT_EQ(uncased_->decode(Ids{2, 5, 3}), "[CLS] hello [SEP]");
  EXPECT_THROW(uncased_->decode(Ids{99}), Error);
}

TEST_F(WordPiece, TokenizerJsonAndVocabTxtGiveTheSameIds) {
  const fs::path file = dir_->path() / "json" / "tokenizer.json";
  write_file_atomic(file, bert_tokenizer_json(kBertNormalizer).dump());
  const auto from_json = load_tokenizer(file);
  EXPECT_EQ(from_json->kind(), "wordpiece");
  EXPECT_EQ(from_json->vocab_size(), uncased_->vocab_size());
  EXPECT_EQ(from_json->specials().all(), uncased_->specials().all());
  for (const char* text : {"Héllo, WORLD!", "unaffable abcb", "[CLS] don't 中文 [SEP]", "hellox"})
    EXPECT_EQ(from_json->encode(text), encode(text)) << text;
}

TEST_F(WordPiece, SaveThenLoadTokenizerGivesTheSameIds) {
  uncased_->save(dir_->path() / "saved");
  const auto loaded = load_tokenizer(dir_->path() / "saved");
  EXPECT_EQ(loaded->kind(), "wordpiece");
  EXPECT_EQ(loaded->specials().all(), uncased_->specials().all());
  for (const char* text : {"Héllo, WORLD!", "unaffable abcb", "[CLS] don't 中文 [SEP]", "[SEC]"})
    EXPECT_EQ(loaded->encode(text), encode(text)) << text;

  WordPieceTokenizer::from_vocab_txt(dir_->path() / "cased" / "vocab.txt")
      ->save(dir_->path() / "saved-cased");
  EXPECT_EQ(load_tokenizer(dir_->path() / "saved-cased")->encode("Hello héllo"), (Ids{26, 25}));
}

TEST_F(WordPiece, UnsupportedNormalizerOrPreTokenizerIsAnError) {
  const fs::path file = dir_->path() / "nfkc" / "tokenizer.json";
  write_file_atomic(file, bert_tokenizer_json(json::object({{"type", "NFKC"}})).dump());
  std::string message = test::load_error(file);
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find("NFKC"), std::string::npos) << message;

  json root = bert_tokenizer_json(kBertNormalizer);
  root["pre_tokenizer"] = json::object({{"type", "Whitespace"}});
  write_file_atomic(file, root.dump());
  message = test::load_error(file);
  EXPECT_NE(message.find("Whitespace"), std::string::npos) << message;
}

TEST_F(WordPiece, UnigramTokenizerJsonWithoutSpieceModelIsAnError) {
  const fs::path file = dir_->path() / "t5" / "tokenizer.json";
  write_file_atomic(file, R"({"model": {"type": "Unigram", "unk_id": 0, "vocab": [["<unk>", 0.0]]}})");
  const std::string message = test::load_error(file);
  EXPECT_NE(message.find(file.string()), std::string::npos) << message;
  EXPECT_NE(message.find("Unigram"), std::string::npos) << message;
  EXPECT_NE(message.find("spiece.model"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata
