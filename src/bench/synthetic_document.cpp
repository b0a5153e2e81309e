#include "synthetic_document.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "strata/attn/spec.h"
#include "strata/attn/token_layout.h"

namespace strata::bench {

namespace {

constexpr int kDocumentSections = 60;  // sections of the document (the root aside)
constexpr int kMaxDepth = 4;   // deepest section level
constexpr int kParagraphSentences = 4;

}  // namespace

Layout sectioned_document(std::int64_t length) {
  const int sections = static_cast<int>(std::min<std::int64_t>(kDocumentSections, length));
  std::uint32_t state = 20240601u;
  const auto next = [&state](std::uint32_t n) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>((state >> 8) % n);
  };
  Layout layout;
  layout.tree.parent = {-1};
  layout.tree.depth = {0};
  layout.tree.heading = {"document"};
  std::vector<int> last_at_depth{0};  // the latest section at each depth, the root at 0
  std::vector<int> weight(1, 0);
  int depth = 0, total_weight = 0;
  for (int s = 1; s <= sections; ++s) {
    const int r = next(10);
    if (s == 1) depth = 1;
    else if (r < 4 && depth < kMaxDepth) ++depth;                    // a child of the previous section
    else if (r >= 7) depth = std::max(1, depth - (r == 9 ? 2 : 1));  // back up the tree
    last_at_depth.resize(static_cast<std::size_t>(depth));
    layout.tree.parent.push_back(last_at_depth.back());
    layout.tree.depth.push_back(depth);
    layout.tree.heading.push_back(fmt::format("section {}", s));
    last_at_depth.push_back(s);
    weight.push_back(1 + next(6));
    total_weight += weight.back();
  }
  std::int32_t sentence = -1, paragraph = -1;
  int cumulative = 0;
  for (int s = 1; s <= sections; ++s) {
    const std::int64_t begin = length * cumulative / total_weight;
    cumulative += weight[static_cast<std::size_t>(s)];
    const std::int64_t end = length * cumulative / total_weight;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::int64_t in_section = i - begin;
      if (in_section % kSentenceTokens == 0) {
        ++sentence;
        if (in_section % (kSentenceTokens * kParagraphSentences) == 0) ++paragraph;
      }
      layout.position.push_back(static_cast<std::int32_t>(i));
      layout.token.push_back(static_cast<std::int32_t>(4 + (i * 7919) % 1000));
      layout.section.push_back(s);
      layout.sentence.push_back(sentence);
      layout.paragraph.push_back(paragraph);
      layout.segment.push_back(0);
    }
  }
  return layout;
}

DocumentStats document_stats(const Layout& document) {
  DocumentStats stats;
  stats.sections = document.tree.size() - 1;
  stats.shortest = static_cast<std::int64_t>(document.section.size());
  for (int s = 1; s < document.tree.size(); ++s) {
    const auto n = std::count(document.section.begin(), document.section.end(), s);
    stats.shortest = std::min<std::int64_t>(stats.shortest, n);
    stats.longest = std::max<std::int64_t>(stats.longest, n);
  }
  stats.deepest = *std::max_element(document.tree.depth.begin(), document.tree.depth.end());
  stats.sentences = document.sentence.empty() ? 0 : document.sentence.back() + 1;
  return stats;
}

LayoutMemory layout_memory(const Layout& document) {
  const attn::TokenLayout tokens = attn::batch_layouts({&document});
  LayoutMemory m;
  for (const at::Tensor* t : {&tokens.section, &tokens.paragraph, &tokens.sentence, &tokens.segment,
                              &tokens.document, &tokens.token, &tokens.repeated})
    if (t->defined()) {
      m.per_token += static_cast<std::int64_t>(t->nbytes());
      ++m.token_fields;
    }
  for (const at::Tensor* t : {&tokens.path_len, &tokens.lvl_diff, &tokens.section_depth})
    if (t->defined()) m.section += static_cast<std::int64_t>(t->nbytes());
  attn::Relation hibrids;
  hibrids.kind = attn::RelationKind::Hibrids;
  m.relation_ids = static_cast<std::int64_t>(
      attn::section_relation_ids(hibrids, tokens.path_len, tokens.lvl_diff, tokens.section_depth).nbytes());
  m.sections = tokens.path_len.size(1);
  const auto length = static_cast<std::int64_t>(document.token.size());
  m.dense = length * length * static_cast<std::int64_t>(sizeof(std::int64_t));
  return m;
}

}  // namespace strata::bench
