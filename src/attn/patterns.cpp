#include "strata/attn/patterns.h"

#include <torch/torch.h>

#include <algorithm>
#include <functional>

#include <nlohmann/json.hpp>

#include "kernels/reference.h"
#include "strata/core/edit_distance.h"
#include "strata/core/error.h"

namespace strata::attn {

namespace {

constexpr BuiltinPattern kBuiltins[] = {
    BuiltinPattern::MatchingToken, BuiltinPattern::IntraSentence, BuiltinPattern::IntraContext,
    BuiltinPattern::PreviousToken, BuiltinPattern::NextToken,     BuiltinPattern::SpecialToken,
    BuiltinPattern::Punctuation,
};

std::string joined_pattern_names(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Recursive descent over `a & b`, `a | b`, `!a`, `(a)` and pattern names; & binds tighter.
class ExprParser {
 public:
  using Lookup = std::function<const Pattern&(const std::string&)>;
  ExprParser(std::string_view text, Lookup lookup, const std::string& where)
      : text_(text), lookup_(std::move(lookup)), where_(where) {}

  PatternExpr parse() {
    PatternExpr e = parse_or();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    return e;
  }

 private:
  PatternExpr parse_or() {
    PatternExpr e = parse_and();
    while (accept('|')) e = binary(PatternExpr::Op::Or, std::move(e), parse_and());
    return e;
  }
  PatternExpr parse_and() {
    PatternExpr e = parse_unary();
    while (accept('&')) e = binary(PatternExpr::Op::And, std::move(e), parse_unary());
    return e;
  }
  PatternExpr parse_unary() {
    if (accept('!')) {
      PatternExpr e;
      e.op = PatternExpr::Op::Not;
      e.operands.push_back(parse_unary());
      return e;
    }
    if (accept('(')) {
      PatternExpr e = parse_or();
      if (!accept(')')) fail("missing ')'");
      return e;
    }
    skip_space();
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    if (start == pos_) fail("expected a pattern name");
    try {
      return lookup_(std::string(text_.substr(start, pos_ - start))).expr;
    } catch (const Error& e) {
      if (std::string_view(e.what()).starts_with("pattern definition")) throw;
      throw Error(where_ + ": " + e.what());
    }
  }
  static PatternExpr binary(PatternExpr::Op op, PatternExpr a, PatternExpr b) {
    PatternExpr e;
    e.op = op;
    e.operands = {std::move(a), std::move(b)};
    return e;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw Error(where_ + ": " + what + " at position " + std::to_string(pos_) + " of '" +
                std::string(text_) + "'");
  }

  std::string_view text_;
  Lookup lookup_;
  std::string where_;
  std::size_t pos_ = 0;
};

const at::Tensor& field(const PatternInputs& in, const at::Tensor TokenLayout::*member,
                        const char* name, BuiltinPattern who) {
  if (in.layout == nullptr || !(in.layout->*member).defined())
    throw Error("pattern " + std::string(builtin_pattern_name(who)) + " needs the layout's " + name);
  return in.layout->*member;
}

// [B, L] -> equal ids for every pair, [B, L, L].
at::Tensor same(const at::Tensor& ids) { return ids.unsqueeze(2) == ids.unsqueeze(1); }

at::Tensor key_class(const PatternInputs& in, std::int32_t bit, BuiltinPattern who) {
  if (!in.token_class.defined())
    throw Error("pattern " + std::string(builtin_pattern_name(who)) + " needs token classes");
  const at::Tensor is = (in.token_class.to(torch::kInt32).bitwise_and(bit)) != 0;  // [B, L]
  return is.unsqueeze(1).expand({is.size(0), is.size(1), is.size(1)});
}

at::Tensor offset_pairs(std::int64_t batch, std::int64_t length, std::int64_t offset) {
  // The one diagonal j = i + offset.
  return torch::ones({length, length}, torch::kBool).triu(offset).tril(offset).unsqueeze(0).expand(
      {batch, length, length});
}

at::Tensor leaf_predicate(BuiltinPattern p, const PatternInputs& in) {
  switch (p) {
    case BuiltinPattern::MatchingToken: {
      const at::Tensor& token = field(in, &TokenLayout::token, "token ids", p);
      const at::Tensor& repeated = field(in, &TokenLayout::repeated, "repeated flags", p);
      return same(token).logical_and((repeated != 0).unsqueeze(2));
    }
    case BuiltinPattern::IntraSentence: return same(field(in, &TokenLayout::sentence, "sentence ids", p));
    case BuiltinPattern::IntraContext: return same(field(in, &TokenLayout::segment, "segment ids", p));
    case BuiltinPattern::PreviousToken:
    case BuiltinPattern::NextToken: {
      const at::Tensor& token = field(in, &TokenLayout::token, "token ids", p);
      return offset_pairs(token.size(0), token.size(1), p == BuiltinPattern::PreviousToken ? -1 : 1);
    }
    case BuiltinPattern::SpecialToken: return key_class(in, kSpecialTokenClass, p);
    case BuiltinPattern::Punctuation: return key_class(in, kPunctuationClass, p);
  }
  throw Error("unknown pattern");
}

Mask leaf_mask(BuiltinPattern p) {
  switch (p) {
    case BuiltinPattern::MatchingToken: return Mask::of(MaskKind::MatchingToken);
    case BuiltinPattern::IntraSentence: return Mask::of(MaskKind::SameSentence);
    case BuiltinPattern::IntraContext: return Mask::of(MaskKind::SameSegment);
    case BuiltinPattern::PreviousToken: return Mask::window(1, 0) && !Mask::window(0, 0);
    case BuiltinPattern::NextToken: return Mask::window(0, 1) && !Mask::window(0, 0);
    case BuiltinPattern::SpecialToken:
    case BuiltinPattern::Punctuation: break;
  }
  throw Error("pattern " + std::string(builtin_pattern_name(p)) +
              " is for analysis only and cannot be injected (injectable: matching_token, "
              "intra_sentence, intra_context, previous_token, next_token and their compositions)");
}

Mask expr_mask(const PatternExpr& e) {
  switch (e.op) {
    case PatternExpr::Op::Leaf: return leaf_mask(e.leaf);
    case PatternExpr::Op::And: return expr_mask(e.operands[0]) && expr_mask(e.operands[1]);
    case PatternExpr::Op::Or: return expr_mask(e.operands[0]) || expr_mask(e.operands[1]);
    case PatternExpr::Op::Not: return !expr_mask(e.operands[0]);
  }
  throw Error("unknown pattern expression");
}

at::Tensor expr_predicate(const PatternExpr& e, const PatternInputs& in) {
  switch (e.op) {
    case PatternExpr::Op::Leaf: return leaf_predicate(e.leaf, in);
    case PatternExpr::Op::And:
      return expr_predicate(e.operands[0], in).logical_and(expr_predicate(e.operands[1], in));
    case PatternExpr::Op::Or:
      return expr_predicate(e.operands[0], in).logical_or(expr_predicate(e.operands[1], in));
    case PatternExpr::Op::Not: return expr_predicate(e.operands[0], in).logical_not();
  }
  throw Error("unknown pattern expression");
}

bool expr_injectable(const PatternExpr& e) {
  if (e.op == PatternExpr::Op::Leaf)
    return e.leaf != BuiltinPattern::SpecialToken && e.leaf != BuiltinPattern::Punctuation;
  for (const PatternExpr& o : e.operands)
    if (!expr_injectable(o)) return false;
  return true;
}

}  // namespace

std::string_view builtin_pattern_name(BuiltinPattern pattern) {
  switch (pattern) {
    case BuiltinPattern::MatchingToken: return "matching_token";
    case BuiltinPattern::IntraSentence: return "intra_sentence";
    case BuiltinPattern::IntraContext: return "intra_context";
    case BuiltinPattern::PreviousToken: return "previous_token";
    case BuiltinPattern::NextToken: return "next_token";
    case BuiltinPattern::SpecialToken: return "special_token";
    case BuiltinPattern::Punctuation: return "punctuation";
  }
  return "?";
}

PatternSet::PatternSet() {
  for (BuiltinPattern p : kBuiltins) {
    PatternExpr e;
    e.leaf = p;
    patterns_.push_back({std::string(builtin_pattern_name(p)), e});
  }
}

void PatternSet::define(const nlohmann::json& definitions) {
  if (!definitions.is_object())
    throw Error("pattern definitions: expected an object {\"name\": \"expression\", ...}");
  // JSON objects come sorted by name, so a definition may use one that comes later: each is
  // defined on first use, and a name met again while it is being defined is a cycle.
  std::vector<std::string> defining;
  std::function<const Pattern&(const std::string&)> lookup = [&](const std::string& name) -> const Pattern& {
    for (const Pattern& p : patterns_)
      if (p.name == name) return p;
    if (!definitions.contains(name)) return find(name);  // the error names every known pattern
    const std::string where = "pattern definition '" + name + "'";
    if (std::find(defining.begin(), defining.end(), name) != defining.end())
      throw Error(where + ": it is defined in terms of itself");
    const nlohmann::json& value = definitions.at(name);
    if (!value.is_string()) throw Error(where + ": the expression must be a string");
    if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      throw Error(where + ": a name is lowercase letters, digits and _");
    defining.push_back(name);
    PatternExpr expr = ExprParser(value.get<std::string>(), lookup, where).parse();
    defining.pop_back();
    patterns_.push_back({name, std::move(expr)});
    return patterns_.back();
  };
  const std::size_t known_before = patterns_.size();
  for (const auto& [name, value] : definitions.items()) {
    for (std::size_t i = 0; i < known_before; ++i)
      if (patterns_[i].name == name) throw Error("pattern definition '" + name + "': the name is taken");
    lookup(name);
  }
}

const Pattern& PatternSet::find(const std::string& name) const {
  for (const Pattern& p : patterns_)
    if (p.name == name) return p;
  const std::vector<std::string> known = names();
  const auto close = closest_match(name, known);
  throw Error("unknown pattern '" + name + "'" + (close ? " (did you mean '" + *close + "'?)" : "") +
              "; known patterns: " + joined_pattern_names(known));
}

std::vector<std::string> PatternSet::names() const {
  std::vector<std::string> out;
  for (const Pattern& p : patterns_) out.push_back(p.name);
  return out;
}

std::vector<Pattern> PatternSet::parse_list(const std::string& list) const {
  std::vector<Pattern> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    std::string name = list.substr(start, comma - start);
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    if (!name.empty()) out.push_back(find(name));
    start = comma + 1;
  }
  return out;
}

bool injectable(const Pattern& pattern) { return expr_injectable(pattern.expr); }

at::Tensor pattern_predicate(const Pattern& pattern, const PatternInputs& inputs) {
  return expr_predicate(pattern.expr, inputs);
}

HeadSpec pattern_head(const Pattern& pattern) {
  HeadSpec head;
  const PatternExpr& e = pattern.expr;
  if (e.op == PatternExpr::Op::Leaf && e.leaf == BuiltinPattern::PreviousToken) {
    head.fixed = FixedPattern::PreviousToken;
  } else if (e.op == PatternExpr::Op::Leaf && e.leaf == BuiltinPattern::NextToken) {
    head.fixed = FixedPattern::NextToken;
  } else {
    try {
      head.mask = expr_mask(e);
    } catch (const Error& error) {
      throw Error("pattern '" + pattern.name + "': " + error.what());
    }
  }
  return head;
}

LayerSpec inject_patterns(const std::vector<Pattern>& patterns, std::int64_t patterned,
                          std::int64_t heads) {
  if (patterned < 0 || patterned > heads)
    throw Error("patterned heads: " + std::to_string(patterned) + " of " + std::to_string(heads) +
                " heads (at most every head can take a pattern)");
  if (patterned > 0 && patterns.empty()) throw Error("patterned heads: no pattern given to inject");
  LayerSpec spec;
  if (patterned == 0) return spec;
  spec.heads.assign(static_cast<std::size_t>(heads), HeadSpec{});
  for (std::int64_t h = 0; h < patterned; ++h)
    spec.heads[h] = pattern_head(patterns[h % static_cast<std::int64_t>(patterns.size())]);
  return spec;
}

double attention_sparsity(const LayerSpec& spec, std::int64_t heads, const TokenLayout& layout,
                          std::int64_t length) {
  if (length <= 0) return 0.0;
  AttentionCall call;
  call.q = torch::zeros({1, heads, length, 1});
  call.k = call.q;
  call.v = call.q;
  call.spec = &spec;
  const TokenLayout one = select_items(layout, torch::zeros({1}, torch::kLong));
  TokenLayout cut;
  for (auto [from, to] : {std::pair{&one.section, &cut.section}, {&one.paragraph, &cut.paragraph},
                          {&one.sentence, &cut.sentence}, {&one.segment, &cut.segment},
                          {&one.document, &cut.document}, {&one.token, &cut.token},
                          {&one.repeated, &cut.repeated}})
    if (from->defined()) *to = from->narrow(1, 0, length);
  cut.path_len = one.path_len;
  cut.lvl_diff = one.lvl_diff;
  cut.section_depth = one.section_depth;
  call.query_layout = &cut;
  call.key_layout = &cut;
  at::Tensor visible = dense_visibility(call);
  if (!visible.defined()) return 0.0;
  const double pairs = static_cast<double>(length) * static_cast<double>(length);
  const double seen = visible.expand({1, heads, length, length}).sum().item<double>();
  return 1.0 - seen / (pairs * static_cast<double>(heads));
}

}  // namespace strata::attn
