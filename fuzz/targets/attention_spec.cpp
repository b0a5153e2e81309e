// Attention specs: a JSON layer spec (or a list of them), or a mask expression such as
// "window(64,64) | global(1)".
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "strata/attn/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = strata::fuzz::as_text(data, size);
  strata::fuzz::refusing_is_fine([&] {
    const strata::attn::Mask mask = strata::attn::parse_mask(text);
    if (!(strata::attn::parse_mask(strata::attn::to_string(mask)) == mask)) std::abort();  // the printer's promise
  });
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  return strata::fuzz::refusing_is_fine([&] { strata::attn::layer_specs_from_json(json); });
}
