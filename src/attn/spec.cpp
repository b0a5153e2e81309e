#include "strata/attn/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/core/edit_distance.h"
#include "strata/core/error.h"

namespace strata::attn {

namespace {

struct PrimitiveName {
  MaskKind kind;
  std::string_view name;
};
// Parameterised primitives (window, global, blocks, query_segment) print their parameters
// after the name.
constexpr PrimitiveName kPrimitives[] = {
    {MaskKind::All, "all"},
    {MaskKind::Causal, "causal"},
    {MaskKind::Window, "window"},
    {MaskKind::Global, "global"},
    {MaskKind::Blocks, "blocks"},
    {MaskKind::SameSentence, "same_sentence"},
    {MaskKind::SameParagraph, "same_paragraph"},
    {MaskKind::SameSection, "same_section"},
    {MaskKind::SameSegment, "same_segment"},
    {MaskKind::SameDocument, "same_document"},
    {MaskKind::MatchingToken, "matching_token"},
    {MaskKind::PrefixBlock, "prefix_block"},
    {MaskKind::QuerySegment, "query_segment"},
};

std::string_view primitive_name(MaskKind kind) {
  for (const PrimitiveName& p : kPrimitives)
    if (p.kind == kind) return p.name;
  return "?";
}

// Names of the other enumerations in JSON and printouts, in declaration order.
template <class Enum>
struct Named {
  Enum value;
  std::string_view name;
};
constexpr Named<FixedPattern> kFixedNames[] = {{FixedPattern::None, "none"},
                                               {FixedPattern::PreviousToken, "previous_token"},
                                               {FixedPattern::NextToken, "next_token"}};
constexpr Named<NormaliserKind> kNormaliserNames[] = {{NormaliserKind::Softmax, "softmax"},
                                                      {NormaliserKind::Gumbel, "gumbel"},
                                                      {NormaliserKind::TopP, "top_p"}};
constexpr Named<RelationKind> kRelationNames[] = {
    {RelationKind::None, "none"},
    {RelationKind::Hibrids, "hibrids"},
    {RelationKind::HibridsSelected, "hibrids_selected"},
    {RelationKind::T5Buckets, "t5_buckets"},
    {RelationKind::SectionDistance, "section_distance"}};

template <class Enum, std::size_t N>
std::string_view name_of(const Named<Enum> (&names)[N], Enum value) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

}  // namespace

Mask Mask::window(std::int64_t left, std::int64_t right) {
  Mask m;
  m.kind = MaskKind::Window;
  m.left = left;
  m.right = right;
  return m;
}

Mask Mask::global(std::int64_t count) {
  Mask m;
  m.kind = MaskKind::Global;
  m.count = count;
  return m;
}

Mask Mask::blocks(std::int64_t length, std::int64_t before) {
  Mask m;
  m.kind = MaskKind::Blocks;
  m.count = length;
  m.left = before;
  return m;
}

Mask Mask::query_segment(std::int64_t id) {
  Mask m;
  m.kind = MaskKind::QuerySegment;
  m.count = id;
  return m;
}

Mask Mask::of(MaskKind kind) {
  if (kind == MaskKind::Window || kind == MaskKind::Global || kind == MaskKind::Blocks ||
      kind == MaskKind::QuerySegment || kind == MaskKind::And || kind == MaskKind::Or || kind == MaskKind::Not)
    throw Error(
        "Mask::of takes a primitive without parameters; use Mask::window, Mask::global, "
        "Mask::blocks, Mask::query_segment or the operators &&, ||, ! for this kind");
  Mask m;
  m.kind = kind;
  return m;
}

namespace {
// a && b && c is one And with three operands, as parse_mask reads "a & b & c".
Mask combine(MaskKind kind, Mask a, Mask b) {
  Mask m;
  m.kind = kind;
  for (Mask* side : {&a, &b}) {
    if (side->kind == kind)
      for (Mask& operand : side->operands) m.operands.push_back(std::move(operand));
    else
      m.operands.push_back(std::move(*side));
  }
  return m;
}
}  // namespace

Mask operator&&(Mask a, Mask b) { return combine(MaskKind::And, std::move(a), std::move(b)); }
Mask operator||(Mask a, Mask b) { return combine(MaskKind::Or, std::move(a), std::move(b)); }

Mask operator!(Mask a) {
  Mask m;
  m.kind = MaskKind::Not;
  m.operands.push_back(std::move(a));
  return m;
}

namespace {
std::int64_t global_tokens(const Mask& mask) {
  std::int64_t count = mask.kind == MaskKind::Global ? mask.count : 0;
  for (const Mask& operand : mask.operands) count = std::max(count, global_tokens(operand));
  return count;
}
}  // namespace

std::int64_t global_tokens(const LayerSpec& spec) {
  std::int64_t count = 0;
  for (const HeadSpec& head : spec.heads) count = std::max(count, global_tokens(head.mask));
  return count;
}

std::int64_t relation_count(const Relation& relation) {
  switch (relation.kind) {
    case RelationKind::None: return 0;
    case RelationKind::Hibrids: {
      const std::int64_t paths =
          !relation.path ? 1 : relation.asymmetric ? 2 * relation.max_path + 1 : relation.max_path + 1;
      return paths * (relation.level ? 2 * relation.max_level + 1 : 1);
    }
    case RelationKind::HibridsSelected: return kSelectedRelations;
    case RelationKind::T5Buckets:
    case RelationKind::SectionDistance: return relation.buckets;
  }
  return 0;
}

bool is_tree_relation(RelationKind kind) {
  return kind == RelationKind::Hibrids || kind == RelationKind::HibridsSelected;
}

std::string_view selected_relation_name(SelectedRelation relation) {
  static constexpr std::string_view names[kSelectedRelations] = {
      "other",     "self",          "parent",     "child",
      "ancestor",  "descendant",    "preceding_sibling", "following_sibling",
      "previous_in_text", "next_in_text", "same_top_level"};
  return names[static_cast<std::int32_t>(relation)];
}

SelectedRelation selected_relation(const SectionPair& pair) {
  const std::int64_t p = pair.path_len, d = pair.lvl_diff, length = std::abs(p);
  // The path climbs `up` edges from x to the common ancestor, then descends to y.
  const std::int64_t up = (length - d) / 2;
  if (length == 0) return SelectedRelation::Self;
  if (length == 1) return d < 0 ? SelectedRelation::Parent : SelectedRelation::Child;
  if (length == -d) return SelectedRelation::Ancestor;
  if (length == d) return SelectedRelation::Descendant;
  if (length == 2 && d == 0)
    return p < 0 ? SelectedRelation::PrecedingSibling : SelectedRelation::FollowingSibling;
  if (pair.order_diff == -1) return SelectedRelation::PreviousInText;
  if (pair.order_diff == 1) return SelectedRelation::NextInText;
  if (pair.query_depth - up >= 1) return SelectedRelation::SameTopLevel;
  return SelectedRelation::Other;
}

std::int32_t tree_relation_id(const Relation& r, const SectionPair& pair) {
  if (r.kind == RelationKind::HibridsSelected)
    return static_cast<std::int32_t>(selected_relation(pair));
  std::int64_t path = 0, level = 0;
  if (r.path)
    path = r.asymmetric ? std::clamp(pair.path_len, -r.max_path, r.max_path) + r.max_path
                        : std::min(std::abs(pair.path_len), r.max_path);
  if (r.level) level = std::clamp(pair.lvl_diff, -r.max_level, r.max_level) + r.max_level;
  return static_cast<std::int32_t>(path * (r.level ? 2 * r.max_level + 1 : 1) + level);
}

bool tree_relation_clamped(const Relation& r, const SectionPair& pair) {
  if (r.kind != RelationKind::Hibrids) return false;
  return (r.path && std::abs(pair.path_len) > r.max_path) ||
         (r.level && std::abs(pair.lvl_diff) > r.max_level);
}

bool LayerSpec::is_plain() const {
  if (bias.kind != RelationKind::None || dense_bias) return false;
  for (const HeadSpec& head : heads)
    if (head.mask.kind != MaskKind::All || head.fixed != FixedPattern::None ||
        head.normaliser.kind != NormaliserKind::Softmax)
      return false;
  return true;
}

namespace {
// True when the mask reads token indices only (and prefix_block's segments, which the model
// derives): no layout field.
bool index_only(const Mask& mask) {
  switch (mask.kind) {
    case MaskKind::All:
    case MaskKind::Causal:
    case MaskKind::Window:
    case MaskKind::Global:
    case MaskKind::Blocks:
    case MaskKind::PrefixBlock: return true;
    case MaskKind::And:
    case MaskKind::Or:
    case MaskKind::Not:
      for (const Mask& operand : mask.operands)
        if (!index_only(operand)) return false;
      return true;
    default: return false;
  }
}
}  // namespace

bool LayerSpec::reads_layout() const {
  if ((bias.kind != RelationKind::None && bias.kind != RelationKind::T5Buckets) || dense_bias) return true;
  for (const HeadSpec& head : heads)
    if (head.fixed != FixedPattern::None || !index_only(head.mask)) return true;
  return false;
}

namespace {
void append_operand(std::string& text, const Mask& operand, bool group) {
  if (group) text += '(';
  text += to_string(operand);
  if (group) text += ')';
}
}  // namespace

std::string to_string(const Mask& mask) {
  switch (mask.kind) {
    case MaskKind::Window:
      return "window(" + std::to_string(mask.left) + "," + std::to_string(mask.right) + ")";
    case MaskKind::Global: return "global(" + std::to_string(mask.count) + ")";
    case MaskKind::QuerySegment: return "query_segment(" + std::to_string(mask.count) + ")";
    case MaskKind::Blocks: return "blocks(" + std::to_string(mask.count) + "," + std::to_string(mask.left) + ")";
    case MaskKind::And:
    case MaskKind::Or: {
      // An operand of the same operator is parenthesised so that the nesting round-trips;
      // an Or inside an And needs parentheses because & binds tighter.
      std::string text;
      for (const Mask& operand : mask.operands) {
        if (!text.empty()) text += mask.kind == MaskKind::And ? " & " : " | ";
        append_operand(text, operand, operand.kind == mask.kind || operand.kind == MaskKind::Or);
      }
      return text;
    }
    case MaskKind::Not: {
      const Mask& operand = mask.operands.at(0);
      std::string text = "!";
      append_operand(text, operand, operand.kind == MaskKind::And || operand.kind == MaskKind::Or);
      return text;
    }
    default: return std::string(primitive_name(mask.kind));
  }
}

std::string_view relation_name(RelationKind kind) { return name_of(kRelationNames, kind); }

namespace {

void validate(const Mask& mask) {
  const std::size_t n = mask.operands.size();
  switch (mask.kind) {
    case MaskKind::And:
    case MaskKind::Or:
      if (n < 2)
        throw Error("attention mask: " + std::string(mask.kind == MaskKind::And ? "And" : "Or") +
                    " needs two or more operands, got " + std::to_string(n));
      break;
    case MaskKind::Not:
      if (n != 1) throw Error("attention mask: Not needs one operand, got " + std::to_string(n));
      break;
    default:
      if (n != 0)
        throw Error("attention mask: " + std::string(primitive_name(mask.kind)) +
                    " takes no operands, got " + std::to_string(n));
  }
  if (mask.kind == MaskKind::Window && (mask.left < 0 || mask.right < 0))
    throw Error("attention mask " + to_string(mask) + ": window sizes must be >= 0");
  if (mask.kind == MaskKind::Global && mask.count < 0)
    throw Error("attention mask " + to_string(mask) + ": the global count must be >= 0");
  if (mask.kind == MaskKind::QuerySegment && mask.count < 0)
    throw Error("attention mask " + to_string(mask) + ": segment ids are >= 0");
  if (mask.kind == MaskKind::Blocks && (mask.count <= 0 || mask.left < 0))
    throw Error("attention mask " + to_string(mask) + ": blocks(W,B) needs a block length W > 0 and B >= 0 blocks before");
  for (const Mask& operand : mask.operands) validate(operand);
}

}  // namespace

void validate(const LayerSpec& spec) {
  if (spec.heads.empty()) throw Error("attention spec: 'heads' needs at least one head spec");
  for (const HeadSpec& head : spec.heads) {
    validate(head.mask);
    const Normaliser& norm = head.normaliser;
    if (norm.kind == NormaliserKind::Gumbel && !(norm.tau > 0))
      throw Error("attention spec: gumbel 'tau' must be > 0, got " + std::to_string(norm.tau));
    if (norm.kind == NormaliserKind::TopP && !(norm.p > 0 && norm.p <= 1))
      throw Error("attention spec: top_p 'p' must be in (0, 1], got " + std::to_string(norm.p));
  }
  const Relation& bias = spec.bias;
  if (bias.kind == RelationKind::Hibrids && (bias.max_path < 0 || bias.max_level < 0))
    throw Error("attention spec: hibrids 'max_path' and 'max_level' must be >= 0");
  if (bias.kind != RelationKind::Hibrids && (!bias.path || !bias.level || !bias.asymmetric))
    throw Error("attention spec: 'path', 'level' and 'asymmetric' apply to the hibrids bias "
                "only, not to " + std::string(relation_name(bias.kind)));
  if ((bias.kind == RelationKind::T5Buckets || bias.kind == RelationKind::SectionDistance) &&
      (bias.buckets < 4 || bias.buckets % 2 != 0 || bias.max_distance <= bias.buckets / 4))
    throw Error("attention spec: " + std::string(relation_name(bias.kind)) +
                " needs an even 'buckets' >= 4 and 'max_distance' > buckets / 4, got buckets " +
                std::to_string(bias.buckets) + ", max_distance " +
                std::to_string(bias.max_distance));
}

// ---- parse_mask ----------------------------------------------------------------------

namespace {

// Recursive descent over: or := and ('|' and)*; and := unary ('&' unary)*;
// unary := '!' unary | '(' or ')' | name ['(' int {',' int} ')'].
class MaskParser {
 public:
  explicit MaskParser(std::string_view text) : text_(text) {}

