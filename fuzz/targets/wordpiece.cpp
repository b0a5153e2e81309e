// A BERT tokenizer as transformers ships it: the bytes as tokenizer.json (WordPiece) and as
// vocab.txt, each loaded the way strata picks a tokenizer and used on a fixed text.
#include "fuzz_input.h"
#include "strata/text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes = strata::fuzz::as_text(data, size);
  for (const char* name : {"tokenizer.json", "vocab.txt"}) {
    const strata::fuzz::TempFile file(bytes, name);
    strata::fuzz::refusing_is_fine([&] { strata::fuzz::use_tokenizer(*strata::load_tokenizer(file.path())); });
  }
  return 0;
}
