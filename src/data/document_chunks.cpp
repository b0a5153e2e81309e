#include "strata/data/document_chunks.h"

#include <limits>

#include <fmt/format.h>

#include "strata/core/error.h"

namespace strata {

std::vector<Layout> cut_into_chunks(const Layout& text, std::size_t max_tokens, std::optional<std::int32_t> open,
                                    std::int32_t close, int segments) {
  const std::size_t framing = open ? 2 : 1;
  if (max_tokens <= framing)
    throw Error(fmt::format("data.max_source_tokens: a chunk holds {}at least one token and {}, so at least {} "
                            "tokens; got {}",
                            open ? "its opening token, " : "", open ? "its closing one" : "its closing eos",
                            framing + 1, max_tokens));
  const std::size_t n = text.size(), room = max_tokens - framing;
  const std::size_t count = (n + room - 1) / room;
  std::vector<Layout> chunks(count);
  for (std::size_t c = 0; c < count; ++c) {
    Layout& out = chunks[c];
    const auto push = [&](std::int32_t token, std::int32_t section, std::int32_t paragraph, std::int32_t sentence) {
      out.token.push_back(token);
      out.section.push_back(section);
      out.paragraph.push_back(paragraph);
      out.sentence.push_back(sentence);
    };
    if (open) push(*open, 0, -1, -1);
    for (std::size_t i = c * n / count; i < (c + 1) * n / count; ++i)
      push(text.token[i], text.section[i], text.paragraph[i], text.sentence[i]);
    push(close, 0, -1, -1);
    for (std::size_t p = 0; p < out.size(); ++p) {
      out.position.push_back(static_cast<std::int32_t>(p));
      out.segment.push_back(even_segment(p, out.size(), segments));
    }
    out.tree = text.tree;
  }
  return chunks;
}

Layout without_eos(Layout source) {
  for (auto* ids : {&source.token, &source.position, &source.section, &source.paragraph, &source.sentence,
                    &source.segment})
    ids->pop_back();
  return source;
}

TruncationOptions reading_whole(TruncationOptions options) {
  options.max_source_tokens = std::numeric_limits<std::size_t>::max();
  options.policy = TruncationPolicy::Head;
  return options;
}

}  // namespace strata
