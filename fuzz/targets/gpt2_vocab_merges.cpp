// GPT-2's vocab.json and merges.txt, as one input split at a "\n----\n" line, loaded and used.
#include "fuzz_input.h"
#include "strata/text/byte_bpe.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [vocab_text, merges_text] = strata::fuzz::two_parts(strata::fuzz::as_text(data, size));
  const strata::fuzz::TempFile vocab(vocab_text, "vocab.json"), merges(merges_text, "merges.txt");
  return strata::fuzz::refusing_is_fine([&] {
    strata::fuzz::use_tokenizer(*strata::ByteBpeTokenizer::from_vocab_merges(vocab.path(), merges.path()));
  });
}
