// A checkpoint's files as `--resume` and `--model` read them, without the tensors' libtorch
// side: trainer_state.json, then (after a "\n----\n" line) the bytes of a safetensors file
// (model.safetensors or optimizer.safetensors).
#include <nlohmann/json.hpp>

#include "fuzz_input.h"
#include "strata/core/safetensors.h"
#include "strata/train/trainer_state.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = strata::fuzz::two_parts(strata::fuzz::as_text(data, size));
  const std::string_view state_text = parts.first, tensor_bytes = parts.second;
  strata::fuzz::refusing_is_fine([&] {
    const nlohmann::json state = nlohmann::json::parse(state_text, nullptr, /*allow_exceptions=*/false);
    if (state.is_discarded()) return;
    const strata::train::TrainerState parsed = strata::train::trainer_state_from_json(state, "trainer_state.json");
    strata::train::trainer_state_json(parsed);
  });
  const strata::fuzz::TempFile file(tensor_bytes, "model.safetensors");
  return strata::fuzz::refusing_is_fine([&] {
    const strata::SafetensorsFile tensors(file.path());
    for (const strata::TensorEntry& entry : tensors.entries()) tensors.bytes(entry);
    if (const auto step = tensors.metadata().find("step"); step != tensors.metadata().end()) (void)step->second.size();
  });
}
