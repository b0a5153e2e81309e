#pragma once
// Random attention calls for property tests of the engine: structural ids that grow
// monotonically along the sequence (sections, paragraphs, sentences, segments, packed
// documents) over random section trees, a small vocabulary so tokens repeat, key padding,
// prefix slots, causal calls with a query offset, Lq != Lk (self-attention over a window of
// the keys, or cross-attention), lengths that are not multiples of a tile, and random
// mask expressions, relations and fixed heads.
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "strata/attn/attention_call.h"
#include "strata/doc/layout.h"

namespace strata::attn::test {

struct RandomCallOptions {
  std::int64_t max_batch = 2, max_heads = 3, max_len = 40, max_prefix = 5, head_dim = 4;
  bool relations = true;    // a random bias relation and table
  bool fixed_heads = true;  // some heads with a fixed pattern
  bool dense_bias = true;   // sometimes a dense bias
};

// Owns everything `call` points to; not copyable, since the call holds pointers into it.
struct RandomCall {
  TokenLayout query_layout, key_layout;
  LayerSpec spec;
  AttentionCall call;
  RandomCall() = default;
  RandomCall(const RandomCall&) = delete;
  RandomCall& operator=(const RandomCall&) = delete;
};

inline std::int64_t uniform(std::mt19937& rng, std::int64_t lo, std::int64_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
inline bool coin(std::mt19937& rng, double p = 0.5) { return std::bernoulli_distribution(p)(rng); }

// A section tree of `sections` nodes in pre-order: each node's parent is the previous node
// or one of its ancestors.
inline SectionTree random_tree(std::mt19937& rng, int sections) {
  SectionTree tree;
  tree.parent = {-1};
  tree.depth = {0};
  for (int s = 1; s < sections; ++s) {
    std::vector<int> chain;
    for (int a = s - 1; a >= 0; a = tree.parent[a]) chain.push_back(a);
    const int parent = chain[uniform(rng, 0, static_cast<std::int64_t>(chain.size()) - 1)];
    tree.parent.push_back(parent);
    tree.depth.push_back(tree.depth[parent] + 1);
  }
  tree.heading.assign(sections, "");
  return tree;
}

// [B, L] ids over the given trees; positions from real[b] on are padding, with the ids
// batch_layouts gives padding.
inline TokenLayout random_layout(std::mt19937& rng, const std::vector<SectionTree>& trees,
                                 std::int64_t length, const std::vector<std::int64_t>& real) {
  const std::int64_t batch = static_cast<std::int64_t>(trees.size());
  std::int64_t max_sections = 1;
  for (const SectionTree& t : trees) max_sections = std::max<std::int64_t>(max_sections, t.size());
  auto make = [&] { return torch::zeros({batch, length}, torch::kInt32); };
  TokenLayout t{make(),
                make(),
                make(),
                make(),
                make(),
                make(),
                make(),
                torch::zeros({batch, max_sections, max_sections}, torch::kInt32),
                torch::zeros({batch, max_sections, max_sections}, torch::kInt32),
                torch::zeros({batch, max_sections}, torch::kInt32)};
  const int segments = static_cast<int>(uniform(rng, 1, 3));
  const int vocab = static_cast<int>(uniform(rng, 2, 8));
  for (std::int64_t b = 0; b < batch; ++b) {
    std::int32_t* section = t.section[b].data_ptr<std::int32_t>();
    std::int32_t* paragraph = t.paragraph[b].data_ptr<std::int32_t>();
    std::int32_t* sentence = t.sentence[b].data_ptr<std::int32_t>();
    std::int32_t* segment = t.segment[b].data_ptr<std::int32_t>();
    std::int32_t* document = t.document[b].data_ptr<std::int32_t>();
    std::int32_t* token = t.token[b].data_ptr<std::int32_t>();
    std::int32_t* repeated = t.repeated[b].data_ptr<std::int32_t>();
    const int sections = trees[b].size();
    std::int32_t sec = 0, par = 0, sen = 0, doc = 0;
    for (std::int64_t p = 0; p < length; ++p) {
      if (p >= real[b]) {
        section[p] = 0;
        paragraph[p] = sentence[p] = -1;
        segment[p] = p > 0 ? segment[p - 1] : 0;
        document[p] = doc;
        token[p] = -1;
        continue;
      }
      if (p > 0) {
        if (coin(rng, 0.04)) ++doc;
        if (coin(rng, 0.12)) sec = std::min(sec + 1, sections - 1);
        if (coin(rng, 0.15)) ++par;
        if (coin(rng, 0.3)) ++sen;
      }
      section[p] = sec;
      paragraph[p] = par;
      sentence[p] = sen;
      segment[p] =
          even_segment(static_cast<std::size_t>(p), static_cast<std::size_t>(real[b]), segments);
      document[p] = doc;
      token[p] = static_cast<std::int32_t>(uniform(rng, 0, vocab - 1));
    }
    for (std::int64_t p = 0; p < real[b]; ++p)
      for (std::int64_t o = 0; o < real[b]; ++o)
        if (o != p && token[o] == token[p] && document[o] == document[p]) repeated[p] = 1;
    std::int32_t* path = t.path_len[b].data_ptr<std::int32_t>();
    std::int32_t* level = t.lvl_diff[b].data_ptr<std::int32_t>();
    std::int32_t* depth = t.section_depth[b].data_ptr<std::int32_t>();
    for (int x = 0; x < sections; ++x) {
      depth[x] = trees[b].depth[x];
      for (int y = 0; y < sections; ++y) {
        path[x * max_sections + y] = trees[b].path_len(x, y);
        level[x * max_sections + y] = trees[b].lvl_diff(x, y);
      }
    }
  }
  return t;
}

inline Mask random_mask(std::mt19937& rng, int depth) {
  if (depth == 0 || coin(rng, 0.45)) {
    switch (uniform(rng, 0, 12)) {
      case 0: return Mask::all();
      case 1: return Mask::causal();
      case 2: return Mask::window(uniform(rng, 0, 6), uniform(rng, 0, 6));
      case 3: return Mask::global(uniform(rng, 0, 3));
      case 4: return Mask::of(MaskKind::SameSentence);
      case 5: return Mask::of(MaskKind::SameParagraph);
      case 6: return Mask::of(MaskKind::SameSection);
      case 7: return Mask::of(MaskKind::SameSegment);
      case 8: return Mask::of(MaskKind::SameDocument);
      case 9: return Mask::of(MaskKind::MatchingToken);
      case 10: return Mask::blocks(uniform(rng, 1, 8), uniform(rng, 0, 2));
      case 11: return Mask::query_segment(uniform(rng, 0, 2));
      default: return Mask::of(MaskKind::PrefixBlock);
    }
  }
  switch (uniform(rng, 0, 2)) {
    case 0: return random_mask(rng, depth - 1) && random_mask(rng, depth - 1);
    case 1: return random_mask(rng, depth - 1) || random_mask(rng, depth - 1);
    default: return !random_mask(rng, depth - 1);
  }
}

inline std::unique_ptr<RandomCall> random_call(std::mt19937& rng,
                                               const RandomCallOptions& options = {}) {
  auto r = std::make_unique<RandomCall>();
  const std::int64_t batch = uniform(rng, 1, options.max_batch);
  const std::int64_t heads = uniform(rng, 1, options.max_heads);
  const std::int64_t lk = uniform(rng, 1, options.max_len);
  const std::int64_t prefix = coin(rng) ? uniform(rng, 1, options.max_prefix) : 0;
  AttentionCall& call = r->call;

  std::vector<SectionTree> trees;
  for (std::int64_t b = 0; b < batch; ++b)
    trees.push_back(random_tree(rng, static_cast<int>(uniform(rng, 1, 6))));
  std::vector<std::int64_t> real(batch, lk);
  const bool padded = coin(rng);
  if (padded)
    for (auto& n : real) n = uniform(rng, 0, lk);
  r->key_layout = random_layout(rng, trees, lk, real);
  std::int64_t lq;
  if (coin(rng)) {  // self-attention over keys [offset, offset + Lq), as when decoding
    lq = uniform(rng, 1, lk);
    call.query_offset = uniform(rng, 0, lk - lq);
    const TokenLayout& k = r->key_layout;
    auto rows = [&](const at::Tensor& t) {
      return t.narrow(1, call.query_offset, lq).contiguous();
    };
    r->query_layout = TokenLayout{rows(k.section),  rows(k.paragraph), rows(k.sentence),
                                  rows(k.segment),  rows(k.document),  rows(k.token),
                                  rows(k.repeated), k.path_len,        k.lvl_diff,
                                  k.section_depth};
  } else {  // cross-attention over the same section trees
    lq = uniform(rng, 1, options.max_len);
    call.query_offset = uniform(rng, 0, 4);
    r->query_layout = random_layout(rng, trees, lq, std::vector<std::int64_t>(batch, lq));
  }
  call.causal = coin(rng);
  if (padded) {
    call.key_padding = torch::zeros({batch, lk}, torch::kBool);
    for (std::int64_t b = 0; b < batch; ++b) call.key_padding[b].narrow(0, 0, real[b]).fill_(true);
  }
  call.prefix_len = prefix;
  call.prefix_segment = torch::empty({prefix}, torch::kInt32);
  for (std::int64_t p = 0; p < prefix; ++p)
    call.prefix_segment[p] = static_cast<std::int32_t>(uniform(rng, 0, 2));

  LayerSpec& spec = r->spec;
  spec.heads.clear();
  const std::int64_t specs = coin(rng) ? 1 : heads;
  for (std::int64_t h = 0; h < specs; ++h) {
    HeadSpec head;
    head.mask = random_mask(rng, 2);
    if (options.fixed_heads && coin(rng, 0.15))
      head.fixed = coin(rng) ? FixedPattern::PreviousToken : FixedPattern::NextToken;
    spec.heads.push_back(head);
  }
  if (options.relations) {
    switch (uniform(rng, 0, 5)) {
      case 1: spec.bias = {.kind = RelationKind::Hibrids, .max_path = 2, .max_level = 1}; break;
      case 2: spec.bias = {.kind = RelationKind::T5Buckets, .buckets = 8, .max_distance = 12}; break;
      case 3:
        spec.bias = {.kind = RelationKind::SectionDistance, .buckets = 4, .max_distance = 3};
        break;
      case 4: spec.bias = {.kind = RelationKind::HibridsSelected}; break;
      case 5:  // one of seed 001's ablations (Table 4)
        spec.bias = {.kind = RelationKind::Hibrids, .max_path = 2, .max_level = 1,
                     .path = coin(rng), .level = coin(rng), .asymmetric = coin(rng)};
        break;
      default: break;
    }
    if (spec.bias.kind != RelationKind::None)
      call.bias_table = torch::randn({heads, relation_count(spec.bias)});
  }
  if (options.dense_bias && coin(rng, 0.3)) {
    spec.dense_bias = true;
    call.dense_bias = torch::randn({coin(rng) ? batch : 1, coin(rng) ? heads : 1, lq, prefix + lk});
  }
  call.q = torch::randn({batch, heads, lq, options.head_dim});
  call.k = torch::randn({batch, heads, prefix + lk, options.head_dim});
  call.v = torch::randn({batch, heads, prefix + lk, options.head_dim});
  call.spec = &r->spec;
  call.query_layout = &r->query_layout;
  call.key_layout = &r->key_layout;
  return r;
}

}  // namespace strata::attn::test