  // Deeper than any mask a person writes; the parser recurses per level, so a text of nested
  // parentheses or '!'s must not reach the end of the stack.
  static constexpr int kMaxNesting = 64;

  Mask parse() {
    Mask mask = parse_or();
    skip_space();
    if (at_ < text_.size())
      fail("expected '&', '|' or the end, got '" + std::string(1, text_[at_]) + "'");
    return mask;
  }

 private:
  // One more level of '(' or '!' for as long as it lives.
  struct Nesting {
    explicit Nesting(MaskParser& parser) : parser_(parser) {
      if (++parser_.depth_ > kMaxNesting)
        parser_.fail("nested deeper than " + std::to_string(kMaxNesting) + " levels of '(' and '!'");
    }
    ~Nesting() { --parser_.depth_; }
    MaskParser& parser_;
  };

  Mask parse_or() {
    Mask mask = parse_and();
    if (!peek('|')) return mask;
    Mask any;
    any.kind = MaskKind::Or;
    any.operands.push_back(std::move(mask));
    while (accept('|')) any.operands.push_back(parse_and());
    return any;
  }

  Mask parse_and() {
    Mask mask = parse_unary();
    if (!peek('&')) return mask;
    Mask all;
    all.kind = MaskKind::And;
    all.operands.push_back(std::move(mask));
    while (accept('&')) all.operands.push_back(parse_unary());
    return all;
  }

