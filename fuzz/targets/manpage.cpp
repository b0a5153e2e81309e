// roff man pages (man and mdoc macros), as `strata data manpages` and `--format man` read them.
#include "fuzz_input.h"
#include "strata/doc/manpage.h"
#include "strata/doc/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = strata::fuzz::as_text(data, size);
  strata::fuzz::refusing_is_fine([&] { strata::parse_manpage(text, "fuzz.1"); });
  return strata::fuzz::refusing_is_fine([&] { strata::parse_document_text(text, strata::DocFormat::Man, "fuzz.1"); });
}
