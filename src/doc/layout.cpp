#include "strata/doc/layout.h"

#include "strata/core/error.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {
void flatten(const Section& section, int parent, SectionTree& tree) {
  const int index = tree.size();
  tree.parent.push_back(parent);
  tree.depth.push_back(parent < 0 ? 0 : tree.depth[parent] + 1);
  tree.heading.push_back(section.heading);
  for (const Section& child : section.children) flatten(child, index, tree);
}
}  // namespace

SectionTree SectionTree::from_document(const Document& document) {
  SectionTree tree;
  flatten(document.root, -1, tree);
  return tree;
}

int SectionTree::lowest_common_ancestor(int x, int y) const {
  while (depth[x] > depth[y]) x = parent[x];
  while (depth[y] > depth[x]) y = parent[y];
  while (x != y) {
    x = parent[x];
    y = parent[y];
  }
  return x;
}

int SectionTree::path_len(int x, int y) const {
  const int lca = lowest_common_ancestor(x, y);
  const int length = depth[x] + depth[y] - 2 * depth[lca];
  return y >= x ? length : -length;  // pre-order index is document order
}

Layout make_layout(const Document& document, const Tokenizer& tokenizer,
                   const LayoutOptions& options) {
  if (options.segments < 1) throw Error("layout: segments must be at least 1");
  Layout layout;
  layout.tree = SectionTree::from_document(document);
  const std::size_t limit = options.max_tokens == 0 ? SIZE_MAX : options.max_tokens;
  const std::size_t reserve_eos = options.add_eos ? 1 : 0;
  if (limit <= reserve_eos + (options.add_bos ? 1 : 0) && options.max_tokens != 0)
    throw Error("layout: max_tokens leaves no room for text");

  auto push = [&](std::int32_t token, std::int32_t section, std::int32_t paragraph,
                  std::int32_t sentence) {
    layout.token.push_back(token);
    layout.section.push_back(section);
    layout.paragraph.push_back(paragraph);
    layout.sentence.push_back(sentence);
  };
  auto special = [&](std::optional<std::int32_t> id, const char* name) {
    if (!id) throw Error(std::string("layout: the tokenizer has no ") + name + " token");
    push(*id, 0, -1, -1);
  };

  if (options.add_bos) special(tokenizer.bos_id(), "bos");
  int section_index = 0;
  std::int32_t paragraph_index = 0, sentence_index = 0;
  bool full = false;
  for_each_section(document.root, [&](const Section& section) {
    const int this_section = section_index++;
    for (const Paragraph& paragraph : section.paragraphs) {
      std::size_t chunk_begin = paragraph.span.begin;
      for (const Span& sentence : paragraph.sentences) {
        if (full) return;  // truncated: skip encoding the rest
        const std::string_view chunk =
            std::string_view(document.text).substr(chunk_begin, sentence.end - chunk_begin);
        chunk_begin = sentence.end;
        for (std::int32_t id : tokenizer.encode(chunk)) {
          if (layout.token.size() + reserve_eos >= limit) {
            full = true;
            break;
          }
          push(id, this_section, paragraph_index, sentence_index);
        }
        ++sentence_index;
      }
      ++paragraph_index;
    }
  });
  if (options.add_eos) special(tokenizer.eos_id(), "eos");

  const std::size_t n = layout.token.size();
  layout.position.resize(n);
  layout.segment.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    layout.position[p] = static_cast<std::int32_t>(p);
    layout.segment[p] = even_segment(p, n, options.segments);
  }
  return layout;
}

}  // namespace strata
