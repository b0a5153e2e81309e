#pragma once
// Question-summary (QS) hierarchies (seed 001 §4): a forest of QS pairs under a dummy root,
// where each child pair asks about and summarises details of its parent. This file has the
// tree, its linearisation for a sequential decoder (§5.1, Task I), the robust inverse that
// reads model output back, the hierarchy F1 of §5.2, and the JSONL reader of annotated data.
//
// Linearisation: the pairs in depth-first order, each written "question summary"; before
// every pair except the first, level tokens for the change of depth from the previous pair:
// "[L↑]" one level deeper (the only increase depth-first order allows), "[L↓]" once per
// level shallower, "[L-]" for the same level. Tokens and texts are separated by one space:
//   Q1? A1 [L↑] Q1.1? A1.1 [L-] Q1.2? A1.2 [L↑] Q1.2.1? A1.2.1 [L↓] [L↓] Q2? A2
//
// Hierarchy F1 (§5.2, after labelled attachment score). Summaries are compared with
// s(a, b) = ROUGE-1 F + ROUGE-2 F (rouge.h, Porter stemming on), a value in [0, 2].
//  1. Each generated pair g maps to m(g) = the reference pair r maximising s(g, r) over
//     their summaries (the lowest reference index on ties); best(g) = s(g, m(g)).
//  2. Edges are parent-child pairs of the hierarchy; those from the dummy root to the top
//     level are not counted. A generated edge (p, c) matches when m(p) is a proper ancestor
//     of m(c) in the reference (its parent or higher; m(p) == m(c) does not match).
//  3. A matched edge weighs w(p, c) = (best(p) + best(c)) / 4, in [0, 1] (the seed's sum of
//     ROUGE-1 and ROUGE-2 over both summaries, divided by its maximum 4).
//  4. P = sum of w over matched generated edges / generated edges,
//     R = the same sum / reference edges, F1 = 2PR / (P + R).
//     P is 0 when the generated hierarchy has no edge, R is 0 when the reference has none,
//     F1 is 0 when P + R = 0; so a pair of flat hierarchies scores 0.
// A corpus scores the mean of the per-example P, R and F1 (macro average; F1 is averaged,
// not recomputed from mean P and R).
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/doc/document.h"

namespace strata {

// The deepest hierarchy parse_hierarchy() builds and load_qs_hierarchies() accepts.
inline constexpr int kMaxQsDepth = 100;

struct QsNode {
  std::string question;  // e.g. "What incited the appropriation process?"; may be empty
  std::string summary;
  std::vector<QsNode> children;

  bool operator==(const QsNode&) const = default;
};

// A forest: `roots` are the children of the dummy root.
struct QsHierarchy {
  std::vector<QsNode> roots;

  std::size_t size() const;   // number of QS pairs
  std::size_t edges() const;  // parent-child edges, not counting the dummy root's
  bool operator==(const QsHierarchy&) const = default;
};

// A hierarchy's pairs in depth-first order; parent[i] < i is the index of pair i's parent,
// -1 for a top-level pair; depth[i] is 0 at the top level.
struct FlatQs {
  std::vector<std::string> question;
  std::vector<std::string> summary;
  std::vector<int> parent;
  std::vector<int> depth;

  std::size_t size() const { return parent.size(); }
};

FlatQs flatten(const QsHierarchy& hierarchy);
// The inverse of flatten(); `depth` is not read. Requires parent[i] < i (as flatten gives).
QsHierarchy unflatten(const FlatQs& flat);

// The level tokens; the defaults are the tokenizer's structural markers (tokenizer.h,
// SpecialTokens::default_structural), which it keeps whole.
struct LevelTokens {
  std::string deeper = "[L↑]";
  std::string shallower = "[L↓]";
  std::string same = "[L-]";
};

// The linearised text (see the top of this file). Question and summary are trimmed; an empty
// one is left out with its space.
std::string linearize(const QsHierarchy& hierarchy, const LevelTokens& tokens = {});

// What parse_hierarchy() had to repair in a text that linearize() could not have written.
struct QsParseRepairs {
  std::size_t leading_tokens = 0;     // level tokens before the first pair (ignored)
  std::size_t clamped_deeper = 0;     // "[L↑]" past one level below the previous pair
  std::size_t clamped_shallower = 0;  // "[L↓]" above the top level
  // Level tokens followed by no text (blank between two "[L↓]" excepted: that is how
  // linearize() writes several levels up); the announced pair is dropped.
  std::size_t empty_pairs = 0;
  // Not a repair: pairs with no '?', read as a summary without a question (the seed's
  // Task I output starts with the answer to a given root question).
  std::size_t pairs_without_question = 0;