  Mask parse_unary() {
    if (accept('!')) {
      const Nesting nested(*this);
      return !parse_unary();
    }
    if (accept('(')) {
      const Nesting nested(*this);
      Mask mask = parse_or();
      expect(')');
      return mask;
    }
    skip_space();
    const std::size_t start = at_;
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_'))
      ++at_;
    const std::string name(text_.substr(start, at_ - start));
    if (name.empty()) {
      at_ = start;
      fail(at_ < text_.size()
               ? "expected a mask, '!' or '(', got '" + std::string(1, text_[at_]) + "'"
               : "expected a mask, '!' or '(', got the end");
    }
    for (const PrimitiveName& p : kPrimitives) {
      if (p.name != name) continue;
      if (p.kind == MaskKind::Window || p.kind == MaskKind::Blocks) {  // two parameters
        expect('(');
        const std::int64_t first = number();
        expect(',');
        const std::int64_t second = number();
        expect(')');
        return p.kind == MaskKind::Window ? Mask::window(first, second) : Mask::blocks(first, second);
      }
      if (p.kind == MaskKind::Global || p.kind == MaskKind::QuerySegment) {
        expect('(');
        const std::int64_t count = number();
        expect(')');
        return p.kind == MaskKind::Global ? Mask::global(count) : Mask::query_segment(count);
      }
      if (peek('(')) fail("'" + name + "' takes no parameters");
      return p.kind == MaskKind::All ? Mask::all() : Mask::of(p.kind);
    }
    at_ = start;
    std::vector<std::string> names;
    for (const PrimitiveName& p : kPrimitives) names.emplace_back(p.name);
    const auto suggestion = closest_match(name, names);
    fail("unknown mask '" + name + "'" +
         (suggestion ? ", did you mean '" + *suggestion + "'?" : std::string()));
  }

