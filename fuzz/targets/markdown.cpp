// Markdown documents, and the format detection that picks a parser from the content.
#include "fuzz_input.h"
#include "strata/doc/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = strata::fuzz::as_text(data, size);
  strata::fuzz::refusing_is_fine([&] { strata::parse_document_text(text, strata::DocFormat::Markdown, "fuzz.md"); });
  return strata::fuzz::refusing_is_fine([&] { strata::parse_document_text(text, strata::DocFormat::Auto, "fuzz"); });
}
