// interleave()'s order of steps within a round, and the paired ratio over both orders.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "strata/bench/timing.h"

namespace strata::bench {
namespace {

// Rounds of three steps: every step rotates, or the last closes every round.
TEST(Interleave, StepsRotateAndAFixedLastStepClosesEveryRound) {
  for (std::size_t fixed_last : {0u, 1u}) {
    std::vector<int> order;
    std::vector<std::function<void(int)>> steps;
    for (int k = 0; k < 3; ++k) steps.push_back([&order, k](int) { order.push_back(k); });
    // A huge busy-core allowance keeps every round: the order is what is checked.
    interleave(steps, 3, 1e9, nullptr, fixed_last);
    const std::vector<int> want = fixed_last == 0 ? std::vector<int>{0, 1, 2, 1, 2, 0, 2, 0, 1}
                                                  : std::vector<int>{0, 1, 2, 1, 0, 2, 0, 1, 2};
    EXPECT_EQ(order, want) << "fixed_last " << fixed_last;
  }
}

// A step that costs 1.6x its reference in the rounds it opens (the even ones) and 1.0x in the
// others: the plain median takes the even rounds' side (3 of 5); over both orders each kind of
// round counts once. When the reference pays the same in the rounds it opens, the two cancel.
TEST(Interleave, PairedRatioOverBothOrdersCancelsWhatOpeningARoundCosts) {
  Interleaved t;
  t.ms = {{16, 10, 16, 10, 16}, {10, 10, 10, 10, 10}};
  t.others.assign(5, 0.0);
  t.clean.assign(5, true);
  EXPECT_DOUBLE_EQ(t.paired_ratio(0, 1), 1.6);
  EXPECT_NEAR(t.paired_ratio_both_orders(0, 1), std::sqrt(1.6), 1e-12);
  t.ms[1] = {10, 16, 10, 16, 10};
  EXPECT_NEAR(t.paired_ratio_both_orders(0, 1), 1.0, 1e-12);
}

}  // namespace
}  // namespace strata::bench
