#pragma once
// Progress on long work: a bar with count, rate and ETA on a terminal, plain lines (at most
// one every few seconds) when stderr is not a terminal. Thread-safe add().
#include <atomic>
#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>

namespace strata {

class Progress {
 public:
  // total == 0 means unknown (no ETA). quiet suppresses all output.
  Progress(std::string label, std::size_t total, std::string unit = "items", bool quiet = false);
  ~Progress();

  void add(std::size_t n = 1);
  // A short text drawn after the rate (e.g. "loss 3.21 · 5,400 tok/s"); thread-safe.
  void set_status(std::string status);
  void finish();

 private:
  void draw(bool final);

  std::string label_;
  std::size_t total_;
  std::string unit_;
  std::string status_;
  bool quiet_;
  bool tty_;
  bool finished_ = false;
  std::atomic<std::size_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  std::mutex mutex_;
};

}  // namespace strata
