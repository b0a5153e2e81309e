#include "strata/decode/generate.h"

#include "row_search.h"
#include "strata/core/error.h"
#include "strata/decode/streaming.h"

namespace strata::decode {

Sequences generate(StepModel& model, const GenerationOptions& options) {
  options.check();
  if (options.do_sample) return sample(model, options);
  if (options.beam_size > 1) return beam_search(model, options);
  return greedy_search(model, options);
}

Sequences generate_streaming(StepModel& model, const GenerationOptions& options, const StepObserver& observer) {
  options.check();
  if (options.beam_size > 1)
    throw Error("generation.beam_size: streamed decoding is greedy or sampled; beam search needs beam_size 1");
  return row_search(model, options, options.do_sample ? sampling_choice(options) : greedy_choice(), observer);
}

}  // namespace strata::decode
