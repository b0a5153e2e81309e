// safetensors files: the header (names, dtypes, shapes, offsets) and every tensor's bytes.
#include "fuzz_input.h"
#include "strata/core/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const strata::fuzz::TempFile file(strata::fuzz::as_text(data, size), "model.safetensors");
  return strata::fuzz::refusing_is_fine([&] {
    const strata::SafetensorsFile tensors(file.path());
    std::size_t sum = 0;
    for (const strata::TensorEntry& entry : tensors.entries())
      for (const std::byte b : tensors.bytes(entry)) sum += static_cast<std::size_t>(b);
    return sum;
  });
}
