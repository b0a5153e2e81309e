#include "strata/core/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace strata {

namespace {
std::string format_duration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}
}  // namespace

Progress::Progress(std::string label, std::size_t total, std::string unit, bool quiet)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      quiet_(quiet),
      tty_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::add(std::size_t n) {
  done_ += n;
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  const auto interval = tty_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(5000);
  if (now - last_draw_ < interval) return;
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock() || now - last_draw_ < interval) return;
  last_draw_ = now;
  draw(false);
}

void Progress::set_status(std::string status) {
  std::lock_guard lock(mutex_);
  status_ = std::move(status);
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (!quiet_) draw(true);
}

void Progress::draw(bool final) {
  const std::size_t done = done_.load();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0.0;
  std::string line = fmt::format("{}: {}", label_, done);
  if (total_ > 0) {
    const double fraction = std::min(1.0, static_cast<double>(done) / total_);
    if (tty_) {
      const int width = 30;
      const int filled = static_cast<int>(fraction * width);
      line = fmt::format("{} [{}{}] {}/{}", label_, std::string(filled, '#'),
                         std::string(width - filled, '.'), done, total_);
    } else {
      line += fmt::format("/{} ({:.0f}%)", total_, fraction * 100);
    }
    line += fmt::format(" {:.1f} {}/s", rate, unit_);
    if (!final && rate > 0 && done < total_)
      line += " ETA " + format_duration((total_ - done) / rate);
  } else {
    line += fmt::format(" {} {:.1f}/s", unit_, rate);
  }
  if (!status_.empty()) line += " | " + status_;
  if (final) line += " in " + format_duration(elapsed);
  if (tty_)
    std::fprintf(stderr, "\r\033[K%s%s", line.c_str(), final ? "\n" : "");
  else
    std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

}  // namespace strata
