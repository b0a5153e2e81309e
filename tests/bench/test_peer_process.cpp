// The peer protocol of strata/bench/peer_program.h against stand-in runners (the real one
// needs a Debian 13 root): lockstep rounds, their CPU time, the summary, a runner without its
// root, and a peer that dies between rounds.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "strata/bench/peer_program.h"
#include "support/cli.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using bench::PeerProcess;

class PeerProcessTest : public test_support::ScratchTest {
 protected:
  PeerProcessTest() : ScratchTest("strata_peer_process") {}
  std::string runner(const std::string& name, const std::string& body) {
    const fs::path path = write(name, "#!/bin/sh\n" + body);
    fs::permissions(path, fs::perms::owner_all);
    return path.string();
  }
};

// Answers "round N" with ms = 10 N + 5 and cpu_ms = 7 after a line of noise; "end" with the
// number of rounds it ran. It checks that it was asked for lockstep and reports its threads.
constexpr const char* kLockstep = R"sh([ "$1" = fake.py ] || exit 9
for a; do last=$a; done
[ "$last" = --lockstep ] || exit 8
echo "building the model"
echo "{\"torch\": \"stand-in\", \"threads\": \"$OMP_NUM_THREADS\", \"second\": \"$3\"}"
rounds=0
while read word n; do
  case "$word" in
    round) rounds=$((rounds + 1)); echo "{\"round\": $n, \"ms\": $((n * 10 + 5)), \"cpu_ms\": 7}" ;;
    end) echo "{\"rounds\": $rounds}"; exit 0 ;;
  esac
done
exit 4
)sh";

TEST_F(PeerProcessTest, RoundsRunOneByOneOnRequestAndTheSummaryComesLast) {
  auto peer = PeerProcess::start(runner("lockstep.sh", kLockstep), "fake.py", {"--batch", "it's 2"}, 3);
  ASSERT_NE(peer, nullptr);
  EXPECT_EQ(peer->ready()["torch"], "stand-in");
  EXPECT_EQ(peer->ready()["threads"], "3");
  EXPECT_EQ(peer->ready()["second"], "it's 2");  // arguments arrive as words, quotes and all
  const auto first = peer->round(0), third = peer->round(2);
  ASSERT_TRUE(first && third);
  EXPECT_EQ((*first)["ms"], 5);
  EXPECT_EQ((*third)["ms"], 25);
  EXPECT_DOUBLE_EQ(peer->rounds_cpu_ms(), 14.0);
  const auto summary = peer->finish();
  ASSERT_TRUE(summary);
  EXPECT_EQ((*summary)["rounds"], 2);
}

TEST_F(PeerProcessTest, ARunnerWithoutItsRootIsReportedAndNotStarted) {
  testing::internal::CaptureStdout();
  const auto peer = PeerProcess::start(runner("missing.sh", "echo 'no peer root' >&2\nexit 3\n"), "fake.py", {}, 1);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_EQ(peer, nullptr);
  EXPECT_NE(out.find("sudo bench/peers/setup"), std::string::npos) << out;
}

TEST_F(PeerProcessTest, APeerThatDiesBetweenRoundsEndsTheRoundsWithItsExitCode) {
  const std::string dies = runner("dies.sh", R"sh(echo '{"torch": "stand-in"}'
read word n
echo '{"round": 0, "ms": 1, "cpu_ms": 1}'
exit 6
)sh");
  testing::internal::CaptureStdout();
  auto peer = PeerProcess::start(dies, "fake.py", {}, 1);
  ASSERT_NE(peer, nullptr);
  EXPECT_TRUE(peer->round(0));
  EXPECT_FALSE(peer->round(1));
  EXPECT_FALSE(peer->round(2));  // no write into a closed pipe: no SIGPIPE
  EXPECT_FALSE(peer->finish());
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("exit 6"), std::string::npos) << out;
}

}  // namespace
}  // namespace strata
