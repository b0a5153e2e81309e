// TOML run configs, validated against the full run schema as `strata train --config` does.
#include "fuzz_input.h"
#include "strata/core/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return strata::fuzz::refusing_is_fine([&] {
    const strata::Config config = strata::Config::from_toml(strata::fuzz::as_text(data, size), "fuzz.toml");
    config.to_toml();
    config.to_json();
  });
}
