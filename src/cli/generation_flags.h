#pragma once
// The decoding flags of `strata summarize` and `strata eval summarize`. Defaults come from
// the [decode] section of the run that trained the model; a flag given on the command line
// overrides it.
#include <CLI/CLI.hpp>

#include <memory>

#include "strata/decode/generation_options.h"
#include "strata/recipes/loaded_model.h"

namespace strata::cli {

struct GenerationFlags {
  CLI::Option *beam, *max_length, *min_length, *length_penalty, *no_repeat, *sample, *top_k, *top_p,
      *temperature, *seed;
  decode::GenerationOptions values;
  bool no_cache = false;
};

std::shared_ptr<GenerationFlags> add_generation_flags(CLI::App* sub);

// The run's [decode] options with the flags given on the command line applied.
decode::GenerationOptions generation_for(const GenerationFlags& flags, const recipes::LoadedModel& model);

}  // namespace strata::cli
