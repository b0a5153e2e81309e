#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <limits>
#include <string>

#include "decode/toy_models.h"
#include "strata/decode/generate.h"
#include "support/expect.h"

namespace strata::decode {
namespace {

using test_support::error_of;

TEST(GenerationOptions, DefaultsAreGreedyAndValid) {
  const GenerationOptions options;
  EXPECT_EQ(options.beam_size, 1);
  EXPECT_FALSE(options.do_sample);
  EXPECT_EQ(options.max_length, 64);
  EXPECT_EQ(options.length_penalty, 1.0);
  EXPECT_NO_THROW(options.check());
}

TEST(GenerationOptions, ErrorsNameTheField) {
  const auto error = [](const std::function<void(GenerationOptions&)>& edit) {
    GenerationOptions options;
    edit(options);
    return error_of([&] { options.check(); });
  };
  const auto names = [](const std::string& message, const std::string& field) {
    return message.find("generation." + field + ":") != std::string::npos;
  };
  EXPECT_PRED2(names, error([](auto& o) { o.max_length = 0; }), "max_length");
  EXPECT_PRED2(names, error([](auto& o) { o.min_length = 65; }), "min_length");
  EXPECT_PRED2(names, error([](auto& o) { o.min_length = -1; }), "min_length");
  EXPECT_PRED2(names, error([](auto& o) { o.beam_size = 0; }), "beam_size");
  EXPECT_PRED2(names, error([](auto& o) { o.do_sample = true; o.beam_size = 2; }), "beam_size");
  EXPECT_PRED2(names, error([](auto& o) { o.length_penalty = std::numeric_limits<double>::infinity(); }), "length_penalty");
  EXPECT_PRED2(names, error([](auto& o) { o.no_repeat_ngram_size = -1; }), "no_repeat_ngram_size");
  EXPECT_PRED2(names, error([](auto& o) { o.top_k = -1; }), "top_k");
  EXPECT_PRED2(names, error([](auto& o) { o.top_p = 0; }), "top_p");
  EXPECT_PRED2(names, error([](auto& o) { o.top_p = 1.5; }), "top_p");
  EXPECT_PRED2(names, error([](auto& o) { o.temperature = 0; }), "temperature");
  EXPECT_PRED2(names, error([](auto& o) { o.start_id = -1; }), "start_id");
  EXPECT_PRED2(names, error([](auto& o) { o.eos_id = -1; }), "eos_id");
  EXPECT_PRED2(names, error([](auto& o) { o.pad_id = -1; }), "pad_id");
  EXPECT_EQ(error([](auto& o) { o.top_p = 1.5; }), "generation.top_p: must be in (0, 1], got 1.5");
}

TEST(GenerationOptions, TokenIdsMustBeInTheModelsVocabulary) {
  for (const bool sample : {false, true}) {
    test_support::PrefixModel model({0}, test_support::random_weights(5, 1, 1.0));
    GenerationOptions options;
    options.do_sample = sample;
    options.eos_id = 5;
    EXPECT_EQ(error_of([&] { generate(model, options); }),
              "generation.eos_id: token 5 is outside the model's vocabulary of 5");
  }
  test_support::PrefixModel model({0}, test_support::random_weights(5, 1, 1.0));
  GenerationOptions options;
  options.beam_size = 2;
  options.pad_id = 9;
  EXPECT_NE(error_of([&] { generate(model, options); }).find("generation.pad_id"), std::string::npos);
}

}  // namespace
}  // namespace strata::decode
