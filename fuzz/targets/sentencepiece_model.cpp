// sentencepiece model files (a protobuf read by the sentencepiece library strata opens at run
// time), loaded and used on a fixed text.
#include "fuzz_input.h"
#include "strata/text/sentencepiece_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const strata::fuzz::TempFile file(strata::fuzz::as_text(data, size), "tok.model");
  return strata::fuzz::refusing_is_fine([&] {
    strata::fuzz::use_tokenizer(*strata::SentencePieceTokenizer::load(file.path()));
  });
}
