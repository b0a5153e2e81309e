// Debian's deb822 files (Packages, Translation-en), as `strata data debian` reads them.
#include "fuzz_input.h"
#include "strata/data/debian_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return strata::fuzz::refusing_is_fine(
      [&] { strata::parse_deb822(strata::fuzz::as_text(data, size), "Packages"); });
}
