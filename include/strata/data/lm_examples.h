#pragma once
// Language-model training data: documents concatenated into one token stream and cut into
// blocks. A block holds its own targets: a model reads tokens [0, n-1) of a block and
// predicts tokens [1, n), so every block needs at least 2 tokens.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "strata/doc/document.h"

namespace strata {

class Tokenizer;

// Each document's text (Document::text) encoded and followed by eos, in order, tokenized in
// parallel. Documents with no text add nothing. strata::Error when the tokenizer has no eos.
std::vector<std::int32_t> lm_token_stream(std::span<const Document> documents,
                                          const Tokenizer& tokenizer);

// `stream` cut into blocks of block_size tokens; a last, shorter block is kept when it has
// at least 2 tokens. strata::Error when block_size < 2.
std::vector<std::vector<std::int32_t>> make_lm_chunks(std::span<const std::int32_t> stream,
                                                      std::size_t block_size);

// The blocks of the documents of `inputs`, in order: every document of a JSONL dataset (any
// shape DatasetReader knows; the body only), or one document per Markdown, man or plain
// text file (read_document). strata::Error naming the file on a bad input, and when the
// inputs hold too little text for one block.
std::vector<std::vector<std::int32_t>> load_lm_chunks(
    const std::vector<std::filesystem::path>& inputs, const Tokenizer& tokenizer,
    std::size_t block_size, bool show_progress);

}  // namespace strata
