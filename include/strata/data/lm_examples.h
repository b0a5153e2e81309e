#pragma once
// Language-model training data: documents concatenated into one token stream and cut into
// blocks. A block holds its own targets: a model reads tokens [0, n-1) of a block and
// predicts tokens [1, n), so every block needs at least 2 tokens.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "strata/doc/document.h"

namespace strata {

class Tokenizer;

// Each document's text (Document::text) encoded and followed by eos, tokenized in parallel; a
// document with no text gives no tokens (not even eos). strata::Error when the tokenizer has
// no eos.
std::vector<std::vector<std::int32_t>> encode_lm_documents(std::span<const Document> documents,
                                                           const Tokenizer& tokenizer);

// encode_lm_documents' tokens, concatenated in order.
std::vector<std::int32_t> lm_token_stream(std::span<const Document> documents,
                                          const Tokenizer& tokenizer);

// `stream` cut into blocks of block_size tokens; a last, shorter block is kept when it has
// at least 2 tokens. strata::Error when block_size < 2.
std::vector<std::vector<std::int32_t>> make_lm_chunks(std::span<const std::int32_t> stream,
                                                      std::size_t block_size);

// How documents become blocks. kStream: concatenated and cut every block_size tokens, so no
// token is padding (pretraining on long text). kDocument: each document alone, cut into blocks
// of block_size where longer, so a short document (a prompt and its completion) is never split
// across blocks and never read after another; shorter blocks are padded in a batch.
// kCompletion: prompt-completion documents whose last line is "Field: completion" (`strata
// chain text` writes them): each document one block, trained on the completion only (the text
// after the last line's first ':', and eos); the prompt's tokens are read but not predicted. A
// longer document keeps its last block_size tokens.
enum class LmBlocking { kStream, kDocument, kCompletion };

// "stream" / "document" / "completion"; strata::Error naming the choices otherwise.
LmBlocking parse_lm_blocking(std::string_view name);

// In a kCompletion block a prompt token is stored as -1 - id: the model reads it but is not
// trained to predict it (models::collate_lm decodes it).
constexpr std::int32_t as_prompt_token(std::int32_t id) { return -1 - id; }
constexpr bool is_prompt_token(std::int32_t stored) { return stored < 0; }
constexpr std::int32_t token_id(std::int32_t stored) { return stored < 0 ? -1 - stored : stored; }

// Where a prompt-completion document's completion starts: just after the first ':' of its last
// non-empty line; npos when that line has none.
std::size_t completion_start(std::string_view text);

// The blocks of the documents of `inputs`, in order: every document of a JSONL dataset (any
// shape DatasetReader knows; the body only), or one document per Markdown, man or plain
// text file (read_document). strata::Error naming the file on a bad input, and when the
// inputs hold too little text for one block.
std::vector<std::vector<std::int32_t>> load_lm_chunks(
    const std::vector<std::filesystem::path>& inputs, const Tokenizer& tokenizer,
    std::size_t block_size, bool show_progress, LmBlocking blocking = LmBlocking::kStream);

}  // namespace strata
