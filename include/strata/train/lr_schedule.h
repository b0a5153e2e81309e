#pragma once
// Learning-rate schedules: linear warm-up from 0 to the peak, then a decay to min_lr, with the
// step convention of Hugging Face's get_*_schedule_with_warmup.
#include <cstdint>
#include <string>
#include <string_view>

namespace strata::train {

enum class LrDecay {
  Linear,    // "linear": straight down to min_lr at total_steps
  Cosine,    // "cosine": half a cosine down to min_lr at total_steps
  Constant,  // "constant": stays at the peak
};

// strata::Error listing the known names for any other name.
LrDecay parse_lr_decay(std::string_view name);
std::string lr_decay_name(LrDecay decay);

struct LrSchedule {
  double peak_lr = 5e-4;
  double min_lr = 0.0;
  std::int64_t warmup_steps = 0;
  std::int64_t total_steps = 0;  // ignored by "constant"
  LrDecay decay = LrDecay::Linear;
};

// The rate for the update made after `step` updates (0 for the first): peak·step/warmup_steps
// during warm-up (so the first update of a warm-up uses 0), the peak at step = warmup_steps,
// min_lr from total_steps on. strata::Error naming the field for an inconsistent schedule
// (negative counts, min_lr above peak_lr, warm-up longer than total_steps).
double learning_rate(const LrSchedule& schedule, std::int64_t step);

}  // namespace strata::train
