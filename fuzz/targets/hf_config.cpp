// A Hugging Face config.json mapped onto strata's model, then exported back and re-read; and
// the same bytes as a generation_config.json.
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "strata/models/hf_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const nlohmann::json config = nlohmann::json::parse(strata::fuzz::as_text(data, size), nullptr, false);
  if (config.is_discarded()) return 0;
  strata::fuzz::refusing_is_fine([&] {
    const strata::models::HfModel model = strata::models::hf_model_from_config(config, "config.json");
    strata::models::hf_config_of(strata::models::hf_model_of(model.config));
  });
  return strata::fuzz::refusing_is_fine([&] {
    strata::models::decode_settings_from_generation_config(config, "generation_config.json", true);
  });
}
