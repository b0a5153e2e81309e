#include "strata/train/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "strata/core/error.h"

namespace strata::train {

namespace {

using namespace std::chrono_literals;

int env_int(const char* name, std::optional<int> fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) {
    if (fallback) return *fallback;
    throw Error(fmt::format("{}: not set (a data-parallel worker needs WORLD_SIZE, RANK, MASTER_ADDR and MASTER_PORT)", name));
  }
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1'000'000)
    throw Error(fmt::format("{}: '{}' is not a non-negative integer", name, text));
  return static_cast<int>(value);
}

std::string alive_key(int rank) { return "strata/alive/" + std::to_string(rank); }

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "localhost" || host == "::1" || host.starts_with("127.");
}

struct Fault {
  std::string kind;  // "kill" or "hang"
  int rank = -1;
  std::int64_t step = -1;
};

// STRATA_DDP_FAULT=kill|hang:RANK:STEP; none when unset.
std::optional<Fault> fault_from_environment() {
  const char* text = std::getenv("STRATA_DDP_FAULT");
  if (!text || !*text) return std::nullopt;
  Fault fault;
  char kind[8] = {};
  long long step = -1;
  if (std::sscanf(text, "%7[a-z]:%d:%lld", kind, &fault.rank, &step) != 3 ||
      (std::string(kind) != "kill" && std::string(kind) != "hang"))
    throw Error(fmt::format("STRATA_DDP_FAULT: '{}' is not kill:RANK:STEP or hang:RANK:STEP", text));
  fault.kind = kind;
  fault.step = step;
  return fault;
}

}  // namespace

std::optional<WorldOptions> world_from_environment() {
  const char* size = std::getenv("WORLD_SIZE");
  if (!size || !*size) return std::nullopt;
  WorldOptions world;
  world.world_size = env_int("WORLD_SIZE", std::nullopt);
  world.rank = env_int("RANK", std::nullopt);
  world.local_rank = env_int("LOCAL_RANK", world.rank);
  world.local_world_size = env_int("LOCAL_WORLD_SIZE", world.world_size);
  world.master_port = env_int("MASTER_PORT", std::nullopt);
  world.timeout = std::chrono::seconds(env_int("STRATA_DDP_TIMEOUT", 300));
  const char* addr = std::getenv("MASTER_ADDR");
  if (!addr || !*addr) throw Error("MASTER_ADDR: not set (the host of rank 0)");
  world.master_addr = addr;
  if (world.world_size < 1) throw Error("WORLD_SIZE: must be at least 1");
  if (world.rank >= world.world_size)
    throw Error(fmt::format("RANK: {} is not below WORLD_SIZE {}", world.rank, world.world_size));
  if (world.master_port < 1 || world.master_port > 65535)
    throw Error(fmt::format("MASTER_PORT: {} is not a port (1-65535)", world.master_port));
  if (world.timeout.count() < 1) throw Error("STRATA_DDP_TIMEOUT: must be at least 1 second");
  return world;
}

std::vector<std::size_t> shard_of(std::span<const std::size_t> rows, int rank, int world_size) {
  std::vector<std::size_t> shard;
  for (std::size_t i = static_cast<std::size_t>(rank); i < rows.size(); i += static_cast<std::size_t>(world_size))
    shard.push_back(rows[i]);
  return shard;
}

struct ProcessGroup::State {
  WorldOptions world;
  c10::intrusive_ptr<c10d::TCPStore> store;       // the rendezvous, and what ranks share
  c10::intrusive_ptr<c10d::TCPStore> beat_store;  // a second connection: heartbeats and diagnosis
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  std::optional<Fault> fault;
  std::atomic<bool> stopping{false};
  std::thread heartbeat;

  // Also when the constructor throws after starting the heartbeat (ProcessGroup's destructor
  // does not run then, and a joinable thread must not be destroyed).
  ~State() {
    stopping = true;
    if (heartbeat.joinable()) heartbeat.join();
  }

