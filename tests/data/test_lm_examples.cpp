#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/data/lm_examples.h"
#include "strata/doc/dataset.h"
#include "strata/doc/parse.h"
#include "strata/text/byte_bpe.h"
#include "support/expect.h"
#include "text/text_test_util.h"

namespace strata {
namespace {

using test_support::error_of;

std::vector<std::int32_t> concatenated(const std::vector<std::vector<std::int32_t>>& chunks) {
  std::vector<std::int32_t> all;
  for (const auto& chunk : chunks) all.insert(all.end(), chunk.begin(), chunk.end());
  return all;
}

std::vector<std::int32_t> iota_stream(std::size_t n) {
  std::vector<std::int32_t> stream(n);
  std::iota(stream.begin(), stream.end(), 0);
  return stream;
}

TEST(MakeLmChunks, CutsBlocksAndKeepsALastBlockOfAtLeastTwo) {
  const std::vector<std::int32_t> ten = iota_stream(10);
  const auto chunks = make_lm_chunks(ten, 4);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].size(), 4u);
  EXPECT_EQ(chunks[1].size(), 4u);
  EXPECT_EQ(chunks[2], (std::vector<std::int32_t>{8, 9}));
  EXPECT_EQ(concatenated(chunks), ten);

  const std::vector<std::int32_t> nine = iota_stream(9);
  EXPECT_EQ(make_lm_chunks(nine, 4).size(), 2u);  // a last block of one token is dropped
  EXPECT_EQ(make_lm_chunks(iota_stream(8), 4).size(), 2u);
  EXPECT_TRUE(make_lm_chunks(iota_stream(1), 4).empty());
  EXPECT_THROW(make_lm_chunks(ten, 1), Error);
}

class LmExamples : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tokenizer_ = ByteBpeTokenizer::train(test::generated_sentences(400), 400, SpecialTokens{}).release();
  }
  static void TearDownTestSuite() { delete tokenizer_; }

  static const ByteBpeTokenizer* tokenizer_;
  test::TempDir dir_{"lm-chunks"};
};
const ByteBpeTokenizer* LmExamples::tokenizer_ = nullptr;

TEST_F(LmExamples, StreamIsEachDocumentThenEosAndEmptyDocumentsAddNothing) {
  const Tokenizer& tokenizer = *tokenizer_;
  std::vector<Document> documents(3);
  documents[0] = build_document("", {{0, "one two."}});
  documents[2] = build_document("", {{1, "Head"}, {0, "three."}});
  const std::int32_t eos = *tokenizer.eos_id();
  std::vector<std::int32_t> expected = tokenizer.encode("one two.");
  expected.push_back(eos);
  for (std::int32_t id : tokenizer.encode("three.")) expected.push_back(id);
  expected.push_back(eos);
  EXPECT_EQ(lm_token_stream(documents, tokenizer), expected);
}

TEST_F(LmExamples, ConcatenatesDatasetsAndDocumentFilesInOrder) {
  const std::vector<std::string> sentences = test::generated_sentences(2000);
  {
    std::ofstream out(dir_ / "data.jsonl");
    for (std::size_t i = 0; i < 1500; ++i)  // more than one read batch
      out << nlohmann::json{{"document", sentences[i] + " " + sentences[i + 1]},
                            {"summary", "unused"}}.dump()
          << "\n";
    out << nlohmann::json{{"document", ""}, {"summary", "x"}}.dump() << "\n";
  }
  std::ofstream(dir_ / "guide.md") << "# Guide\n\n" << sentences[1900] << "\n\n## Part\n\n"
                                   << sentences[1901] << "\n";
  std::ofstream(dir_ / "notes.txt") << sentences[1902] << "\n";
  const std::vector<std::filesystem::path> inputs{dir_ / "guide.md", dir_ / "data.jsonl",
                                                  dir_ / "notes.txt"};

  std::vector<Document> documents{read_document(dir_ / "guide.md")};
  DatasetReader reader(dir_ / "data.jsonl");
  for (Document d; reader.next(d);) documents.push_back(d);
  documents.push_back(read_document(dir_ / "notes.txt"));
  std::vector<std::int32_t> expected;
  for (const Document& d : documents) {
    if (d.empty()) continue;
    for (std::int32_t id : tokenizer_->encode(d.text)) expected.push_back(id);
    expected.push_back(*tokenizer_->eos_id());
  }

  const auto chunks = load_lm_chunks(inputs, *tokenizer_, 128, false);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) ASSERT_EQ(chunks[i].size(), 128u);
  const std::size_t last = expected.size() % 128;
  ASSERT_NE(last, 1u) << "pick another block size: the last block would be dropped";
  EXPECT_EQ(chunks.back().size(), last == 0 ? 128u : last);
  EXPECT_EQ(concatenated(chunks), expected);
}