  std::int64_t number() {
    skip_space();
    const std::size_t start = at_;
    std::int64_t value = 0;
    while (at_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[at_]))) {
      const int digit = text_[at_] - '0';
      if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
        at_ = start;
        fail("number too large");
      }
      value = value * 10 + digit;
      ++at_;
    }
    if (at_ == start) fail("expected a non-negative integer");
    return value;
  }

  void skip_space() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool peek(char c) {
    skip_space();
    return at_ < text_.size() && text_[at_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++at_;
    return true;
  }
  void expect(char c) {
    if (accept(c)) return;
    fail(at_ < text_.size()
             ? "expected '" + std::string(1, c) + "', got '" + std::string(1, text_[at_]) + "'"
             : "expected '" + std::string(1, c) + "', got the end");
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("attention mask \"" + std::string(text_) + "\" at position " +
                std::to_string(at_ + 1) + ": " + what +
                " (masks: all, causal, window(L,R), global(N), blocks(W,B), same_sentence, same_paragraph, "
                "same_section, same_segment, same_document, matching_token, prefix_block; "
                "operators: & | ! and parentheses)");
  }

  std::string_view text_;
  std::size_t at_ = 0;
  int depth_ = 0;
};

}  // namespace

Mask parse_mask(std::string_view text) { return MaskParser(text).parse(); }

