#include "strata/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "strata/core/error.h"

namespace strata::train {
namespace {

struct DecayName {
  LrDecay decay;
  const char* name;
};

constexpr DecayName kDecays[] = {
    {LrDecay::Linear, "linear"}, {LrDecay::Cosine, "cosine"}, {LrDecay::Constant, "constant"}};

void check(const LrSchedule& s) {
  auto fail = [](const std::string& field, const std::string& message) {
    std::string text = "lr schedule: ";
    text.append(field).append(": ").append(message);
    throw Error(text);
  };
  if (s.peak_lr < 0) fail("peak_lr", "must not be negative");
  if (s.min_lr < 0 || s.min_lr > s.peak_lr) fail("min_lr", "must lie in [0, peak_lr]");
  if (s.warmup_steps < 0) fail("warmup_steps", "must not be negative");
  if (s.decay != LrDecay::Constant && s.warmup_steps > s.total_steps)
    fail("total_steps", std::string("must be at least warmup_steps (")
                            .append(std::to_string(s.warmup_steps))
                            .append(")"));
}

}  // namespace

LrDecay parse_lr_decay(std::string_view name) {
  std::string known;
  for (const DecayName& d : kDecays) {
    if (name == d.name) return d.decay;
    known.append(known.empty() ? "" : ", ").append(d.name);
  }
  std::string message = "unknown lr schedule '";
  message.append(name).append("' (known: ").append(known).append(")");
  throw Error(message);
}

std::string lr_decay_name(LrDecay decay) {
  for (const DecayName& d : kDecays)
    if (d.decay == decay) return d.name;
  return "?";
}

double learning_rate(const LrSchedule& s, std::int64_t step) {
  check(s);
  step = std::max<std::int64_t>(step, 0);
  if (step < s.warmup_steps)
    return s.peak_lr * static_cast<double>(step) / static_cast<double>(s.warmup_steps);
  if (s.decay == LrDecay::Constant) return s.peak_lr;
  const std::int64_t span = s.total_steps - s.warmup_steps;
  const double progress =
      span == 0 ? 1.0
                : std::min(1.0, static_cast<double>(step - s.warmup_steps) / static_cast<double>(span));
  const double fraction = s.decay == LrDecay::Linear
                              ? 1.0 - progress
                              : 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  return s.min_lr + (s.peak_lr - s.min_lr) * fraction;
}

}  // namespace strata::train
