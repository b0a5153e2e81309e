// Plain text: paragraphs and sentences.
#include "fuzz_input.h"
#include "strata/doc/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return strata::fuzz::refusing_is_fine(
      [&] { strata::parse_document_text(strata::fuzz::as_text(data, size), strata::DocFormat::Plain, "fuzz.txt"); });
}
