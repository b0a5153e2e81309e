// Hugging Face tokenizer.json (byte-level BPE), loaded and used on a fixed text.
#include "fuzz_input.h"
#include "strata/text/byte_bpe.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const strata::fuzz::TempFile file(strata::fuzz::as_text(data, size), "tokenizer.json");
  return strata::fuzz::refusing_is_fine([&] {
    strata::fuzz::use_tokenizer(*strata::ByteBpeTokenizer::from_tokenizer_json(file.path()));
  });
}
