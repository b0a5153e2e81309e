#include "strata/train/process_group.h"

#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "strata/core/error.h"

namespace strata::train {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

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
  std::string kind;  // "kill", "hang" or "stall"
  int rank = -1;
  std::int64_t step = -1;
};

// STRATA_DDP_FAULT=kill|hang|stall:RANK:STEP; none when unset.
std::optional<Fault> fault_from_environment() {
  const char* text = std::getenv("STRATA_DDP_FAULT");
  if (!text || !*text) return std::nullopt;
  Fault fault;
  char kind[8] = {};
  long long step = -1;
  if (std::sscanf(text, "%7[a-z]:%d:%lld", kind, &fault.rank, &step) != 3 ||
      (std::string(kind) != "kill" && std::string(kind) != "hang" && std::string(kind) != "stall"))
    throw Error(fmt::format("STRATA_DDP_FAULT: '{}' is not kill:RANK:STEP, hang:RANK:STEP or stall:RANK:STEP", text));
  fault.kind = kind;
  fault.step = step;
  return fault;
}

// What a worker stopped between the sends of one store call leaves behind: on a connection to
// the store, the first byte of a query (3: ADD in c10d's TCPStore protocol) and nothing more.
void send_half_a_query(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  const int fd = ::socket(found->ai_family, found->ai_socktype, found->ai_protocol);
  const std::uint8_t add = 3;
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) (void)::send(fd, &add, 1, 0);
  ::freeaddrinfo(found);  // the socket stays open: the process stops next
}

// What this rank's heartbeat thread last read of every rank's heartbeat count.
struct Heartbeats {
  // A round of reads: when it began, and each rank's count.
  struct Round {
    Clock::time_point start;
    std::vector<std::int64_t> counts;
  };

  // The latest round, once one that began at or after `after` has completed; nullopt when none
  // has by `deadline` (the store did not answer this rank).
  std::optional<Round> round_after(Clock::time_point after, Clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex);
    if (!done.wait_until(lock, deadline, [&] { return last.start >= after; })) return std::nullopt;
    return last;
  }

  std::mutex mutex;
  std::condition_variable done;  // notified after each round
  Round last;
  std::atomic<bool> stopping{false};
};

// Four times a second: adds one to this rank's count and reads everyone's. Ends at the first
// store call that fails (the store is gone, or did not answer within its timeout).
void beat(Heartbeats& beats, c10d::TCPStore& store, int rank, int world_size) {
  while (!beats.stopping) {
    std::this_thread::sleep_for(250ms);
    Heartbeats::Round round{Clock::now(), {}};
    try {
      store.add(alive_key(rank), 1);
      for (int r = 0; r < world_size; ++r) round.counts.push_back(store.add(alive_key(r), 0));
    } catch (const std::exception&) {
      return;
    }
    {
      std::lock_guard<std::mutex> lock(beats.mutex);
      beats.last = std::move(round);
    }
    beats.done.notify_all();
  }
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
  c10::intrusive_ptr<c10d::TCPStore> beat_store;  // a second connection: heartbeats, share_from_rank0
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;
  std::optional<Fault> fault;
  std::unique_ptr<Heartbeats> beats;
  std::thread heartbeat;
  mutable std::atomic<bool> failed{false};  // a collective failed: peers may be stopped

  // Also when the constructor throws after starting the heartbeat (ProcessGroup's destructor
  // does not run then, and a joinable thread must not be destroyed).
  ~State() {
    if (beats) beats->stopping = true;
    if (!heartbeat.joinable()) return;
    if (!failed) {
      heartbeat.join();
      return;
    }
    // After a failure the heartbeat, the store's server and Gloo's threads may each wait on a
    // stopped peer: the server reads one query at a time and waits without limit on one that a
    // peer stopped half way through sending. Their destructors would wait with them, so they
    // are left to the process's exit.
    heartbeat.detach();
    (void)beats.release();
    (void)beat_store.release();
    (void)store.release();
    (void)group.release();
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

  // The ranks other than this one whose heartbeat count did not move between two rounds of
  // reads two seconds apart, both begun after the failure (a round under way when a peer died
  // may still see its last beat). When the store does not answer this rank, it cannot tell
  // them apart: rank 0 (the host) names all the others, the others name rank 0.
  std::vector<int> silent_ranks() const {
    const Clock::time_point asked = Clock::now();
    std::optional<Heartbeats::Round> first = beats->round_after(asked, asked + 2s), second;
    if (first) second = beats->round_after(first->start + 2s, first->start + 4s);
    std::vector<int> silent;
    if (!second && world.rank != 0) return {0};
    for (int r = 0; r < world.world_size; ++r)
      if (r != world.rank && (!second || first->counts[static_cast<std::size_t>(r)] == second->counts[static_cast<std::size_t>(r)]))
        silent.push_back(r);
    return silent;
  }

  [[noreturn]] void fail(const std::string& what, const std::string& cause) const {
    failed = true;
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
  const std::chrono::milliseconds beat_timeout = std::min<std::chrono::milliseconds>(world.timeout, 30s);
  s.beat_store = s.connect(false, beat_timeout);
  s.beat_store->add(alive_key(world.rank), 1);
  // libtorch 1.13's store client waits without limit for an answer unless a wait() has set its
  // socket's receive timeout, which then stays set: with it, a stopped rank 0 (or a store held
  // up by a stopped peer) makes the heartbeat and share_from_rank0 fail instead of hang.
  s.beat_store->wait({alive_key(world.rank)}, beat_timeout);
  s.beats = std::make_unique<Heartbeats>();
  s.heartbeat = std::thread(beat, std::ref(*s.beats), std::ref(*s.beat_store), world.rank, world.world_size);

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
  if (fault->kind == "stall") send_half_a_query(state_->world.master_addr, state_->world.master_port);
  std::raise(fault->kind == "kill" ? SIGKILL : SIGSTOP);
}

}  // namespace strata::train