  c10::intrusive_ptr<c10d::TCPStore> connect(bool server, std::chrono::milliseconds timeout) const {
    c10d::TCPStoreOptions options;
    options.port = static_cast<std::uint16_t>(world.master_port);
    options.isServer = server;
    options.numWorkers = static_cast<std::size_t>(world.world_size);
    options.waitWorkers = false;
    options.timeout = timeout;
    return c10::make_intrusive<c10d::TCPStore>(world.master_addr, options);
  }

  // The ranks other than this one whose heartbeat stood still for two seconds; {0} when the
  // store (hosted by rank 0) cannot be read.
  std::vector<int> silent_ranks() const {
    try {
      auto read = [&] {
        std::vector<std::int64_t> beats;
        for (int r = 0; r < world.world_size; ++r) beats.push_back(beat_store->add(alive_key(r), 0));
        return beats;
      };
      const std::vector<std::int64_t> before = read();
      std::this_thread::sleep_for(2s);
      const std::vector<std::int64_t> after = read();
      std::vector<int> silent;
      for (int r = 0; r < world.world_size; ++r)
        if (r != world.rank && after[r] == before[r]) silent.push_back(r);
      return silent;
    } catch (const std::exception&) {
      return world.rank == 0 ? std::vector<int>{} : std::vector<int>{0};
    }
  }

  [[noreturn]] void fail(const std::string& what, const std::string& cause) const {
    const std::vector<int> silent = silent_ranks();
    std::string who;
    for (int r : silent) who += (who.empty() ? "" : ", ") + std::to_string(r);
    const std::string first_line = cause.substr(0, cause.find('\n'));
    if (silent.empty())
      throw Error(fmt::format("rank {}: {} failed: {}", world.rank, what, first_line));
    throw Error(fmt::format("rank {}: {} failed: rank{} {} stopped responding (died, hung or never joined){}; stopping ({})",
                            world.rank, what, silent.size() > 1 ? "s" : "", who,
                            silent == std::vector<int>{0} ? ", or the store it hosts at " + world.master_addr + ":" +
                                                                std::to_string(world.master_port) + " is gone"
                                                          : "",
                            first_line));
  }
};

namespace {

class PendingWork final : public PendingCollective {
 public:
  PendingWork(c10::intrusive_ptr<c10d::Work> work, const ProcessGroup::State* state, std::string what)
      : work_(std::move(work)), state_(state), what_(std::move(what)) {}
  void wait() override {
    try {
      work_->wait();
    } catch (const std::exception& e) {
      state_->fail(what_, e.what());
    }
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  const ProcessGroup::State* state_;
  std::string what_;
};

}  // namespace

ProcessGroup::ProcessGroup(const WorldOptions& world) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.world = world;
  s.fault = fault_from_environment();
  const std::string where = fmt::format("{}:{}", world.master_addr, world.master_port);
  try {
    s.store = s.connect(world.rank == 0, world.timeout);
  } catch (const std::exception& e) {
    const std::string message = e.what();
    if (world.rank == 0 && (message.find("in use") != std::string::npos || message.find("listen") != std::string::npos))
      throw Error(fmt::format("rank 0 cannot host the run at {}: the port is already in use (another run?); choose "
                              "another with --master HOST:PORT or MASTER_PORT",
                              where));
    throw Error(fmt::format("rank {}: cannot reach the master at {} within {} s: {}", world.rank, where,
                            world.timeout.count(), message.substr(0, message.find('\n'))));
  }
  s.beat_store = s.connect(false, std::min<std::chrono::milliseconds>(world.timeout, 30s));
  s.beat_store->add(alive_key(world.rank), 1);
  s.heartbeat = std::thread([&s] {
    while (!s.stopping) {
      std::this_thread::sleep_for(250ms);
      try {
        s.beat_store->add(alive_key(s.world.rank), 1);
      } catch (const std::exception&) {
        return;  // the store is gone: the next collective says so
      }
    }
  });

