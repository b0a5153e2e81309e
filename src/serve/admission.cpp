#include "strata/serve/admission.h"

#include "strata/core/error.h"

namespace strata::serve {

Admission::Admission(std::size_t workers, std::size_t queue) : workers_(workers), queue_(queue) {
  if (workers == 0) throw Error("serve: --workers must be at least 1");
}

Admission::Outcome Admission::enter(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  if (shutting_down_) return Outcome::ShuttingDown;
  if (running_ < workers_ && waiting_ == 0) {
    ++running_;
    return Outcome::Admitted;
  }
  if (waiting_ >= queue_) return Outcome::QueueFull;
  ++waiting_;
  const bool turn = freed_.wait_until(lock, deadline, [&] { return shutting_down_ || running_ < workers_; });
  --waiting_;
  if (shutting_down_) return Outcome::ShuttingDown;
  if (!turn) return Outcome::TimedOut;
  ++running_;
  return Outcome::Admitted;
}

void Admission::leave() {
  {
    std::lock_guard lock(mutex_);
    --running_;
  }
  freed_.notify_one();
}

void Admission::shut_down() {
  {
    std::lock_guard lock(mutex_);
    shutting_down_ = true;
  }
  freed_.notify_all();
}

bool Admission::shutting_down() const {
  std::lock_guard lock(mutex_);
  return shutting_down_;
}

std::size_t Admission::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

std::size_t Admission::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_;
}

}  // namespace strata::serve
