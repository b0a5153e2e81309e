#pragma once
// The bounded waiting room in front of the decoding workers: at most `workers` requests decode
// at once, at most `queue` more wait for a turn, and anything beyond is turned away at once
// (HTTP 429) rather than left to pile up. Shutdown sends the waiting away (503) and lets the
// running finish.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace strata::serve {

class Admission {
 public:
  Admission(std::size_t workers, std::size_t queue);

  enum class Outcome { Admitted, QueueFull, ShuttingDown, TimedOut };
  // Waits for a free worker until `deadline`. Admitted callers must call leave() once.
  Outcome enter(std::chrono::steady_clock::time_point deadline);
  void leave();
  // From now on enter() refuses, and callers waiting in it return ShuttingDown.
  void shut_down();

  bool shutting_down() const;
  std::size_t running() const;
  std::size_t waiting() const;

 private:
  const std::size_t workers_, queue_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::size_t running_ = 0, waiting_ = 0;
  bool shutting_down_ = false;
};

// leave() at the end of a scope, for an admitted request.
class AdmissionTicket {
 public:
  explicit AdmissionTicket(Admission& admission) : admission_(&admission) {}
  AdmissionTicket(const AdmissionTicket&) = delete;
  AdmissionTicket& operator=(const AdmissionTicket&) = delete;
  ~AdmissionTicket() { admission_->leave(); }

 private:
  Admission* admission_;
};

}  // namespace strata::serve
