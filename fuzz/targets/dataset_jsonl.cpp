// JSONL datasets in every shape strata reads (native documents, {document, summary}, XSum,
// CNN/DM, arXiv/PubMed, ...), line after line as `strata train` loads them.
#include "fuzz_input.h"
#include "strata/doc/dataset.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const strata::fuzz::TempFile file(strata::fuzz::as_text(data, size), "data.jsonl");
  return strata::fuzz::refusing_is_fine([&] {
    strata::DatasetReader reader(file.path());
    strata::Document document;
    while (reader.next(document)) {
    }
  });
}
