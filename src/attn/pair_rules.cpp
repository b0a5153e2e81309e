#include "strata/attn/pair_rules.h"

#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "strata/core/error.h"

namespace strata::attn {

std::int32_t t5_bucket(std::int64_t d, std::int64_t buckets, std::int64_t max_distance, bool bidirectional) {
  const std::int64_t half = bidirectional ? buckets / 2 : buckets;
  const std::int64_t offset = bidirectional && d > 0 ? half : 0;
  const std::int64_t n = d < 0 ? -d : bidirectional ? d : 0;
  const std::int64_t exact = half / 2;
  if (n < exact) return static_cast<std::int32_t>(offset + n);
  // float, as the reference implementations compute it, so bucket edges agree with them.
  const float scaled = std::log(static_cast<float>(n) / static_cast<float>(exact)) /
                       std::log(static_cast<float>(max_distance) / static_cast<float>(exact)) *
                       static_cast<float>(half - exact);
  const std::int64_t large = std::min(exact + static_cast<std::int64_t>(scaled), half - 1);
  return static_cast<std::int32_t>(offset + large);
}

LayoutField field_of(MaskKind kind) {
  switch (kind) {
    case MaskKind::SameSentence: return LayoutField::Sentence;
    case MaskKind::SameParagraph: return LayoutField::Paragraph;
    case MaskKind::SameSection: return LayoutField::Section;
    case MaskKind::SameSegment: return LayoutField::Segment;
    case MaskKind::SameDocument: return LayoutField::Document;
    default: throw Error("field_of: " + to_string(Mask::of(kind)) + " compares no layout field");
  }
}

namespace {

using State = PairRules::State;

const char* field_name(LayoutField f) {
  switch (f) {
    case LayoutField::Section: return "section";
    case LayoutField::Paragraph: return "paragraph";
    case LayoutField::Sentence: return "sentence";
    case LayoutField::Segment: return "segment";
    case LayoutField::Document: return "document";
    case LayoutField::Token: return "token";
    case LayoutField::Repeated: return "repeated";
  }
  return "?";
}

const at::Tensor* layout_field(const TokenLayout* layout, LayoutField f) {
  if (layout == nullptr) return nullptr;
  switch (f) {
    case LayoutField::Section: return &layout->section;
    case LayoutField::Paragraph: return &layout->paragraph;
    case LayoutField::Sentence: return &layout->sentence;
    case LayoutField::Segment: return &layout->segment;
    case LayoutField::Document: return &layout->document;
    case LayoutField::Token: return &layout->token;
    case LayoutField::Repeated: return &layout->repeated;
  }
  return nullptr;
}

std::string shape_text(const at::Tensor& t) {
  std::string s = "[";
  for (std::int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// "[B, L]", or "[B, L] or [1, L]" when B > 1: a per-token field may be shared by the batch.
std::string batch_shape(std::int64_t batch, std::int64_t length) {
  const std::string one = "[1, " + std::to_string(length) + "]";
  return batch == 1 ? one
                    : "[" + std::to_string(batch) + ", " + std::to_string(length) + "] or " + one;
}

// `t` as a CPU int32 contiguous tensor of shape [B or 1, length]; `name` for messages.
State::Ids ids_of(const at::Tensor& t, std::int64_t batch, std::int64_t length,
                  const std::string& name) {
  if (t.dim() != 2 || (t.size(0) != batch && t.size(0) != 1) || t.size(1) != length)
    throw Error(name + " has shape " + shape_text(t) + ", expected " + batch_shape(batch, length));
  State::Ids ids;
  ids.hold = t.to(torch::kCPU, torch::kInt32).contiguous();
  ids.data = ids.hold.data_ptr<std::int32_t>();
  ids.batch_stride = t.size(0) == 1 ? 0 : length;
  return ids;
}

class Resolver {
 public:
  Resolver(const AttentionCall& call, State& state) : call_(call), s_(state) {}

  // Loads a query- or key-side field once; `why` names the mask or bias that needs it.
  void need(bool query_side, LayoutField f, const std::string& why) {
    State::Ids& slot = (query_side ? s_.query : s_.key)[static_cast<int>(f)];
    if (slot.data != nullptr) return;
    const std::string name =
        std::string(query_side ? "query_layout." : "key_layout.") + field_name(f);
    const at::Tensor* t = layout_field(query_side ? call_.query_layout : call_.key_layout, f);
    if (t == nullptr || !t->defined())
      throw Error("attention spec needs " + name + " (" + why + ")");
    slot = ids_of(*t, s_.batch, query_side ? s_.lq : s_.lk, name);
  }

  void need_mask(const Mask& mask) {
    for (const Mask& operand : mask.operands) need_mask(operand);
    const std::string why = "mask " + to_string(mask);
    switch (mask.kind) {
      case MaskKind::SameSentence:
      case MaskKind::SameParagraph:
      case MaskKind::SameSection:
      case MaskKind::SameSegment:
      case MaskKind::SameDocument:
        need(true, field_of(mask.kind), why);
        need(false, field_of(mask.kind), why);
        break;
      case MaskKind::QuerySegment: need(true, LayoutField::Segment, why); break;
      case MaskKind::MatchingToken:
        need(true, LayoutField::Token, why);
        need(true, LayoutField::Repeated, why);
        need(false, LayoutField::Token, why);
        break;
      case MaskKind::PrefixBlock:
        if (s_.prefix == 0) break;  // true on every key proper
        need(true, LayoutField::Segment, why);
        if (s_.prefix_segment.data == nullptr) {
          const at::Tensor& t = call_.prefix_segment;
          if (!t.defined() || t.dim() != 1 || t.size(0) != s_.prefix)
            throw Error("attention spec needs call.prefix_segment [P] = [" +
                        std::to_string(s_.prefix) + "] (" + why + ")" +
                        (t.defined() ? ", got " + shape_text(t) : std::string()));
          s_.prefix_segment.hold = t.to(torch::kCPU, torch::kInt32).contiguous();
          s_.prefix_segment.data = s_.prefix_segment.hold.data_ptr<std::int32_t>();
        }
        break;
      default: break;
    }
  }

  void resolve_relation() {
    const Relation& r = s_.spec.bias;
    if (r.kind == RelationKind::None) return;
    const std::string why = "bias " + std::string(relation_name(r.kind));
    if (r.kind == RelationKind::T5Buckets) {
      // d = j - i' over every pair of the call.
      s_.bucket_min = -(s_.lq - 1 + s_.query_offset);
      const std::int64_t max = s_.lk - 1 - s_.query_offset;
      for (std::int64_t d = s_.bucket_min; d <= max; ++d)
        s_.buckets.push_back(t5_bucket(d, r.buckets, r.max_distance, r.bidirectional));
      return;
    }
    need(true, LayoutField::Section, why);
    need(false, LayoutField::Section, why);
    const at::Tensor& qs = s_.q(LayoutField::Section).hold;
    const at::Tensor& ks = s_.k(LayoutField::Section).hold;
    if (s_.lq == 0 || s_.lk == 0) return;
    const std::int64_t qmin = qs.min().item<std::int32_t>(), qmax = qs.max().item<std::int32_t>();
    const std::int64_t kmin = ks.min().item<std::int32_t>(), kmax = ks.max().item<std::int32_t>();
    if (r.kind == RelationKind::SectionDistance) {
      s_.bucket_min = kmin - qmax;
      for (std::int64_t d = s_.bucket_min; d <= kmax - qmin; ++d)
        s_.buckets.push_back(t5_bucket(d, r.buckets, r.max_distance, r.bidirectional));
      return;
    }
    // Tree relations: one id per (batch item, query section, key section), from the query's
    // tree.
    const TokenLayout* layout = call_.query_layout;
    const at::Tensor path = tree_relation(layout->path_len, "path_len", why);
    const at::Tensor level = tree_relation(layout->lvl_diff, "lvl_diff", why);
    if (path.sizes() != level.sizes())
      throw Error("query_layout.path_len " + shape_text(path) + " and lvl_diff " + shape_text(level) +
                  " differ in shape");
    s_.sections = path.size(1);
    if (std::min(qmin, kmin) < 0 || std::max(qmax, kmax) >= s_.sections)
      throw Error("section ids must lie in [0, " + std::to_string(s_.sections) +
                  ") to index query_layout.path_len; got [" + std::to_string(std::min(qmin, kmin)) +
                  ", " + std::to_string(std::max(qmax, kmax)) + "]");
    at::Tensor depth;
    if (r.kind == RelationKind::HibridsSelected) {
      const at::Tensor& d = layout->section_depth;
      if (!d.defined() || d.dim() != 2 || d.size(0) != path.size(0) || d.size(1) != s_.sections)
        throw Error("attention spec needs query_layout.section_depth [" +
                    std::to_string(path.size(0)) + ", " + std::to_string(s_.sections) + "] (" +
                    why + ")" + (d.defined() ? ", got " + shape_text(d) : std::string()));
      depth = d;
    }
    s_.hibrids_stride = path.size(0) == 1 ? 0 : s_.sections * s_.sections;
    const at::Tensor ids = section_relation_ids(r, path, level, depth);
    s_.hibrids.assign(ids.data_ptr<std::int32_t>(), ids.data_ptr<std::int32_t>() + ids.numel());
  }

 private:
  at::Tensor tree_relation(const at::Tensor& t, const std::string& name, const std::string& why) {
    if (!t.defined()) throw Error("attention spec needs query_layout." + name + " (" + why + ")");
    if (t.dim() != 3 || (t.size(0) != s_.batch && t.size(0) != 1) || t.size(1) != t.size(2))
      throw Error("query_layout." + name + " has shape " + shape_text(t) + ", expected [" +
                  std::to_string(s_.batch) + " or 1, S, S]");
    return t.to(torch::kCPU, torch::kInt32).contiguous();
  }

  const AttentionCall& call_;
  State& s_;
};

// Postfix code for `mask`; returns the stack depth it needs.
std::int32_t emit(const Mask& mask, std::vector<State::Op>& program) {
  std::int32_t depth = 1;
  std::int32_t pushed = 0;
  for (const Mask& operand : mask.operands) {
    depth = std::max(depth, pushed + emit(operand, program));
    ++pushed;
  }
  State::Op op;
  op.kind = mask.kind;
  op.a = mask.kind == MaskKind::Window ? mask.left : mask.count;  // Blocks: the block length
  op.b = mask.kind == MaskKind::Blocks ? mask.left : mask.right;   // Blocks: the blocks before
  op.arity = static_cast<std::int32_t>(mask.operands.size());
  program.push_back(op);
  return depth;
}

// The element rule for one mask expression; (i, n) as in visible().
bool holds(const State& s, const Mask& m, std::int64_t b, std::int64_t i, std::int64_t n) {
  switch (m.kind) {
    case MaskKind::And:
      return std::all_of(m.operands.begin(), m.operands.end(),
                         [&](const Mask& o) { return holds(s, o, b, i, n); });
    case MaskKind::Or:
      return std::any_of(m.operands.begin(), m.operands.end(),
                         [&](const Mask& o) { return holds(s, o, b, i, n); });
    case MaskKind::Not: return !holds(s, m.operands[0], b, i, n);
    case MaskKind::PrefixBlock:
      return n >= s.prefix || s.prefix_segment.data[n] == s.q(LayoutField::Segment).row(b)[i];
    default: break;
  }
  if (n < s.prefix) return true;  // every other predicate holds on prefix slots
  const std::int64_t j = n - s.prefix, iq = i + s.query_offset;
  switch (m.kind) {
    case MaskKind::All: return true;
    case MaskKind::Causal: return j <= iq;
    case MaskKind::Window: return iq - m.left <= j && j <= iq + m.right;
    case MaskKind::Global: return iq < m.count || j < m.count;
    case MaskKind::Blocks: return j / m.count <= iq / m.count && j / m.count >= iq / m.count - m.left;
    case MaskKind::QuerySegment: return s.q(LayoutField::Segment).row(b)[i] == m.count;
    case MaskKind::MatchingToken:
      return s.q(LayoutField::Token).row(b)[i] == s.k(LayoutField::Token).row(b)[j] ||
             s.q(LayoutField::Repeated).row(b)[i] == 0;
    default: {
      const LayoutField f = field_of(m.kind);
      return s.q(f).row(b)[i] == s.k(f).row(b)[j];
    }
  }
}

// The keys a primitive that shows every query one run of keys shows query iq (i + query_offset):
// columns [first, last) from key j0, unclamped. Nullopt for the other primitives.
struct Run {
  std::int64_t first, last;
};
std::optional<Run> run_of(const State::Op& op, std::int64_t iq, std::int64_t j0) {
  constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::min() / 2;
  constexpr std::int64_t kAll = std::numeric_limits<std::int64_t>::max() / 2;
  switch (op.kind) {
    case MaskKind::All: return Run{kNone, kAll};
    case MaskKind::Causal: return Run{kNone, iq - j0 + 1};
    case MaskKind::Window: return Run{iq - op.a - j0, iq + op.b - j0 + 1};
    case MaskKind::Global: return iq < op.a ? Run{kNone, kAll} : Run{kNone, op.a - j0};
    case MaskKind::Blocks: {
      // Keys from the first position of block (i' / W - B) to the last of block i' / W.
      const std::int64_t block = iq / op.a;
      return Run{(block - op.b) * op.a - j0, (block + 1) * op.a - j0};
    }
    default: return std::nullopt;
  }
}

// out[c] = lo <= c < hi for c < n: three runs of bytes, where a compare per byte (which GCC
// does not vectorise from 64-bit bounds) made the window's edge tiles cost 0.75 ns a pair.
void fill_interval(std::uint8_t* out, std::int64_t n, std::int64_t lo, std::int64_t hi) {
  lo = std::clamp<std::int64_t>(lo, 0, n);
  hi = std::clamp<std::int64_t>(hi, lo, n);
  std::memset(out, 0, static_cast<std::size_t>(lo));
  std::memset(out + lo, 1, static_cast<std::size_t>(hi - lo));
  std::memset(out + hi, 0, static_cast<std::size_t>(n - hi));
}

// One primitive over the row of query i, columns n in [n0, n0 + w): prefix slots first (pc
// of them), then keys proper from j0.
void fill(const State& s, const State::Op& op, std::int64_t b, std::int64_t i, std::int64_t pc,
          std::int64_t j0, std::int64_t w, std::int64_t n0, std::uint8_t* dst) {
  if (op.kind == MaskKind::PrefixBlock) {
    const std::int32_t seg = pc > 0 ? s.q(LayoutField::Segment).row(b)[i] : 0;
    const std::int32_t* pseg = s.prefix_segment.data + n0;
    for (std::int64_t c = 0; c < pc; ++c) dst[c] = pseg[c] == seg;
    std::memset(dst + pc, 1, static_cast<std::size_t>(w - pc));
    return;
  }
  std::memset(dst, 1, static_cast<std::size_t>(pc));
  std::uint8_t* out = dst + pc;
  const std::int64_t kw = w - pc, iq = i + s.query_offset;
  if (const auto run = run_of(op, iq, j0)) {
    fill_interval(out, kw, run->first, run->last);
    return;
  }
  switch (op.kind) {
    case MaskKind::QuerySegment:
      std::memset(out, s.q(LayoutField::Segment).row(b)[i] == op.a, static_cast<std::size_t>(kw));
      break;
    case MaskKind::MatchingToken: {
      if (s.q(LayoutField::Repeated).row(b)[i] == 0) {
        std::memset(out, 1, static_cast<std::size_t>(kw));
        break;
      }
      const std::int32_t token = s.q(LayoutField::Token).row(b)[i];
      const std::int32_t* kt = s.k(LayoutField::Token).row(b) + j0;
      for (std::int64_t c = 0; c < kw; ++c) out[c] = kt[c] == token;
      break;
    }
    default: {
      const LayoutField f = field_of(op.kind);
      const std::int32_t id = s.q(f).row(b)[i];
      const std::int32_t* kf = s.k(f).row(b) + j0;
      for (std::int64_t c = 0; c < kw; ++c) out[c] = kf[c] == id;
    }
  }
}

}  // namespace

PairRules::PairRules(const AttentionCall& call) {
  auto state = std::make_shared<State>();
  State& s = *state;
  if (!call.q.defined() || !call.k.defined() || call.q.dim() != 4 || call.k.dim() != 4)
    throw Error("attention call needs q [B, H, Lq, Dh] and k [B, H, P + Lk, Dh]");
  s.batch = call.q.size(0);
  s.heads = call.q.size(1);
  s.lq = call.q.size(2);
  s.prefix = call.prefix_len;
  if (s.prefix < 0 || s.prefix > call.k.size(2))
    throw Error("attention call: prefix_len " + std::to_string(s.prefix) + " outside [0, " +
                std::to_string(call.k.size(2)) + "] (the key axis)");
  s.lk = call.k.size(2) - s.prefix;
  s.query_offset = call.query_offset;
  s.causal = call.causal;
  s.spec = call.spec != nullptr ? *call.spec : LayerSpec{};
  validate(s.spec);
  const std::int64_t specs = static_cast<std::int64_t>(s.spec.heads.size());
  if (specs != 1 && specs != s.heads)
    throw Error("attention spec has " + std::to_string(specs) + " head specs for " +
                std::to_string(s.heads) + " heads (give one for every head, or one per head)");

  if (call.key_padding.defined()) {
    const at::Tensor& t = call.key_padding;
    if (t.dim() != 2 || (t.size(0) != s.batch && t.size(0) != 1) || t.size(1) != s.lk)
      throw Error("attention call: key_padding has shape " + shape_text(t) + ", expected " +
                  batch_shape(s.batch, s.lk));
    s.padding_hold = t.to(torch::kCPU, torch::kUInt8).contiguous();
    s.padding = s.padding_hold.data_ptr<std::uint8_t>();
    s.padding_stride = t.size(0) == 1 ? 0 : s.lk;
  }

  Resolver resolver(call, s);
  std::vector<const Mask*> distinct;
  for (std::int64_t h = 0; h < s.heads; ++h) {
    const HeadSpec& head = s.spec.head(h);
    if (head.fixed != FixedPattern::None) {
      s.head_program.push_back(-1);
      continue;
    }
    auto same = std::find_if(distinct.begin(), distinct.end(),
                             [&](const Mask* m) { return *m == head.mask; });
    s.head_program.push_back(static_cast<std::int32_t>(same - distinct.begin()));
    if (same != distinct.end()) continue;
    distinct.push_back(&head.mask);
    resolver.need_mask(head.mask);
    s.programs.emplace_back();
    s.max_stack = std::max(s.max_stack, emit(head.mask, s.programs.back()));
  }
  resolver.resolve_relation();

  if (s.spec.bias.kind != RelationKind::None) {
    const std::int64_t count = relation_count(s.spec.bias);
    const at::Tensor& t = call.bias_table;
    if (!t.defined() || t.dim() != 2 || t.size(0) != s.heads || t.size(1) != count)
      throw Error("attention spec needs call.bias_table [H, relation_count] = [" +
                  std::to_string(s.heads) + ", " + std::to_string(count) + "] (bias " +
                  std::string(relation_name(s.spec.bias.kind)) + ")" +
                  (t.defined() ? ", got " + shape_text(t) : std::string()));
  }
  if (s.spec.dense_bias != call.dense_bias.defined())
    throw Error(s.spec.dense_bias
                    ? "attention spec needs call.dense_bias [B or 1, H or 1, Lq, P + Lk] "
                      "(dense_bias = true)"
                    : "attention call has a dense_bias but its spec has dense_bias = false");
  if (call.dense_bias.defined()) {
    const at::Tensor& t = call.dense_bias;
    if (t.dim() != 4 || (t.size(0) != s.batch && t.size(0) != 1) ||
        (t.size(1) != s.heads && t.size(1) != 1) || t.size(2) != s.lq ||
        t.size(3) != s.prefix + s.lk)
      throw Error("attention call: dense_bias has shape " + shape_text(t) + ", expected [" +
                  std::to_string(s.batch) + " or 1, " + std::to_string(s.heads) + " or 1, " +
                  std::to_string(s.lq) + ", " + std::to_string(s.prefix + s.lk) + "]");
  }
  state_ = std::move(state);
}

std::int64_t PairRules::batch() const { return state_->batch; }
std::int64_t PairRules::heads() const { return state_->heads; }
std::int64_t PairRules::queries() const { return state_->lq; }
std::int64_t PairRules::keys() const { return state_->prefix + state_->lk; }
std::int64_t PairRules::prefix_len() const { return state_->prefix; }
const LayerSpec& PairRules::spec() const { return state_->spec; }

bool PairRules::visible(std::int64_t b, std::int64_t h, std::int64_t i, std::int64_t n) const {
  const State& s = *state_;
  if (fixed(h) != FixedPattern::None) return n == fixed_key(b, h, i);
  if (n >= s.prefix) {
    const std::int64_t j = n - s.prefix;
    if (!s.real_key(b, j)) return false;
    if (s.causal && j > i + s.query_offset) return false;
  }
  return holds(s, s.spec.head(h).mask, b, i, n);
}

void PairRules::visible_tile(std::int64_t b, std::int64_t h, std::int64_t i0, std::int64_t i1,
                             std::int64_t n0, std::int64_t n1, std::uint8_t* out,
                             std::int64_t ld) const {
  const State& s = *state_;
  const std::int64_t w = n1 - n0;
  if (w <= 0) return;
  if (fixed(h) != FixedPattern::None) {
    for (std::int64_t i = i0; i < i1; ++i) {
      std::uint8_t* row = out + (i - i0) * ld;
      std::memset(row, 0, static_cast<std::size_t>(w));
      const std::int64_t key = fixed_key(b, h, i);
      if (key >= n0 && key < n1) row[key - n0] = 1;
    }
    return;
  }
  const std::vector<State::Op>& program = s.programs[s.head_program[h]];
  const std::int64_t pc = std::clamp(s.prefix - n0, std::int64_t{0}, w);
  const std::int64_t j0 = std::max(n0, s.prefix) - s.prefix;
  // Operand stack: slot 0 is the output row itself, deeper slots live here.
  std::vector<std::uint8_t> scratch(static_cast<std::size_t>((s.max_stack - 1) * w));
  const std::uint8_t* pad = s.padding != nullptr ? s.padding + b * s.padding_stride + j0 : nullptr;
  for (std::int64_t i = i0; i < i1; ++i) {
    std::uint8_t* row = out + (i - i0) * ld;
    auto slot = [&](std::int64_t k) { return k == 0 ? row : scratch.data() + (k - 1) * w; };
    std::int64_t top = 0;  // stack size
    for (const State::Op& op : program) {
      if (op.kind == MaskKind::And || op.kind == MaskKind::Or) {
        top -= op.arity;
        std::uint8_t* dst = slot(top);
        for (std::int32_t k = 1; k < op.arity; ++k) {
          const std::uint8_t* src = slot(top + k);
          if (op.kind == MaskKind::And)
            for (std::int64_t c = 0; c < w; ++c) dst[c] &= src[c];
          else
            for (std::int64_t c = 0; c < w; ++c) dst[c] |= src[c];
        }
        ++top;
      } else if (op.kind == MaskKind::Not) {
        std::uint8_t* dst = slot(top - 1);
        for (std::int64_t c = 0; c < w; ++c) dst[c] ^= 1;
      } else {
        fill(s, op, b, i, pc, j0, w, n0, slot(top));
        ++top;
      }
    }
    // The call's own causal flag and padding, on the keys proper.
    std::uint8_t* keys = row + pc;
    const std::int64_t kw = w - pc;
    if (s.causal) {
      const std::int64_t seen = std::clamp(i + s.query_offset - j0 + 1, std::int64_t{0}, kw);
      std::memset(keys + seen, 0, static_cast<std::size_t>(kw - seen));
    }
    if (pad != nullptr)
      for (std::int64_t c = 0; c < kw; ++c) keys[c] &= pad[c] != 0;
  }
}

bool PairRules::row_runs(std::int64_t /*b: runs do not depend on it*/, std::int64_t h, std::int64_t i0,
                         std::int64_t i1, std::int64_t n0, std::int64_t n1, std::int64_t* first,
                         std::int64_t* last) const {
  const State& s = *state_;
  if (fixed(h) != FixedPattern::None || n0 < s.prefix || s.padding != nullptr) return false;
  const std::vector<State::Op>& program = s.programs[s.head_program[h]];
  constexpr std::int32_t kDepth = 8;
  const std::int64_t j0 = n0 - s.prefix, w = n1 - n0;
  if (s.max_stack > kDepth) return false;
  for (const State::Op& op : program)
    if (op.kind != MaskKind::And && op.kind != MaskKind::Or && !run_of(op, 0, j0)) return false;
  // The program over runs clamped to the tile's columns: an And of runs is a run; an Or is one
  // where they overlap or touch (a window beside the global keys it reaches), and a row where
  // they do not sends the whole tile back to visible_tile.
  std::array<Run, kDepth> stack;
  for (std::int64_t i = i0; i < i1; ++i) {
    const std::int64_t iq = i + s.query_offset;
    std::int32_t top = 0;
    for (const State::Op& op : program) {
      if (op.kind != MaskKind::And && op.kind != MaskKind::Or) {
        const Run run = *run_of(op, iq, j0);
        const std::int64_t lo = std::clamp(run.first, std::int64_t{0}, w);
        stack[top++] = Run{lo, std::clamp(run.last, lo, w)};
        continue;
      }
      top -= op.arity;
      Run acc = stack[top];
      for (std::int32_t k = 1; k < op.arity; ++k) {
        const Run& run = stack[top + k];
        if (op.kind == MaskKind::And) {
          acc = Run{std::max(acc.first, run.first), std::min(acc.last, run.last)};
        } else if (run.first < run.last) {
          if (acc.first >= acc.last) {
            acc = run;
          } else {
            if (run.last < acc.first || acc.last < run.first) return false;  // two runs
            acc = Run{std::min(acc.first, run.first), std::max(acc.last, run.last)};
          }
        }
      }
      stack[top++] = acc;
    }
    Run run = stack[0];
    if (s.causal) run.last = std::min(run.last, iq - j0 + 1);
    const bool sees = run.first < run.last;
    first[i - i0] = sees ? run.first : 0;
    last[i - i0] = sees ? run.last : 0;
  }
  return true;
}

bool PairRules::has_relation() const { return state_->spec.bias.kind != RelationKind::None; }

std::int32_t PairRules::relation(std::int64_t b, std::int64_t i, std::int64_t n) const {
  const State& s = *state_;
  if (n < s.prefix) return -1;
  const std::int64_t j = n - s.prefix;
  switch (s.spec.bias.kind) {
    case RelationKind::None: return -1;
    case RelationKind::T5Buckets: return s.buckets[j - (i + s.query_offset) - s.bucket_min];
    case RelationKind::SectionDistance:
      return s.buckets[s.k(LayoutField::Section).row(b)[j] - s.q(LayoutField::Section).row(b)[i] -
                       s.bucket_min];
    case RelationKind::Hibrids:
    case RelationKind::HibridsSelected:
      return s.hibrids[b * s.hibrids_stride + s.q(LayoutField::Section).row(b)[i] * s.sections +
                       s.k(LayoutField::Section).row(b)[j]];
  }
  return -1;
}

void PairRules::relation_tile(std::int64_t b, std::int64_t i0, std::int64_t i1, std::int64_t n0,
                              std::int64_t n1, std::int32_t* out, std::int64_t ld) const {
  const State& s = *state_;
  const std::int64_t w = n1 - n0;
  if (w <= 0) return;
  const std::int64_t pc = std::clamp(s.prefix - n0, std::int64_t{0}, w);
  const std::int64_t j0 = std::max(n0, s.prefix) - s.prefix, kw = w - pc;
  for (std::int64_t i = i0; i < i1; ++i) {
    std::int32_t* row = out + (i - i0) * ld;
    std::fill(row, row + pc, -1);
    std::int32_t* keys = row + pc;
    switch (s.spec.bias.kind) {
      case RelationKind::None: std::fill(keys, keys + kw, -1); break;
      case RelationKind::T5Buckets: {
        const std::int32_t* ids = s.buckets.data() + (j0 - (i + s.query_offset) - s.bucket_min);
        std::copy(ids, ids + kw, keys);
        break;
      }
      case RelationKind::SectionDistance: {
        const std::int64_t base = s.q(LayoutField::Section).row(b)[i] + s.bucket_min;
        const std::int32_t* ks = s.k(LayoutField::Section).row(b) + j0;
        for (std::int64_t c = 0; c < kw; ++c) keys[c] = s.buckets[ks[c] - base];
        break;
      }
      case RelationKind::Hibrids:
      case RelationKind::HibridsSelected: {
        const std::int32_t* ids = s.hibrids.data() + b * s.hibrids_stride +
                                  s.q(LayoutField::Section).row(b)[i] * s.sections;
        const std::int32_t* ks = s.k(LayoutField::Section).row(b) + j0;
        for (std::int64_t c = 0; c < kw; ++c) keys[c] = ids[ks[c]];
        break;
      }
    }
  }
}

std::optional<std::int32_t> PairRules::uniform_relation(std::int64_t b, std::int64_t i0,
                                                        std::int64_t i1, std::int64_t n0,
                                                        std::int64_t n1) const {
  const State& s = *state_;
  if (i1 <= i0 || n1 <= n0) return std::nullopt;
  if (n1 <= s.prefix || s.spec.bias.kind == RelationKind::None) return -1;
  if (n0 < s.prefix) return std::nullopt;  // prefix slots (-1) beside keys
  switch (s.spec.bias.kind) {
    case RelationKind::SectionDistance:
    case RelationKind::Hibrids:
    case RelationKind::HibridsSelected: {
      const auto one_value = [](const std::int32_t* ids, std::int64_t count) {
        return std::all_of(ids + 1, ids + count, [&](std::int32_t id) { return id == ids[0]; });
      };
      if (!one_value(s.q(LayoutField::Section).row(b) + i0, i1 - i0) ||
          !one_value(s.k(LayoutField::Section).row(b) + (n0 - s.prefix), n1 - n0))
        return std::nullopt;
      return relation(b, i0, n0);
    }
    default: return std::nullopt;  // T5 buckets change along every diagonal
  }
}

FixedPattern PairRules::fixed(std::int64_t h) const { return state_->spec.head(h).fixed; }

std::int64_t PairRules::fixed_key(std::int64_t b, std::int64_t h, std::int64_t i) const {
  const State& s = *state_;
  const std::int64_t iq = i + s.query_offset;
  std::int64_t j;
  switch (fixed(h)) {
    case FixedPattern::PreviousToken: j = iq - 1; break;
    case FixedPattern::NextToken: j = iq + 1; break;
    default: return -1;
  }
  if (j < 0 || j >= s.lk || !s.real_key(b, j) || (s.causal && j > iq)) return -1;
  return s.prefix + j;
}

}  // namespace strata::attn
