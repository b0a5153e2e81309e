#pragma once
// A document's body cut into model-sized chunks, so that pretraining reads every token of a
// long document rather than only its first data.max_source_tokens: masked-LM chunks framed
// [CLS] tokens [SEP] (mlm_examples.h), denoising chunks framed tokens eos (denoising.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "strata/data/seq2seq_examples.h"
#include "strata/doc/layout.h"

namespace strata {

// The tokens of `text` (a document's body, no framing) cut evenly into the fewest chunks of at
// most max_tokens tokens with the framing included: `open` first where given, `close` last.
// Each chunk keeps its tokens' section, paragraph and sentence ids and the document's tree;
// the framing tokens lie outside any sentence in the root section, as make_layout puts bos and
// eos; positions count from 0 and segments are the even split into `segments`. None when
// `text` is empty. strata::Error naming data.max_source_tokens when a chunk would have no
// room for a token.
std::vector<Layout> cut_into_chunks(const Layout& text, std::size_t max_tokens, std::optional<std::int32_t> open,
                                    std::int32_t close, int segments);

// `source` without its last token (the closing eos make_layout adds): a document's body.
Layout without_eos(Layout source);

// `options` reading documents whole (no length limit, nothing dropped), for loaders that cut
// them into chunks afterwards.
TruncationOptions reading_whole(TruncationOptions options);

}  // namespace strata
