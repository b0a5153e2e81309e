#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/train/extractive_task.h"
#include "support/expect.h"
#include "support/word_tokenizer.h"

namespace strata::train {
namespace {

using test_support::error_of;
using test_support::SepWordTokenizer;

models::ModelConfig tiny_config(std::int64_t marker_id, bool intra_sentence_head = false) {
  models::ModelConfig c;
  c.architecture = "encoder";
  c.head = models::EncoderHead::Marker;
  c.num_labels = 2;
  c.vocab_size = 40;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 1;
  c.max_positions = 64;
  c.dropout = 0.0;
  c.pad_id = 0;
  c.marker_id = marker_id;
  // Seed 003's intra-sentence pattern on one head: the model then reads the layout.
  if (intra_sentence_head)
    c.encoder_attention = {attn::layer_spec_from_json({{"heads", {{{"mask", "same_sentence"}}, {{"mask", "all"}}}}})};
  return c;
}

// Documents of 3 or 4 one-sentence paragraphs of words w0..w9; one sentence also holds "key"
// and is the reference summary, so the oracle labels exactly that sentence.
std::vector<ExtractiveExample> keyword_examples(const Tokenizer& tokenizer, int count, std::uint32_t seed) {
  std::uint32_t state = seed;
  const auto next = [&](std::uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return (state >> 8) % n;
  };
  std::vector<ExtractiveExample> examples;
  for (int d = 0; d < count; ++d) {
    const std::uint32_t sentences = 3 + next(2), keyed = next(sentences);
    DocumentBuilder b;
    std::string summary;
    for (std::uint32_t s = 0; s < sentences; ++s) {
      const std::uint32_t length = 3 + next(3), key_at = next(length);
      std::string sentence;
      for (std::uint32_t w = 0; w < length; ++w) {
        if (s == keyed && w == key_at) sentence += "key ";
        sentence += std::string("w") + std::to_string(next(10)) + " ";
      }
      b.add_paragraph(sentence);
      if (s == keyed) summary = sentence;
    }
    Document document = b.finish();
    document.id = std::string("doc") + std::to_string(d);
    document.summary = summary;
    examples.push_back(*make_extractive_example(document, tokenizer, {}));
  }
  return examples;
}

ExtractiveTask make_task(const SepWordTokenizer& tokenizer, bool intra_sentence_head,
                         std::vector<ExtractiveExample> train, std::vector<ExtractiveExample> valid = {}) {
  torch::manual_seed(5);
  return ExtractiveTask(models::EncoderModel(tiny_config(*tokenizer.sep_id(), intra_sentence_head)), tokenizer,
                        std::move(train), std::move(valid), {});
}

class ExtractiveTaskLoss : public testing::TestWithParam<bool> {};

TEST_P(ExtractiveTaskLoss, IsTheCrossEntropyOfEachSentencesMarkerLogits) {
  const SepWordTokenizer tokenizer;
  const std::vector<ExtractiveExample> examples = keyword_examples(tokenizer, 3, 1);
  const bool structured = GetParam();
  ExtractiveTask task = make_task(tokenizer, structured, examples);
  auto& model = dynamic_cast<models::EncoderModelImpl&>(task.model());
  ASSERT_EQ(model.uses_layout(), structured);

  for (const double smoothing : {0.0, 0.1}) {
    const std::vector<std::size_t> rows{2, 0};
    const BatchLoss loss = task.loss(Split::Train, rows, smoothing);
    // By hand: each example alone, unpadded; -log p(label), smoothed toward the uniform.
    double expected = 0;
    std::int64_t sentences = 0, tokens = 0;
    for (const std::size_t r : rows) {
      const ExtractiveExample& e = examples[r];
      const at::Tensor ids = torch::tensor(std::vector<std::int64_t>(e.ids.begin(), e.ids.end())).view({1, -1});
      const attn::TokenLayout layout = attn::batch_layouts({&e.layout});
      const at::Tensor log_p =
          torch::log_softmax(model.forward(ids, torch::ones_like(ids, torch::kBool), &layout).logits, -1);
      ASSERT_EQ(log_p.size(0), static_cast<std::int64_t>(e.sentences.size()));
      for (std::size_t s = 0; s < e.sentences.size(); ++s) {
        const at::Tensor row = log_p[static_cast<std::int64_t>(s)];
        expected -= (1 - smoothing) * row[e.labels[s]].item<double>() + smoothing * row.mean().item<double>();
      }
      sentences += static_cast<std::int64_t>(e.sentences.size());
      tokens += static_cast<std::int64_t>(e.ids.size());
    }
    EXPECT_NEAR(loss.loss_sum.item<double>(), expected, 1e-4) << "smoothing " << smoothing;
    EXPECT_EQ(loss.labels, sentences);
    EXPECT_EQ(loss.tokens, tokens);
  }
  EXPECT_EQ(task.costs(Split::Train), (std::vector<std::size_t>{examples[0].ids.size(), examples[1].ids.size(),
                                                                 examples[2].ids.size()}));
  EXPECT_TRUE(task.costs(Split::Valid).empty());
}

INSTANTIATE_TEST_SUITE_P(PlainAndIntraSentence, ExtractiveTaskLoss, testing::Bool());

// With the intra-sentence pattern on one head, the [SEP] of a sentence sees whether "key" is
// in it: 150 steps on a toy set learn that, and the selected sentence is the reference.
TEST(ExtractiveTask, TrainingFindsTheKeywordSentence) {
  const SepWordTokenizer tokenizer;
  ExtractiveTask task = make_task(tokenizer, /*intra_sentence_head=*/true, keyword_examples(tokenizer, 32, 2),
                                  keyword_examples(tokenizer, 16, 3));
  torch::optim::Adam optimizer(task.model().parameters(), torch::optim::AdamOptions(3e-3));
  const auto rows = [](std::size_t n) {
    std::vector<std::size_t> all(n);
    for (std::size_t i = 0; i < n; ++i) all[i] = i;
    return all;
  };
  const auto mean_loss = [&] {
    torch::NoGradGuard no_grad;
    const BatchLoss loss = task.loss(Split::Valid, rows(16), 0.0);
    return loss.loss_sum.item<double>() / static_cast<double>(loss.labels);
  };
  task.model().eval();
  const double before = mean_loss();
  const double rouge_before = task.extra_metrics(16).at("rouge1");
  task.model().train();
  for (int step = 0; step < 150; ++step) {
    optimizer.zero_grad();
    const BatchLoss loss = task.loss(Split::Train, rows(32), 0.0);
    (loss.loss_sum / static_cast<double>(loss.labels)).backward();
    optimizer.step();
  }
  task.model().eval();
  const double after = mean_loss();
  const std::map<std::string, double> metrics = task.extra_metrics(16);
  EXPECT_LT(after, 0.5 * before) << before << " -> " << after;
  EXPECT_GT(metrics.at("rouge1"), rouge_before);
  EXPECT_GT(metrics.at("rouge1"), 0.9);
  for (const char* key : {"rouge2", "rougeL"}) {
    EXPECT_GE(metrics.at(key), 0.0);
    EXPECT_LE(metrics.at(key), 1.0);
  }
}

TEST(ExtractiveTask, ScoresAreProbabilitiesPerSentenceWhateverTheBatch) {
  const SepWordTokenizer tokenizer;
  const std::vector<ExtractiveExample> examples = keyword_examples(tokenizer, 5, 4);
  torch::manual_seed(5);
  models::EncoderModel model(tiny_config(*tokenizer.sep_id()));
  model->eval();
  const std::vector<std::vector<float>> batched = sentence_scores(model, examples, 3);
  const std::vector<std::vector<float>> single = sentence_scores(model, examples, 1);
  ASSERT_EQ(batched.size(), examples.size());
  for (std::size_t i = 0; i < examples.size(); ++i) {
    ASSERT_EQ(batched[i].size(), examples[i].sentences.size());
    for (std::size_t s = 0; s < batched[i].size(); ++s) {
      EXPECT_GT(batched[i][s], 0.0f);
      EXPECT_LT(batched[i][s], 1.0f);
      EXPECT_NEAR(batched[i][s], single[i][s], 1e-5);
    }
  }
  ExtractiveSelection selection;
  selection.top_k = 2;
  const std::vector<std::string> summaries = extractive_summaries(examples, batched, selection);
  const std::vector<std::size_t> chosen = select_sentences(batched[0], examples[0].sentences, 2, false);
  EXPECT_EQ(summaries[0], join_sentences(examples[0].sentences, chosen));
  EXPECT_EQ(std::count(summaries[0].begin(), summaries[0].end(), '\n'), 1);
}

TEST(ExtractiveTask, AModelThatCannotReadSentencesIsRefused) {
  const SepWordTokenizer tokenizer;
  const std::int32_t sep = *tokenizer.sep_id();
  models::ModelConfig sequence = tiny_config(sep);
  sequence.head = models::EncoderHead::Sequence;
  EXPECT_NE(error_of([&] { ExtractiveTask(models::EncoderModel(sequence), tokenizer, {}, {}, {}); }).find("model.head"),
            std::string::npos);
  models::ModelConfig three = tiny_config(sep);
  three.num_labels = 3;
  EXPECT_NE(error_of([&] { ExtractiveTask(models::EncoderModel(three), tokenizer, {}, {}, {}); }).find("model.num_labels"),
            std::string::npos);
  const std::string wrong_marker =
      error_of([&] { ExtractiveTask(models::EncoderModel(tiny_config(sep + 1)), tokenizer, {}, {}, {}); });
  EXPECT_NE(wrong_marker.find("model.marker_id"), std::string::npos) << wrong_marker;
  EXPECT_NE(error_of([&] {
              ExtractiveTask(models::EncoderModel(tiny_config(sep)), test_support::WordTokenizer(), {}, {}, {});
            }).find("sep token"),
            std::string::npos);
}

}  // namespace
}  // namespace strata::train
