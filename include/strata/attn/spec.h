#pragma once
// Attention specifications: which key a query may see (a mask expression), how much it
// should prefer it (a learned bias table indexed by a relation between the two tokens, or a
// dense bias from another module), how scores become weights (a normaliser), or a fixed
// pattern that replaces the scores. Specs are plain data: built by recipes, read from JSON,
// printed back. Every seed technique is one of these handed to the engine (DESIGN.md).
//
// Conventions, for query i and key n of one (batch item, head):
// - The key axis is P prefix slots (n < P) then the keys proper (j = n - P).
// - Index-based predicates (causal, window, global) use i' = i + query_offset, so they mean
//   the same during cached decoding; j is the key's index among the keys proper.
// - Every predicate except prefix_block is true on prefix slots (prefixes are visible unless
//   blocked); prefix_block is true on the keys proper. NOT negates as written, so `!causal`
//   hides prefix slots too.
// - The call's own padding and causal flag are ANDed on top; padding covers keys proper only.
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata::attn {

enum class MaskKind {
  All,            // every pair
  Causal,         // j <= i'
  Window,         // i' - left <= j <= i' + right
  Global,         // i' < count or j < count: the first `count` tokens see and are seen by all
  Blocks,         // j's block of `count` positions is i''s or one of the `left` blocks before it
  SameSentence,   // equal sentence ids
  SameParagraph,  // equal paragraph ids
  SameSection,    // equal section ids
  SameSegment,    // equal segment ids
  SameDocument,   // equal document ids (packed sequences)
  MatchingToken,  // token(i) == token(j), or token(i) occurs once in its document (seed 003 Eq. 4)
  PrefixBlock,    // prefix slot n's segment equals the query's segment (seed 000 §4.1)
  QuerySegment,   // the query's segment id is `count`, whatever the key (a part that reads all)
  And,
  Or,
  Not,
};

struct Mask {
  MaskKind kind = MaskKind::All;
  std::int64_t left = 0, right = 0;  // Window: positions before and after; Blocks: blocks before
  std::int64_t count = 0;            // Global: the first positions; Blocks: the block length;
                                     // QuerySegment: the segment id
  std::vector<Mask> operands;        // And, Or (two or more), Not (one)

  static Mask all() { return {}; }
  static Mask causal() { return of(MaskKind::Causal); }
  static Mask window(std::int64_t left, std::int64_t right);
  static Mask global(std::int64_t count);
  // The query's block of `length` positions and the `before` blocks before it (the
  // Block-State Transformer's SLIDE attention is blocks(W, 1) & causal).
  static Mask blocks(std::int64_t length, std::int64_t before);
  // True for every key of a query in segment `id`: with a local window, a document's part
  // that reads everything before it (the TLM's summary, ch. 2) while the rest reads locally.
  static Mask query_segment(std::int64_t id);
  static Mask of(MaskKind kind);  // a primitive without parameters

  bool operator==(const Mask&) const = default;
};

Mask operator&&(Mask a, Mask b);
Mask operator||(Mask a, Mask b);
Mask operator!(Mask a);

// The expression syntax, e.g. "window(64,64) | global(1)", "same_section & !causal",
// "prefix_block & (same_sentence | matching_token)", "causal & (window(128,0) | query_segment(2))".
// `&` binds tighter than `|`; `!` tighter than both. Names: all causal window(L,R) global(N)
// blocks(W,B) same_sentence same_paragraph same_section same_segment same_document
// matching_token prefix_block query_segment(S).
// strata::Error naming the position and the known names on a syntax error.
Mask parse_mask(std::string_view text);
std::string to_string(const Mask& mask);  // parse_mask(to_string(m)) == m

// A fixed pattern replaces the scores: each query puts all its weight on one key (seed 003
// Eq. 6). A row whose key does not exist, is padding, or is hidden by the call's causal flag
// gives zeros. The head's mask and the layer's biases are ignored.
enum class FixedPattern { None, PreviousToken, NextToken };

// The relation that indexes a layer's learned bias table [H, relation_count].
enum class RelationKind {
  None,
  // HIBRIDS (seed 001 Eq. 1-2): (PathLen, LvlDiff) between the tokens' sections, each
  // clamped to [-max, max]; id = (path + max_path) * (2 * max_level + 1) + level + max_level.
  // The ablations of seed 001 Table 4 drop a coordinate (path = false or level = false: that
  // coordinate is taken as 0 and has one value) or the sign of PathLen (asymmetric = false:
  // |PathLen| in [0, max_path]); tree_relation_id gives the general formula.
  Hibrids,
  // HIBRIDS_S (seed 001 §3.2): only the salient relations between sections get entries of
  // their own, the rest share entry 0; SelectedRelation lists them.
  HibridsSelected,
  // T5 relative-position buckets of j - i' (bidirectional: half the buckets per direction,
  // half of those exact, the rest logarithmic up to max_distance).
  T5Buckets,
  // The same bucketing applied to section index difference (key's minus query's).
  SectionDistance,
};

struct Relation {
  RelationKind kind = RelationKind::None;
  std::int64_t max_path = 4, max_level = 2;       // Hibrids
  bool path = true, level = true, asymmetric = true;  // Hibrids ablations (seed 001 Table 4)
  std::int64_t buckets = 32, max_distance = 128;  // T5Buckets, SectionDistance
  bool bidirectional = true;  // T5Buckets, SectionDistance: false = T5's decoder (d <= 0 only)
  bool operator==(const Relation&) const = default;
};

std::int64_t relation_count(const Relation& relation);  // 0 for None
// "hibrids", "hibrids_selected", "t5_buckets", "section_distance" ("none" for None): the JSON
// and printed names.
std::string_view relation_name(RelationKind kind);
// Hibrids and HibridsSelected: relations between sections of the document tree.
bool is_tree_relation(RelationKind kind);

// HibridsSelected's entries, first match wins in this order (x = the query's section, y = the
// key's). Every relation is directed: "parent" means y is x's parent.
enum class SelectedRelation : std::int32_t {
  Other = 0,          // every pair below does not cover: one shared entry
  Self,               // x == y
  Parent,             // y is x's parent
  Child,              // y is x's child
  Ancestor,           // y is an ancestor of x, not its parent
  Descendant,         // y is a descendant of x, not its child
  PrecedingSibling,   // same parent, y before x
  FollowingSibling,   // same parent, y after x
  PreviousInText,     // y is the section just before x in document order
  NextInText,         // y is the section just after x
  SameTopLevel,       // x and y lie in the same top-level section (their common ancestor is
                      // not the document root)
};
inline constexpr std::int32_t kSelectedRelations = 11;
std::string_view selected_relation_name(SelectedRelation relation);  // "parent", ...

// What a tree relation reads about a pair of sections (query's x, key's y).
struct SectionPair {
  std::int64_t path_len = 0;     // signed PathLen(x, y) (doc/layout.h)
  std::int64_t lvl_diff = 0;     // depth(y) - depth(x)
  std::int64_t query_depth = 0;  // depth(x); the root is 0
  std::int64_t order_diff = 0;   // y - x as section indices in document order
};

SelectedRelation selected_relation(const SectionPair& pair);
// The bias-table id of a tree relation for the pair: Hibrids
//   id = P * L_count + L, with P = path ? (asymmetric ? clamp(PathLen) + max_path
//   : min(|PathLen|, max_path)) : 0 and L = level ? clamp(LvlDiff) + max_level : 0;
// HibridsSelected: the SelectedRelation's value.
std::int32_t tree_relation_id(const Relation& relation, const SectionPair& pair);
// True when a Hibrids table is too small for the pair, which then shares the entry at the
// table's edge (PathLen or LvlDiff clamped). Always false for other kinds.
bool tree_relation_clamped(const Relation& relation, const SectionPair& pair);

enum class NormaliserKind {
  Softmax,
  // softmax((s + g) / tau) with Gumbel noise g = -log(-log(u)) while training, softmax(s / tau)
  // otherwise (seed 000 Eq. 3). u comes from a counter-based generator keyed by the call's
  // seed and (b, h, i, n), so backward regenerates the same noise.
  Gumbel,
  // Top-p truncation over the key-impact vector (seed 000 Eq. 2): with A = softmax(s) over
  // the visible keys, impact[n] = sum over queries i of A[i][n], normalised to sum 1; keep the
  // fewest keys with the largest impact whose impact sums to at least p (ties: lower n
  // first); the output weights are A[i][n] * keep[n], not renormalised. keep is a constant
  // for the gradient. Computed per (batch item, head) over the call's real queries: padded
  // ones (AttentionCall::query_padding) do not vote.
  TopP,
};

struct Normaliser {
  NormaliserKind kind = NormaliserKind::Softmax;
  double tau = 1.0;  // Gumbel temperature
  double p = 1.0;    // TopP mass
  bool operator==(const Normaliser&) const = default;
};

struct HeadSpec {
  Mask mask;
  FixedPattern fixed = FixedPattern::None;
  Normaliser normaliser;
  bool operator==(const HeadSpec&) const = default;
};

// One layer's attention: per-head specs (one entry = every head), one relation for the
// layer's bias table (each head has its own row), and whether a dense bias is added.
struct LayerSpec {
  std::vector<HeadSpec> heads{HeadSpec{}};
  Relation bias;
  bool dense_bias = false;

  const HeadSpec& head(std::int64_t h) const { return heads.size() == 1 ? heads[0] : heads.at(h); }
  // True when no head restricts anything: every head is All + Softmax, no bias.
  bool is_plain() const;
  // True when the spec may read the tokens' layout beyond the query's segment under
  // prefix_block, which a model derives itself (seed 000's uniform split of the input): a
  // mask that compares layout fields (index-based all, causal, window, global and blocks do
  // not), a fixed pattern, or a bias other than T5's position buckets.
  bool reads_layout() const;
  bool operator==(const LayerSpec&) const = default;
};

// N of the spec's global(N) masks (the largest over its heads): the leading tokens that see
// and are seen by all; 0 without one.
std::int64_t global_tokens(const LayerSpec& spec);

// strata::Error naming the parameter when the spec cannot be run: window(L,R) needs L, R >= 0
// and global(N) N >= 0; And/Or need two or more operands and Not one; Gumbel needs tau > 0 and
// TopP 0 < p <= 1; Hibrids needs max_path, max_level >= 0; the bucketed relations need an
// even buckets >= 4 and max_distance > buckets / 4; there is at least one head spec.
void validate(const LayerSpec& spec);

// JSON form: {"heads": [{"mask": "window(64,64) | global(1)", "fixed": "previous_token",
// "normaliser": {"kind": "gumbel", "tau": 0.5}}], "bias": {"kind": "hibrids", "max_path": 4,
// "max_level": 2}, "dense_bias": false}. Missing keys take the defaults; unknown keys are an
// error naming the key and the closest known one.
LayerSpec layer_spec_from_json(const nlohmann::json& json);
nlohmann::json to_json(const LayerSpec& spec);
// A spec list: one LayerSpec object, or an array of them (errors name the layer).
std::vector<LayerSpec> layer_specs_from_json(const nlohmann::json& json);
// The "bias" object alone; `where` prefixes key names in errors ("bias.").
Relation relation_from_json(const nlohmann::json& json, const std::string& where = "");
nlohmann::json to_json(const Relation& relation);
std::string to_string(const LayerSpec& spec);  // one line per head, for printouts

}  // namespace strata::attn
