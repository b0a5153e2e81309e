#include <gtest/gtest.h>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/sentencepiece_tokenizer.h"
#include "strata/text/tokenizer.h"
#include "strata/text/tokenizer_sidecar.h"
#include "text_test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
const fs::path kData = fs::path(STRATA_FIXTURES_DIR) / "text";


class LoadTokenizer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir("load");
    SentencePieceOptions options;
    options.vocab_size = 300;
    SentencePieceTokenizer::train(test::generated_sentences(2000), options, dir_->path() / "spm");
  }
  static void TearDownTestSuite() { delete dir_; }
  static test::TempDir* dir_;
};
test::TempDir* LoadTokenizer::dir_ = nullptr;

TEST_F(LoadTokenizer, ChoosesByContentNotName) {
  // A sentencepiece model under a misleading name still loads as sentencepiece.
  fs::copy_file(dir_->path() / "spm" / "tokenizer.model", dir_->path() / "model.json",
                fs::copy_options::overwrite_existing);
  EXPECT_EQ(load_tokenizer(dir_->path() / "model.json")->kind(), "sentencepiece");
  EXPECT_EQ(load_tokenizer(kData / "gpt2_tiny_tokenizer.json")->kind(), "byte-bpe");
}

TEST_F(LoadTokenizer, Directories) {
  const auto spm = load_tokenizer(dir_->path() / "spm");  // sidecar + tokenizer.model
  EXPECT_EQ(spm->kind(), "sentencepiece");
  EXPECT_EQ(spm->sep_id(), 4);
  EXPECT_EQ(load_tokenizer(dir_->path() / "spm" / kSidecarName)->kind(), "sentencepiece");
  const auto gpt2 = load_tokenizer(kData / "gpt2_tiny");  // vocab.json + merges.txt
  EXPECT_EQ(gpt2->kind(), "byte-bpe");
  EXPECT_EQ(gpt2->vocab_size(), 422);

  const fs::path hf = dir_->path() / "hf";
  fs::create_directories(hf);
  fs::copy_file(kData / "gpt2_tiny_tokenizer.json", hf / "tokenizer.json",
                fs::copy_options::overwrite_existing);
  EXPECT_EQ(load_tokenizer(hf)->kind(), "byte-bpe");
}

TEST_F(LoadTokenizer, TrainedByteBpeDirectoryKeepsItsSpecials) {
  SpecialTokens specials;
  specials.structural = {"[SEC]"};
  ByteBpeTokenizer::train(test::generated_sentences(200), 300, specials)
      ->save(dir_->path() / "bbpe");
  const auto t = load_tokenizer(dir_->path() / "bbpe");
  EXPECT_EQ(t->kind(), "byte-bpe");
  EXPECT_EQ(t->specials().all(), specials.all());
}

TEST_F(LoadTokenizer, HuggingFaceBertAndT5) {
  const fs::path t5 = dir_->path() / "t5";
  fs::create_directories(t5);
  fs::copy_file(dir_->path() / "spm" / "tokenizer.model", t5 / "spiece.model",
                fs::copy_options::overwrite_existing);
  EXPECT_EQ(load_tokenizer(t5)->kind(), "sentencepiece");
  // A Unigram tokenizer.json loads through the spiece.model beside it.
  write_file_atomic(t5 / "tokenizer.json", R"({"model": {"type": "Unigram", "vocab": []}})");
  EXPECT_EQ(load_tokenizer(t5 / "tokenizer.json")->kind(), "sentencepiece");
  EXPECT_EQ(load_tokenizer(t5)->kind(), "sentencepiece");

  const fs::path bert = dir_->path() / "bert";
  write_file_atomic(bert / "vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n");
  EXPECT_EQ(load_tokenizer(bert)->kind(), "wordpiece");
  const auto vocab_txt = load_tokenizer(bert / "vocab.txt");  // starts with '[' yet is no JSON
  EXPECT_EQ(vocab_txt->kind(), "wordpiece");
  EXPECT_EQ(vocab_txt->encode("[CLS] Hello [SEP]"), (std::vector<std::int32_t>{2, 5, 3}));

  write_file_atomic(bert / "word_level.json", R"({"model": {"type": "WordLevel", "vocab": {}}})");
  const std::string message = test::load_error(bert / "word_level.json");
  EXPECT_NE(message.find("\"WordLevel\" model"), std::string::npos) << message;
}

TEST_F(LoadTokenizer, WrongKindsSayWhatTheyLookLike) {
  const fs::path d = dir_->path() / "wrong";
  fs::create_directories(d);
  const std::vector<std::pair<std::string, std::string>> cases{
      {"data.jsonl", "{\"article\": \"a\", \"highlights\": \"b\"}\n{\"article\": \"c\"}\n"},
      {"vocab.json", read_file(kData / "gpt2_tiny" / "vocab.json")},
      {"config.json", "{\"hidden_size\": 768}"},
      {"merges.txt", "#version: 0.2\na b\n"},
      {"corpus.txt", "just some text\n"},
      {"blank.model", "  \n"},
      {"data.gz", std::string("\x1f\x8b\x08\x00", 4)},
      {"random.bin", std::string("\x00\x01\xfe\xff", 4)},
      {"fake.model", std::string("\x0a\x05hello", 7)}};
  const std::vector<std::string> expected{"JSON Lines", "GPT-2 vocab.json", "\"model\" field",
                                          "merges.txt", "plain text",       "empty",
                                          "gzip",       "unrecognised",     "sentencepiece"};
  for (std::size_t i = 0; i < cases.size(); ++i) {
    write_file_atomic(d / cases[i].first, cases[i].second);
    const std::string message = test::load_error(d / cases[i].first);
    EXPECT_NE(message.find(cases[i].first), std::string::npos) << message;
    EXPECT_NE(message.find(expected[i]), std::string::npos) << message;
  }
}

TEST_F(LoadTokenizer, MissingPathsAndEmptyDirectories) {
  EXPECT_NE(test::load_error(dir_->path() / "nope").find("no such file"), std::string::npos);
  fs::create_directories(dir_->path() / "empty");
  EXPECT_NE(test::load_error(dir_->path() / "empty").find("no tokenizer here"), std::string::npos);
}

}  // namespace
}  // namespace strata