// ---- JSON ------------------------------------------------------------------------------

namespace {

using nlohmann::json;

// Reads one JSON object of the spec; `where` is its path for messages ("heads[1].").
class JsonObject {
 public:
  JsonObject(const json& j, std::string where, std::vector<std::string> known)
      : j_(j), where_(std::move(where)) {
    if (!j.is_object())
      throw Error(
          "attention spec: " + (where_.empty() ? std::string("the spec") : "'" + path("") + "'") +
          " must be a JSON object");
    for (const auto& item : j.items()) {
      if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
      const auto suggestion = closest_match(item.key(), known);
      throw Error("attention spec: unknown key '" + path(item.key()) + "'" +
                  (suggestion ? " (did you mean '" + *suggestion + "'?)"
                              : " (known: " + joined(known) + ")"));
    }
  }

  const json* find(const std::string& key) const {
    const auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  std::string path(const std::string& key) const { return where_ + key; }

  void read(const std::string& key, std::int64_t& out) const {
    if (const json* v = find(key)) {
      if (!v->is_number_integer()) throw type_error(key, "an integer");
      out = v->get<std::int64_t>();
    }
  }
  void read(const std::string& key, double& out) const {
    if (const json* v = find(key)) {
      if (!v->is_number()) throw type_error(key, "a number");
      out = v->get<double>();
    }
  }
  void read(const std::string& key, bool& out) const {
    if (const json* v = find(key)) {
      if (!v->is_boolean()) throw type_error(key, "true or false");
      out = v->get<bool>();
    }
  }
  void read(const std::string& key, std::string& out) const {
    if (const json* v = find(key)) {
      if (!v->is_string()) throw type_error(key, "a string");
      out = v->get<std::string>();
    }
  }
  template <class Enum, std::size_t N>
  void read(const std::string& key, Enum& out, const Named<Enum> (&names)[N]) const {
    std::string name(name_of(names, out));
    read(key, name);
    std::vector<std::string> known;
    for (const auto& n : names) {
      known.emplace_back(n.name);
      if (n.name == name) {
        out = n.value;
        return;
      }
    }
    const auto suggestion = closest_match(name, known);
    throw Error("attention spec: '" + path(key) + "' is '" + name + "'" +
                (suggestion ? ", did you mean '" + *suggestion + "'?" : std::string()) +
                " (known: " + joined(known) + ")");
  }

  Error type_error(const std::string& key, const std::string& expected) const {
    return Error("attention spec: '" + path(key) + "' must be " + expected + ", got " +
                 find(key)->dump());
  }

 private:
  const json& j_;
  std::string where_;
};

HeadSpec head_from_json(const json& j, const std::string& where) {
  const JsonObject object(j, where, {"mask", "fixed", "normaliser"});
  HeadSpec head;
  std::string mask = "all";
  object.read("mask", mask);
  try {
    head.mask = parse_mask(mask);
  } catch (const Error& e) {
    throw Error("attention spec: '" + object.path("mask") + "': " + e.what());
  }
  object.read("fixed", head.fixed, kFixedNames);
  if (const json* n = object.find("normaliser")) {
    const JsonObject norm(*n, object.path("normaliser."), {"kind", "tau", "p"});
    norm.read("kind", head.normaliser.kind, kNormaliserNames);
    norm.read("tau", head.normaliser.tau);
    norm.read("p", head.normaliser.p);
  }
  return head;
}

}  // namespace

Relation relation_from_json(const json& j, const std::string& where) {
  const JsonObject bias(j, where,
                        {"kind", "max_path", "max_level", "path", "level", "asymmetric",
                         "buckets", "max_distance", "bidirectional"});
  Relation r;
  bias.read("kind", r.kind, kRelationNames);
  bias.read("max_path", r.max_path);
  bias.read("max_level", r.max_level);
  bias.read("path", r.path);
  bias.read("level", r.level);
  bias.read("asymmetric", r.asymmetric);
  bias.read("buckets", r.buckets);
  bias.read("max_distance", r.max_distance);
  bias.read("bidirectional", r.bidirectional);
  return r;
}

LayerSpec layer_spec_from_json(const json& j) {
  const JsonObject object(j, "", {"heads", "bias", "dense_bias"});
  LayerSpec spec;
  if (const json* heads = object.find("heads")) {
    if (!heads->is_array()) throw object.type_error("heads", "an array of head specs");
    spec.heads.clear();
    for (std::size_t h = 0; h < heads->size(); ++h)
      spec.heads.push_back(head_from_json((*heads)[h], "heads[" + std::to_string(h) + "]."));
  }
  if (const json* b = object.find("bias")) spec.bias = relation_from_json(*b, "bias.");
  object.read("dense_bias", spec.dense_bias);
  validate(spec);
  return spec;
}

std::vector<LayerSpec> layer_specs_from_json(const json& j) {
  if (!j.is_array()) return {layer_spec_from_json(j)};
  std::vector<LayerSpec> specs;
  for (std::size_t i = 0; i < j.size(); ++i) {
    try {
      specs.push_back(layer_spec_from_json(j[i]));
    } catch (const Error& e) {
      throw Error("layer " + std::to_string(i) + ": " + e.what());
    }
  }
  return specs;
}

// Writes the parameters that matter for each kind, and any other that differs from its
// default, so that relation_from_json(to_json(r)) == r.
json to_json(const Relation& r) {
  const Relation defaults;
  json bias = {{"kind", relation_name(r.kind)}};
  const bool tree = r.kind == RelationKind::Hibrids;
  const bool bucketed = r.kind == RelationKind::T5Buckets || r.kind == RelationKind::SectionDistance;
  if (tree || r.max_path != defaults.max_path) bias["max_path"] = r.max_path;
  if (tree || r.max_level != defaults.max_level) bias["max_level"] = r.max_level;
  for (auto [key, value, fallback] : {std::tuple{"path", r.path, defaults.path},
                                      std::tuple{"level", r.level, defaults.level},
                                      std::tuple{"asymmetric", r.asymmetric, defaults.asymmetric}})
    if (value != fallback) bias[key] = value;
  if (bucketed || r.buckets != defaults.buckets) bias["buckets"] = r.buckets;
  if (bucketed || r.max_distance != defaults.max_distance) bias["max_distance"] = r.max_distance;
  if (r.bidirectional != defaults.bidirectional) bias["bidirectional"] = r.bidirectional;
  return bias;
}

json to_json(const LayerSpec& spec) {
  json heads = json::array();
  for (const HeadSpec& head : spec.heads) {
    json h = {{"mask", to_string(head.mask)}};
    if (head.fixed != FixedPattern::None) h["fixed"] = name_of(kFixedNames, head.fixed);
    const Normaliser& norm = head.normaliser;
    const Normaliser defaults;
    if (norm != defaults) {
      json n = {{"kind", name_of(kNormaliserNames, norm.kind)}};
      if (norm.kind == NormaliserKind::Gumbel || norm.tau != defaults.tau) n["tau"] = norm.tau;
      if (norm.kind == NormaliserKind::TopP || norm.p != defaults.p) n["p"] = norm.p;
      h["normaliser"] = n;
    }
    heads.push_back(h);
  }
  json out = {{"heads", heads}};
  if (spec.bias != Relation{}) out["bias"] = to_json(spec.bias);
  if (spec.dense_bias) out["dense_bias"] = true;
  return out;
}

// ---- printout --------------------------------------------------------------------------

std::string to_string(const LayerSpec& spec) {
  std::string text;
  for (std::size_t h = 0; h < spec.heads.size(); ++h) {
    const HeadSpec& head = spec.heads[h];
    text += spec.heads.size() == 1 ? std::string("every head: ") : fmt::format("head {}: ", h);
    if (head.fixed != FixedPattern::None) {
      text += fmt::format("fixed {}\n", name_of(kFixedNames, head.fixed));
      continue;
    }
    text += to_string(head.mask);
    const Normaliser& norm = head.normaliser;
    if (norm.kind == NormaliserKind::Gumbel) text += fmt::format(", gumbel(tau={})", norm.tau);
    if (norm.kind == NormaliserKind::TopP) text += fmt::format(", top_p(p={})", norm.p);
    text += '\n';
  }
  const Relation& r = spec.bias;
  std::vector<std::string> biases;
  if (r.kind == RelationKind::Hibrids)
    biases.push_back(fmt::format("hibrids(max_path={}, max_level={}{}{}{})", r.max_path,
                                 r.max_level, r.path ? "" : ", no path",
                                 r.level ? "" : ", no level",
                                 r.asymmetric ? "" : ", symmetric path"));
  else if (r.kind == RelationKind::HibridsSelected)
    biases.emplace_back("hibrids_selected");
  else if (r.kind != RelationKind::None)
    biases.push_back(fmt::format("{}(buckets={}, max_distance={})", relation_name(r.kind),
                                 r.buckets, r.max_distance));
  if (spec.dense_bias) biases.emplace_back("dense");
  if (!biases.empty()) text += "bias: " + joined(biases) + "\n";
  return text;
}

}  // namespace strata::attn
