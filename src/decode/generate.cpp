#include "strata/decode/generate.h"

namespace strata::decode {

Sequences generate(StepModel& model, const GenerationOptions& options) {
  options.check();
  if (options.do_sample) return sample(model, options);
  if (options.beam_size > 1) return beam_search(model, options);
  return greedy_search(model, options);
}

}  // namespace strata::decode
