#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/core/error.h"
#include "strata/core/strings.h"
#include "strata/train/freeze.h"

namespace strata::train {
namespace {

// embed_tokens.weight [10, 4] = 40; encoder.{0,1}.{weight [4, 4], bias [4]} = 2 × 20
struct Net : torch::nn::Module {
  Net()
      : embed(register_module("embed_tokens", torch::nn::Embedding(10, 4))),
        encoder(register_module("encoder", torch::nn::ModuleList(torch::nn::Linear(4, 4),
                                                                 torch::nn::Linear(4, 4)))) {}
  torch::nn::Embedding embed;
  torch::nn::ModuleList encoder;
};

TEST(GlobMatch, StarAndQuestionMark) {
  EXPECT_TRUE(glob_match("encoder.layers.0.*", "encoder.layers.0.fc1.weight"));
  EXPECT_FALSE(glob_match("encoder.layers.0.*", "encoder.layers.10.fc1.weight"));
  EXPECT_TRUE(glob_match("*embed*", "decoder.embed_tokens.weight"));
  EXPECT_TRUE(glob_match("*embed*", "embed"));
  EXPECT_FALSE(glob_match("*embed*", "emb"));
  EXPECT_TRUE(glob_match("layer.?.bias", "layer.7.bias"));
  EXPECT_FALSE(glob_match("layer.?.bias", "layer.17.bias"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("a*b*c", "a-b-x-b-c"));
  EXPECT_FALSE(glob_match("a*b*c", "a-b-x-b-d"));
  EXPECT_TRUE(glob_match("exact.name", "exact.name"));
  EXPECT_FALSE(glob_match("exact.name", "exact.name.weight"));
}

TEST(Freeze, FreezesMatchesAndCounts) {
  Net net;
  EXPECT_EQ(describe_parameters(count_parameters(net)),
            "trainable params: 80 || all params: 80 || trainable%: 100.0000");
  const std::vector<std::string> frozen = freeze(net, {"encoder.0.*", "*embed*"});
  EXPECT_EQ(frozen, (std::vector<std::string>{"embed_tokens.weight", "encoder.0.weight",
                                              "encoder.0.bias"}));
  EXPECT_FALSE(net.embed->weight.requires_grad());
  EXPECT_TRUE(net.encoder->named_parameters()["1.weight"].requires_grad());
  const ParameterCount count = count_parameters(net);
  EXPECT_EQ(count.trainable, 20);
  EXPECT_EQ(count.total, 80);
}

TEST(Freeze, PatternMatchingNothingIsAnError) {
  Net net;
  try {
    freeze(net, {"encoder.*", "encodr.0.*"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'encodr.0.*'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(net.encoder->named_parameters()["0.weight"].requires_grad());  // nothing frozen
}

TEST(TrainOnly, FreezesEverythingElse) {
  Net net;
  const std::vector<std::string> frozen = train_only(net, {"encoder.1.*"});
  EXPECT_EQ(frozen, (std::vector<std::string>{"embed_tokens.weight", "encoder.0.weight", "encoder.0.bias"}));
  const auto parameters = net.named_parameters();
  EXPECT_TRUE(parameters["encoder.1.weight"].requires_grad());
  EXPECT_TRUE(parameters["encoder.1.bias"].requires_grad());
  EXPECT_FALSE(parameters["encoder.0.bias"].requires_grad());
  EXPECT_EQ(count_parameters(net).trainable, 20);
}

TEST(TrainOnly, SeveralPatternsKeepTheirUnion) {
  Net net;
  EXPECT_EQ(train_only(net, {"*.weight", "encoder.1.bias"}), (std::vector<std::string>{"encoder.0.bias"}));
  EXPECT_EQ(count_parameters(net).trainable, 76);
}

TEST(TrainOnly, NoPatternsFreezeNothing) {
  Net net;
  EXPECT_TRUE(train_only(net, {}).empty());
  EXPECT_EQ(count_parameters(net).trainable, 80);
}

TEST(TrainOnly, PatternMatchingNothingIsAnError) {
  Net net;
  try {
    train_only(net, {"encoder.1.*", "*.pal.*"});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("train_only pattern '*.pal.*'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(count_parameters(net).trainable, 80);  // nothing frozen
}

TEST(Freeze, TiedWeightsCountOnce) {
  Net net;
  net.register_parameter("lm_head_weight", net.embed->weight);
  EXPECT_EQ(count_parameters(net).total, 80);
}

TEST(Freeze, DescribeAsPeft) {
  EXPECT_EQ(describe_parameters({1234, 5678}),
            "trainable params: 1,234 || all params: 5,678 || trainable%: 21.7330");
  EXPECT_EQ(describe_parameters({294912, 124734720}),
            "trainable params: 294,912 || all params: 124,734,720 || trainable%: 0.2364");
  EXPECT_EQ(describe_parameters({0, 0}), "trainable params: 0 || all params: 0 || trainable%: 0.0000");
}

}  // namespace
}  // namespace strata::train
