#pragma once
// The processes of one data-parallel run, joined on PyTorch's c10d: a TCPStore for the
// rendezvous (hosted by rank 0 at MASTER_ADDR:MASTER_PORT) and a Gloo process group for the
// collectives. Only this file's implementation includes c10d's headers.
//
// Failures: a collective that fails (a peer's connection reset) or times out
// (WorldOptions::timeout) becomes a strata::Error naming the ranks that stopped responding.
// Every rank keeps a heartbeat in the store and reads everyone's four times a second; after a
// failure it names the ranks whose count did not move between two of its rounds of reads, two
// seconds apart (or rank 0, when the store it hosts is gone). A failed rank does not wait on
// its peers to exit.
#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::train {

// Where this process stands in a run, in torchrun's terms.
struct WorldOptions {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;        // this process's index on its machine
  int local_world_size = 1;  // processes on this machine (they share its cores)
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::chrono::seconds timeout{300};  // how long a collective waits for a silent peer
};

// The run torchrun's variables describe (WORLD_SIZE, RANK, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT, and strata's STRATA_DDP_TIMEOUT in seconds); nullopt when
// WORLD_SIZE is not set. strata::Error naming the variable when one is malformed or missing.
std::optional<WorldOptions> world_from_environment();

// The rows of a global batch that `rank` reads: every world_size-th, from the rank's own. The
// ranks' shards are disjoint and together are the batch, so the summed losses and gradients
// are the one-process batch's.
std::vector<std::size_t> shard_of(std::span<const std::size_t> rows, int rank, int world_size);

// A collective launched and not yet waited for.
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  virtual void wait() = 0;  // strata::Error (naming the silent ranks) when it failed
};

class ProcessGroup {
 public:
  // Joins the run: rank 0 hosts the store, the others connect to it (retrying until the
  // timeout). strata::Error when the port is taken or the master cannot be reached.
  explicit ProcessGroup(const WorldOptions& world);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  const WorldOptions& world() const;
  int rank() const { return world().rank; }
  int size() const { return world().world_size; }

  // `what` names the collective in an error ("the gradient all-reduce of step 12").
  // One tensor per call (Gloo sums a list of tensors into one, as if they were devices).
  void all_reduce_sum(at::Tensor& tensor, const std::string& what);
  std::unique_ptr<PendingCollective> all_reduce_sum_async(at::Tensor& tensor, const std::string& what);
  void broadcast_from_rank0(std::vector<at::Tensor>& tensors, const std::string& what);

  // Rank 0 publishes `value` under `key`; every other rank waits for it (for as long as rank 0's
  // heartbeat goes on, however long that is: rank 0 may be evaluating) and gets it.
  nlohmann::json share_from_rank0(const std::string& key, const nlohmann::json& value);

  // Test hook for the failure paths: STRATA_DDP_FAULT=kill:RANK:STEP or hang:RANK:STEP makes
  // that rank SIGKILL or SIGSTOP itself in the middle of that step (after its forward pass);
  // stall:RANK:STEP sends the store half a query first, then stops.
  void fault_point(std::int64_t step) const;

  struct State;  // the store, the Gloo group, the heartbeat (process_group.cpp)

 private:
  std::unique_ptr<State> state_;
};

}  // namespace strata::train