TEST_F(LmExamples, DocumentBlockingKeepsEachDocumentToItsOwnBlocks) {
  const std::vector<std::string> sentences = test::generated_sentences(60);
  std::string long_text;
  for (std::size_t i = 10; i < 60; ++i) long_text += sentences[i] + " ";
  {
    std::ofstream out(dir_ / "docs.jsonl");
    for (const std::string& text : {sentences[0], long_text, sentences[1]})
      out << nlohmann::json{{"id", "d"}, {"text", text}}.dump() << "\n";
  }
  const std::int32_t eos = *tokenizer_->eos_id();
  const auto encoded = [&](const std::string& text) {
    std::vector<std::int32_t> ids = tokenizer_->encode(text);
    ids.push_back(eos);
    return ids;
  };
  const std::vector<std::int32_t> first = encoded(sentences[0]), middle = encoded(long_text),
                                   last = encoded(sentences[1]);
  const std::size_t block = 64;
  ASSERT_LT(first.size(), block);
  ASSERT_GT(middle.size(), 2 * block);
  ASSERT_NE(middle.size() % block, 1u) << "pick another block size: the long document's last block would be dropped";

  const auto chunks = load_lm_chunks({dir_ / "docs.jsonl"}, *tokenizer_, block, false, LmBlocking::kDocument);
  const std::size_t middle_blocks = (middle.size() + block - 1) / block;
  ASSERT_EQ(chunks.size(), middle_blocks + 2);
  EXPECT_EQ(chunks.front(), first);  // alone, not followed by the next document's tokens
  EXPECT_EQ(chunks.back(), last);
  std::vector<std::vector<std::int32_t>> middle_chunks(chunks.begin() + 1, chunks.end() - 1);
  EXPECT_EQ(concatenated(middle_chunks), middle);
  EXPECT_EQ(concatenated(chunks), concatenated({first, middle, last}));
  // The stream cuts the same tokens every `block` tokens instead.
  EXPECT_EQ(load_lm_chunks({dir_ / "docs.jsonl"}, *tokenizer_, block, false).front().size(), block);
  EXPECT_EQ(parse_lm_blocking("document"), LmBlocking::kDocument);
  EXPECT_EQ(parse_lm_blocking("completion"), LmBlocking::kCompletion);
  EXPECT_NE(error_of([] { parse_lm_blocking("lines"); }).find("stream, document or completion"), std::string::npos);
}

TEST(CompletionStart, AfterTheFirstColonOfTheLastLine) {
  EXPECT_EQ(completion_start("S: a: b\nA: kill - send\n"), std::string_view("S: a: b\nA:").size());
  EXPECT_EQ(completion_start("Q: which?"), 2u);
  EXPECT_EQ(completion_start("S: x\nno field here\n\n"), std::string_view::npos);
  EXPECT_EQ(completion_start(""), std::string_view::npos);
}

TEST_F(LmExamples, CompletionBlockingMarksThePromptAndKeepsTheEnd) {
  const std::string prompt = "S: " + test::generated_sentences(3)[1] + "\nA:", answer = " kill - send a signal\n";
  {
    std::ofstream out(dir_ / "docs.jsonl");
    out << nlohmann::json{{"id", "a"}, {"text", prompt + answer}}.dump() << "\n";
  }
  const std::size_t prompt_tokens = tokenizer_->encode(prompt).size();
  std::vector<std::int32_t> all = tokenizer_->encode(prompt + answer);
  all.push_back(*tokenizer_->eos_id());
  ASSERT_EQ(tokenizer_->encode(answer).size() + prompt_tokens + 1, all.size()) << "the cut must fall between tokens";

  const auto blocks = load_lm_chunks({dir_ / "docs.jsonl"}, *tokenizer_, 256, false, LmBlocking::kCompletion);
  ASSERT_EQ(blocks.size(), 1u);
  ASSERT_EQ(blocks[0].size(), all.size());
  for (std::size_t t = 0; t < all.size(); ++t) {
    EXPECT_EQ(is_prompt_token(blocks[0][t]), t < prompt_tokens) << t;
    EXPECT_EQ(token_id(blocks[0][t]), all[t]) << t;
  }
  // A block shorter than the document keeps its end: the completion and the prompt's last tokens.
  const auto cut = load_lm_chunks({dir_ / "docs.jsonl"}, *tokenizer_, 8, false, LmBlocking::kCompletion);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].size(), 8u);
  EXPECT_EQ(token_id(cut[0].back()), all.back());

  std::ofstream(dir_ / "bad.jsonl") << nlohmann::json{{"id", "b"}, {"text", "no field on this line"}}.dump() << "\n";
  EXPECT_NE(error_of([&] { load_lm_chunks({dir_ / "bad.jsonl"}, *tokenizer_, 64, false, LmBlocking::kCompletion); })
                .find("no 'Field:'"),
            std::string::npos);
}

TEST_F(LmExamples, ErrorsNameTheFile) {
  const std::filesystem::path missing = dir_ / "missing.md";
  EXPECT_NE(error_of([&] { load_lm_chunks({missing}, *tokenizer_, 16, false); })
                .find(missing.string()),
            std::string::npos);
  const std::filesystem::path bad = dir_ / "bad.jsonl";
  std::ofstream(bad) << "{\"document\": \"a.\", \"summary\": \"b\"}\nnot json\n";
  EXPECT_NE(error_of([&] { load_lm_chunks({bad}, *tokenizer_, 16, false); })
                .find(bad.string() + ":2"),
            std::string::npos);
  const std::filesystem::path empty = dir_ / "empty.txt";
  std::ofstream(empty).close();
  EXPECT_NE(error_of([&] { load_lm_chunks({empty}, *tokenizer_, 16, false); })
                .find(empty.string() + ": too little text"),
            std::string::npos);
  EXPECT_THROW(load_lm_chunks({}, *tokenizer_, 16, false), Error);
}

}  // namespace
}  // namespace strata