  // True when any of the repairs above (not pairs_without_question) happened.
  bool any() const;
};

// The inverse of linearize() for model output: never throws on any text and returns the
// best tree it can read.
// - The text is split at level tokens (found anywhere, spaces around them optional); each
//   piece between tokens is one pair: its question is the text up to and including the
//   first '?', its summary the rest, both trimmed; without '?' the whole piece is the
//   summary. Blank pieces are dropped and the tokens before them carry over to the next
//   pair ("A [L↑] [L-] B" puts B one level below A).
// - The first pair is at the top level; tokens before it are ignored.
// - Tokens move a cursor from the previous pair's depth: "[L↑]" one deeper but never past
//   the previous pair's depth + 1, "[L↓]" one shallower but never above the top level,
//   "[L-]" nowhere. The next pair goes at the cursor, under the last pair one level up.
// - Depth is capped at kMaxQsDepth levels ("[L↑]" beyond is clamped), so that no text,
//   however long, builds a tree too deep to walk.
// parse_hierarchy(linearize(h)) == h when every non-empty question ends with its only '?',
// no summary has a '?', no text holds a level token or surrounding spaces, every pair has a
// non-empty question or summary, and h is at most kMaxQsDepth deep. `repairs`, when given,
// is overwritten.
// Throws strata::Error only for unusable tokens (an empty or repeated token string).
QsHierarchy parse_hierarchy(std::string_view text, const LevelTokens& tokens = {},
                            QsParseRepairs* repairs = nullptr);

struct HierarchyF1 {
  double precision = 0;
  double recall = 0;
  double f1 = 0;
  std::size_t generated_edges = 0;
  std::size_t reference_edges = 0;
  std::size_t matched_edges = 0;
};

// The hierarchy F1 of one generated hierarchy against its reference (top of this file).
HierarchyF1 hierarchy_f1(const QsHierarchy& generated, const QsHierarchy& reference);

// The hierarchy's questions (non-empty ones, depth-first, joined by spaces) and summaries
// (depth-first, one per line): what question BLEU and summary ROUGE (Table 1) read.
std::string questions_text(const QsHierarchy& hierarchy);
std::string summaries_text(const QsHierarchy& hierarchy);

// The corpus score: mean precision, recall and f1 over `examples` and summed edge counts;
// all zero for no examples.
HierarchyF1 mean_hierarchy_f1(std::span<const HierarchyF1> examples);

// One annotated example of a JSONL file (docs/formats.md, "Question-summary hierarchies").
struct QsExample {
  std::string id;     // the line's "id" (string or integer), else "FILE:LINE"
  Document document;  // the input (its id and summary are not used)
  QsHierarchy hierarchy;
};

// Reads a file of lines {"id": ..., "document": ..., "hierarchy": [node, ...]} with
// node = {"question": "...", "summary": "...", "children": [node, ...] (optional)}.
// "document" is a plain string (GovReport-QS's shape: paragraphs split as flat_document()
// splits them) or a strata native document object, whose sections give the input its tree.
// Throws strata::Error "FILE:LINE: field 'hierarchy[0].children[1].summary': expected a
// string, got number" for a missing field, a wrong type, or an unknown field in a node;
// errors inside a native document name the path inside it ('sections[1].heading').
std::vector<QsExample> load_qs_hierarchies(const std::filesystem::path& path);

// The hierarchy as the JSONL format's "hierarchy" array: [{question, summary, children?}, ...].
nlohmann::ordered_json hierarchy_json(const QsHierarchy& hierarchy);

// The JSON line load_qs_hierarchies() reads back to `example`: the document as a string
// when it has no title and no sections, else as a native object.
nlohmann::ordered_json qs_example_json(const QsExample& example);

}  // namespace strata
