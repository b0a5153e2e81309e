#include <gtest/gtest.h>

#include <cmath>

#include "strata/core/error.h"
#include "strata/train/lr_schedule.h"

namespace strata::train {
namespace {

TEST(LrSchedule, LinearWarmupThenLinearDecay) {
  const LrSchedule s{.peak_lr = 1e-3, .min_lr = 0.0, .warmup_steps = 10, .total_steps = 110,
                     .decay = LrDecay::Linear};
  EXPECT_DOUBLE_EQ(learning_rate(s, 0), 0.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1), 1e-4);
  EXPECT_DOUBLE_EQ(learning_rate(s, 5), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(s, 10), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 35), 7.5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(s, 60), 5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(s, 110), 0.0);
  EXPECT_DOUBLE_EQ(learning_rate(s, 500), 0.0);
}

TEST(LrSchedule, CosineDecaysToMinLr) {
  const LrSchedule s{.peak_lr = 1e-3, .min_lr = 1e-4, .warmup_steps = 10, .total_steps = 110,
                     .decay = LrDecay::Cosine};
  EXPECT_DOUBLE_EQ(learning_rate(s, 5), 5e-4);  // warm-up starts from 0, not from min_lr
  EXPECT_DOUBLE_EQ(learning_rate(s, 10), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(s, 35), 1e-4 + 9e-4 * 0.5 * (1 + std::sqrt(0.5)));
  EXPECT_DOUBLE_EQ(learning_rate(s, 60), 5.5e-4);
  EXPECT_DOUBLE_EQ(learning_rate(s, 110), 1e-4);
  EXPECT_DOUBLE_EQ(learning_rate(s, 1000), 1e-4);
}

TEST(LrSchedule, ConstantAfterWarmupAndNoWarmup) {
  const LrSchedule constant{.peak_lr = 2e-4, .warmup_steps = 4, .decay = LrDecay::Constant};
  EXPECT_DOUBLE_EQ(learning_rate(constant, 2), 1e-4);
  EXPECT_DOUBLE_EQ(learning_rate(constant, 4), 2e-4);
  EXPECT_DOUBLE_EQ(learning_rate(constant, 1'000'000), 2e-4);
  const LrSchedule no_warmup{.peak_lr = 1e-3, .warmup_steps = 0, .total_steps = 100};
  EXPECT_DOUBLE_EQ(learning_rate(no_warmup, 0), 1e-3);
  EXPECT_DOUBLE_EQ(learning_rate(no_warmup, 50), 5e-4);
}

TEST(LrSchedule, ParsesNamesAndListsKnownOnes) {
  EXPECT_EQ(parse_lr_decay("linear"), LrDecay::Linear);
  EXPECT_EQ(parse_lr_decay("cosine"), LrDecay::Cosine);
  EXPECT_EQ(parse_lr_decay("constant"), LrDecay::Constant);
  EXPECT_EQ(lr_decay_name(LrDecay::Cosine), "cosine");
  try {
    parse_lr_decay("cosin");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown lr schedule 'cosin' (known: linear, cosine, constant)");
  }
}

TEST(LrSchedule, InconsistentScheduleNamesTheField) {
  auto message = [](const LrSchedule& s) {
    try {
      learning_rate(s, 0);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.warmup_steps = 10, .total_steps = 5}).find("total_steps"), std::string::npos);
  EXPECT_NE(message({.peak_lr = 1e-4, .min_lr = 1e-3}).find("min_lr"), std::string::npos);
  EXPECT_NE(message({.warmup_steps = -1}).find("warmup_steps"), std::string::npos);
}

}  // namespace
}  // namespace strata::train
