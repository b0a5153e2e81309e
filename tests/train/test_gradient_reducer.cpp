// Data-parallel pieces on a real two-rank Gloo group (two threads on loopback): each rank's
// shard of a batch, and gradients summed in buckets during backward, with parameters that some
// or all ranks leave unused.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <thread>

#include "strata/train/gradient_reducer.h"
#include "strata/train/process_group.h"
#include "strata/train/worker_launch.h"

namespace strata::train {
namespace {

TEST(ShardOf, RanksTakeEveryWorldSizethRowAndTogetherTheBatch) {
  const std::vector<std::size_t> rows{7, 3, 9, 1, 4};
  EXPECT_EQ(shard_of(rows, 0, 2), (std::vector<std::size_t>{7, 9, 4}));
  EXPECT_EQ(shard_of(rows, 1, 2), (std::vector<std::size_t>{3, 1}));
  EXPECT_EQ(shard_of(rows, 2, 3), (std::vector<std::size_t>{9}));
  EXPECT_TRUE(shard_of(std::vector<std::size_t>{5}, 1, 2).empty());  // fewer rows than ranks
}

// Three maps: `always` every rank uses, `rank1` only rank 1 uses, `never` nobody uses.
struct ReducerMaps {
  torch::nn::Linear always{4, 3}, rank1{4, 3}, never{4, 3};
  std::vector<at::Tensor> parameters() const {
    return {always->weight, always->bias, rank1->weight, rank1->bias, never->weight, never->bias};
  }
  at::Tensor loss(const at::Tensor& x, bool use_rank1) {
    at::Tensor y = always(x).tanh().pow(2).sum();
    if (use_rank1) y = y + rank1(x).sin().sum();
    return y;
  }
};

void copy_weights(const ReducerMaps& from, ReducerMaps& to) {
  torch::NoGradGuard no_grad;
  const auto source = from.parameters();
  auto target = to.parameters();
  for (std::size_t i = 0; i < source.size(); ++i) target[i].copy_(source[i]);
}

TEST(GradientReducer, SumsShardGradientsInOrderedBucketsAndKeepsUnusedParametersWithoutGradient) {
  torch::manual_seed(3);
  const at::Tensor batch = torch::randn({6, 4});
  ReducerMaps reference;
  // The gradient of the whole batch, one process: rank 1's rows also use `rank1`.
  reference.loss(batch.slice(0, 0, 3), false).add(reference.loss(batch.slice(0, 3, 6), true)).backward();

  ReducerMaps ranks[2];
  for (ReducerMaps& m : ranks) copy_weights(reference, m);
  const int port = free_loopback_port();
  std::string errors[2];
  std::int64_t buckets[2] = {0, 0};
  auto rank_main = [&](int rank) {
    try {
      WorldOptions world;
      world.rank = rank;
      world.world_size = 2;
      world.local_world_size = 2;
      world.master_port = port;
      world.timeout = std::chrono::seconds(20);
      ProcessGroup group(world);
      // 48-byte buckets: one parameter or two each, so several go out during backward.
      GradientReducer reducer(group, ranks[rank].parameters(), 48);
      buckets[rank] = static_cast<std::int64_t>(reducer.buckets());
      // Two steps: the second checks that finish() leaves the reducer ready for the next.
      for (int step = 1; step <= 2; ++step) {
        for (at::Tensor& p : ranks[rank].parameters()) p.mutable_grad() = at::Tensor();
        reducer.arm(step);
        ranks[rank].loss(batch.slice(0, 3 * rank, 3 * rank + 3), rank == 1).backward();
        reducer.finish();
      }
    } catch (const std::exception& e) {
      errors[rank] = e.what();
    }
  };
  std::thread first(rank_main, 0), second(rank_main, 1);
  first.join();
  second.join();
  ASSERT_EQ(errors[0], "");
  ASSERT_EQ(errors[1], "");
  EXPECT_GE(buckets[0], 3);
  const auto expected = reference.parameters();
  for (const ReducerMaps& m : ranks) {
    const auto got = m.parameters();
    for (std::size_t i = 0; i < 4; ++i) {
      ASSERT_TRUE(got[i].grad().defined()) << i;
      EXPECT_TRUE(torch::allclose(got[i].grad(), expected[i].grad(), 1e-6, 1e-6)) << i;
    }
    EXPECT_FALSE(got[4].grad().defined());  // `never`: AdamW skips it, as in one process
    EXPECT_FALSE(got[5].grad().defined());
  }
}

TEST(WorldFromEnvironment, ReadsTorchrunsVariablesAndNamesABadOne) {
  ::unsetenv("WORLD_SIZE");
  EXPECT_FALSE(world_from_environment().has_value());
  ::setenv("WORLD_SIZE", "4", 1);
  ::setenv("RANK", "3", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("LOCAL_WORLD_SIZE", "2", 1);
  ::setenv("MASTER_ADDR", "10.0.0.1", 1);
  ::setenv("MASTER_PORT", "29501", 1);
  const auto world = world_from_environment();
  ASSERT_TRUE(world.has_value());
  EXPECT_EQ(world->rank, 3);
  EXPECT_EQ(world->world_size, 4);
  EXPECT_EQ(world->local_rank, 1);
  EXPECT_EQ(world->local_world_size, 2);
  EXPECT_EQ(world->master_addr, "10.0.0.1");
  EXPECT_EQ(world->master_port, 29501);
  EXPECT_EQ(world->timeout, std::chrono::seconds(300));
  ::setenv("MASTER_PORT", "http", 1);
  try {
    world_from_environment();
    ADD_FAILURE() << "a malformed MASTER_PORT was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_PORT: 'http'"), std::string::npos) << e.what();
  }
  for (const char* name : {"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"})
    ::unsetenv(name);
}

}  // namespace
}  // namespace strata::train
