// The waiting room before the decoding workers: who runs, who waits, who is turned away.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "strata/core/error.h"
#include "strata/serve/admission.h"

namespace strata::serve {
namespace {

using Clock = std::chrono::steady_clock;
using Outcome = Admission::Outcome;

Clock::time_point in(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// Polls until `condition` holds (another thread's progress), failing after ten seconds.
template <typename F>
void eventually(F condition) {
  const auto give_up = in(10);
  while (!condition() && Clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(condition());
}

TEST(Admission, WorkersRunQueueWaitsTheRestIsTurnedAway) {
  Admission admission(2, 1);
  EXPECT_EQ(admission.enter(in(10)), Outcome::Admitted);
  EXPECT_EQ(admission.enter(in(10)), Outcome::Admitted);
  EXPECT_EQ(admission.running(), 2u);
  auto waiter = std::async(std::launch::async, [&] { return admission.enter(in(10)); });
  eventually([&] { return admission.waiting() == 1; });
  EXPECT_EQ(admission.enter(in(10)), Outcome::QueueFull);
  admission.leave();
  EXPECT_EQ(waiter.get(), Outcome::Admitted);
  EXPECT_EQ(admission.running(), 2u);
  EXPECT_EQ(admission.waiting(), 0u);
}

TEST(Admission, AWaiterGivesUpAtItsDeadline) {
  Admission admission(1, 4);
  EXPECT_EQ(admission.enter(in(10)), Outcome::Admitted);
  EXPECT_EQ(admission.enter(in(0.01)), Outcome::TimedOut);
  EXPECT_EQ(admission.waiting(), 0u);
}

TEST(Admission, ShutdownSendsWaitersAwayAndRefusesNewcomers) {
  Admission admission(1, 4);
  EXPECT_EQ(admission.enter(in(10)), Outcome::Admitted);
  auto waiter = std::async(std::launch::async, [&] { return admission.enter(in(10)); });
  eventually([&] { return admission.waiting() == 1; });
  admission.shut_down();
  EXPECT_EQ(waiter.get(), Outcome::ShuttingDown);
  EXPECT_EQ(admission.enter(in(10)), Outcome::ShuttingDown);
  EXPECT_TRUE(admission.shutting_down());
  EXPECT_EQ(admission.running(), 1u);  // the running request is left to finish
  admission.leave();
  EXPECT_EQ(admission.running(), 0u);
}

TEST(Admission, ANoQueueServerTurnsAwayWhenBusyAndNeedsAWorker) {
  Admission admission(1, 0);
  EXPECT_EQ(admission.enter(in(10)), Outcome::Admitted);
  EXPECT_EQ(admission.enter(in(10)), Outcome::QueueFull);
  EXPECT_THROW(Admission(0, 1), Error);
}

}  // namespace
}  // namespace strata::serve
