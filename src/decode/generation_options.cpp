#include "strata/decode/generation_options.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <string_view>

#include "strata/core/error.h"

namespace strata::decode {
namespace {

void require(bool ok, std::string_view field, std::string_view rule, double value) {
  if (!ok) throw Error(fmt::format("generation.{}: {}, got {}", field, rule, value));
}

}  // namespace

void GenerationOptions::check() const {
  require(max_length >= 1, "max_length", "must be at least 1", max_length);
  require(min_length >= 0 && min_length <= max_length, "min_length",
          fmt::format("must be in [0, max_length = {}]", max_length), min_length);
  require(beam_size >= 1, "beam_size", "must be at least 1", beam_size);
  require(!do_sample || beam_size == 1, "beam_size",
          "sampling draws one sequence per input: set beam_size = 1 or do_sample = false",
          beam_size);
  require(std::isfinite(length_penalty), "length_penalty", "must be finite", length_penalty);
  require(no_repeat_ngram_size >= 0, "no_repeat_ngram_size", "must be >= 0 (0 = off)",
          no_repeat_ngram_size);
  require(top_k >= 0, "top_k", "must be >= 0 (0 = off)", top_k);
  require(top_p > 0 && top_p <= 1, "top_p", "must be in (0, 1]", top_p);
  require(temperature > 0 && std::isfinite(temperature), "temperature",
          "must be positive and finite", temperature);
  require(forced_bos_id >= -1, "forced_bos_id", "must be a token id, or -1 for none", forced_bos_id);
  require(start_id >= 0, "start_id", "must be a token id >= 0", start_id);
  require(eos_id >= 0, "eos_id", "must be a token id >= 0", eos_id);
  require(pad_id >= 0, "pad_id", "must be a token id >= 0", pad_id);
}

}  // namespace strata::decode
