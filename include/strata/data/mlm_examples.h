#pragma once
// Masked-LM pretraining inputs (BERT; `strata pretrain` of an encoder, data.task = mlm): the
// body of every document, tokenized as denoising reads it (load_denoising_examples, with the
// section markers data.section_tokens asks for) but whole, then cut into chunks framed as the
// encoder's other inputs are:
//
//   [CLS] tokens [SEP]
//
// [CLS] being the tokenizer's bos token, [SEP] its sep token or, where it has none, its eos
// (as the segmentation examples frame theirs). The masks are drawn later, per epoch
// (masked_lm.h).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

#include "strata/data/document_chunks.h"  // cut_into_chunks
#include "strata/data/seq2seq_examples.h"
#include "strata/doc/layout.h"

namespace strata {

class Tokenizer;

// The chunks of every document of a JSONL dataset with a body, in file order: max_source_tokens
// is the chunk length, segments and section_tokens apply, the policy and max_target_tokens do
// not (documents are read whole). strata::Error naming the file when no document has a body,
// or the tokenizer when it has no bos, or neither sep nor eos.
std::vector<Layout> load_mlm_chunks(const std::filesystem::path& jsonl, const Tokenizer& tokenizer,
                                    const TruncationOptions& options, bool show_progress);

// The per-chunk cost plan_batches (token_batches.h) expects: its tokens.
std::vector<std::size_t> chunk_costs(std::span<const Layout> chunks);

}  // namespace strata