  auto options = c10d::ProcessGroupGloo::Options::create(world.timeout);
  const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
  if (interface && *interface) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(interface));
  } else if (is_loopback(world.master_addr)) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  } else {
    options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
  }
  options->threads = 2;
  try {
    s.group = c10::make_intrusive<c10d::ProcessGroupGloo>(s.store, world.rank, world.world_size, options);
  } catch (const std::exception& e) {
    s.fail("joining the process group", e.what());
  }
}

ProcessGroup::~ProcessGroup() = default;

const WorldOptions& ProcessGroup::world() const { return state_->world; }

void ProcessGroup::all_reduce_sum(at::Tensor& tensor, const std::string& what) {
  all_reduce_sum_async(tensor, what)->wait();
}

std::unique_ptr<PendingCollective> ProcessGroup::all_reduce_sum_async(at::Tensor& tensor, const std::string& what) {
  std::vector<at::Tensor> tensors{tensor};
  c10::intrusive_ptr<c10d::Work> work;
  try {
    work = state_->group->allreduce(tensors);
  } catch (const std::exception& e) {
    state_->fail(what, e.what());
  }
  return std::make_unique<PendingWork>(std::move(work), state_.get(), what);
}

void ProcessGroup::broadcast_from_rank0(std::vector<at::Tensor>& tensors, const std::string& what) {
  // One flat buffer per dtype: Gloo broadcasts one tensor per call.
  std::map<at::ScalarType, std::vector<at::Tensor*>> by_type;
  for (at::Tensor& t : tensors)
    if (t.defined() && t.numel() > 0) by_type[t.scalar_type()].push_back(&t);
  torch::NoGradGuard no_grad;
  for (auto& [type, group] : by_type) {
    std::vector<at::Tensor> flat_parts;
    for (const at::Tensor* t : group) flat_parts.push_back(t->detach().reshape({-1}));
    std::vector<at::Tensor> flat{torch::cat(flat_parts)};
    c10d::BroadcastOptions options;
    options.rootRank = 0;
    try {
      state_->group->broadcast(flat, options)->wait();
    } catch (const std::exception& e) {
      state_->fail(what, e.what());
    }
    std::int64_t offset = 0;
    for (at::Tensor* t : group) {
      t->detach().copy_(flat[0].slice(0, offset, offset + t->numel()).view(t->sizes()));
      offset += t->numel();
    }
  }
}

nlohmann::json ProcessGroup::share_from_rank0(const std::string& key, const nlohmann::json& value) {
  State& s = *state_;
  const std::string full = "strata/shared/" + key;
  if (s.world.rank == 0) {
    const std::string text = value.dump();
    s.store->set(full, std::vector<std::uint8_t>(text.begin(), text.end()));
    return value;
  }
  // Rank 0 may take long (an evaluation): wait as long as the store it hosts answers.
  try {
    while (!s.beat_store->check({full})) std::this_thread::sleep_for(20ms);
    const std::vector<std::uint8_t> bytes = s.beat_store->get(full);
    return nlohmann::json::parse(std::string(bytes.begin(), bytes.end()));
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("rank {}: rank 0's '{}' is not JSON: {}", s.world.rank, key, e.what()));
  } catch (const std::exception& e) {
    s.fail("waiting for rank 0 (" + key + ")", e.what());
  }
}

void ProcessGroup::fault_point(std::int64_t step) const {
  const auto& fault = state_->fault;
  if (!fault || fault->rank != state_->world.rank || fault->step != step) return;
  std::fprintf(stderr, "rank %d: STRATA_DDP_FAULT: %s at step %lld\n", fault->rank, fault->kind.c_str(),
               static_cast<long long>(step));
  std::fflush(stderr);
  std::raise(fault->kind == "kill" ? SIGKILL : SIGSTOP);
}

}  // namespace strata::train
