#include "strata/data/seq2seq_examples.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <numeric>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/core/strings.h"
#include "strata/data/parallel_documents.h"
#include "strata/doc/dataset.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {


void check(const TruncationOptions& options) {
  if (options.max_source_tokens < 2)
    throw Error("seq2seq examples: max_source_tokens must be at least 2 (a token and eos)");
  if (options.max_target_tokens < 2)
    throw Error("seq2seq examples: max_target_tokens must be at least 2 (a token and eos)");
  if (options.segments < 1) throw Error("seq2seq examples: segments must be at least 1");
}

// The marker ids a SectionTokens choice inserts: {[SEC]} (Flat), {[SEC-L1]..[SEC-Ln]} up to
// the tokenizer's deepest level (Level), none (None).
class SectionMarkers {
 public:
  SectionMarkers(const Tokenizer& tokenizer, SectionTokens kind)
      : by_level_(kind == SectionTokens::Level) {
    if (kind == SectionTokens::Flat) ids_.push_back(require(tokenizer, kind, "[SEC]"));
    if (kind != SectionTokens::Level) return;
    ids_.push_back(require(tokenizer, kind, "[SEC-L1]"));
    while (const auto id = tokenizer.piece_to_id(level_piece(ids_.size() + 1))) ids_.push_back(*id);
  }

  // The room the marker of a section at `depth` takes: 1 below the root when enabled, else 0.
  std::size_t room(int depth) const { return !ids_.empty() && depth > 0; }

  std::size_t levels() const { return by_level_ ? ids_.size() : 0; }  // n of [SEC-L1]..[SEC-Ln]

  // The marker of a section at `depth` >= 1; `clamped` counts depths past the deepest level.
  std::int32_t id(int depth, std::size_t& clamped) const {
    if (!by_level_) return ids_.front();
    const std::size_t level = static_cast<std::size_t>(depth);
    clamped += level > ids_.size();
    return ids_[std::min(level, ids_.size()) - 1];
  }

 private:
  static std::string level_piece(std::size_t level) {
    std::string piece = "[SEC-L";
    piece.append(std::to_string(level)).append("]");
    return piece;
  }

  static std::int32_t require(const Tokenizer& tokenizer, SectionTokens kind, const char* piece) {
    if (const auto id = tokenizer.piece_to_id(piece)) return *id;
    throw Error(fmt::format(
        "seq2seq examples: section tokens '{}' need the tokenizer's {} token; this {} tokenizer "
        "has none: train the tokenizer with structural markers (`strata tokenizer train` "
        "reserves [SEC] and [SEC-L1]..[SEC-Ln], n set by --structural-levels)",
        section_tokens_name(kind), piece, tokenizer.kind()));
  }

  bool by_level_;
  std::vector<std::int32_t> ids_;
};

// Keeps the tokens marked in `keep`, puts a section's marker before its first kept token,
// appends eos, and renumbers positions and segments.
void compact(Layout& layout, const std::vector<char>& keep, const SectionMarkers& markers,
             std::int32_t eos, int segments, std::size_t& levels_clamped) {
  Layout out;
  const auto push = [&](std::int32_t token, std::int32_t section, std::int32_t paragraph,
                        std::int32_t sentence) {
    out.token.push_back(token);
    out.section.push_back(section);
    out.paragraph.push_back(paragraph);
    out.sentence.push_back(sentence);
  };
  for (std::size_t i = 0; i < layout.size(); ++i) {
    if (!keep[i]) continue;
    const std::int32_t section = layout.section[i];
    const int depth = layout.tree.depth[section];
    if (markers.room(depth) && (out.section.empty() || out.section.back() != section))
      push(markers.id(depth, levels_clamped), section, -1, -1);  // outside any sentence, as eos
    push(layout.token[i], section, layout.paragraph[i], layout.sentence[i]);
  }
  push(eos, 0, -1, -1);  // outside any sentence, in the root section, as make_layout
  const std::size_t n = out.size();
  out.position.resize(n);
  out.segment.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    out.position[p] = static_cast<std::int32_t>(p);
    out.segment[p] = even_segment(p, n, segments);
  }
  out.tree = std::move(layout.tree);
  layout = std::move(out);
}

// Head: the longest prefix that fits with the markers of the sections it reaches.
std::vector<char> keep_head(const Layout& layout, const SectionMarkers& markers,
                            std::size_t budget) {
  std::vector<char> keep(layout.size());
  std::size_t used = 0;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const bool opens = i == 0 || layout.section[i] != layout.section[i - 1];
    const std::size_t cost = 1 + (opens ? markers.room(layout.tree.depth[layout.section[i]]) : 0);
    if (used + cost > budget) break;
    keep[i] = 1;
    used += cost;
  }
  return keep;
}

// SectionLead: the sections with text, in document order, as long as each fits with its
// marker and one token; the markers' room is set aside and the rest shared among them.
std::vector<char> keep_section_leads(const Layout& layout, const SectionMarkers& markers,
                                     std::size_t budget) {
  std::vector<std::size_t> lengths(layout.tree.size());
  for (std::int32_t s : layout.section) ++lengths[s];
  std::size_t used = 0, marker_room = 0;
  for (std::size_t s = 0; s < lengths.size(); ++s) {
    if (lengths[s] == 0) continue;
    const std::size_t marker = markers.room(layout.tree.depth[s]);
    if (used + 1 + marker > budget) {
      lengths[s] = 0;  // not represented: neither its marker nor its text is kept
      continue;
    }
    used += 1 + marker;
    marker_room += marker;
  }
  std::vector<std::size_t> quota = share_budget(lengths, budget - marker_room);
  std::vector<char> keep(layout.size());
  for (std::size_t i = 0; i < layout.size(); ++i) {
    std::size_t& left = quota[layout.section[i]];
    keep[i] = left > 0;
    left -= left > 0;
  }
  return keep;
}

struct SourceStats {
  bool truncated = false;
  std::size_t levels_clamped = 0;
};

Layout make_source(const Document& document, const Tokenizer& tokenizer,
                   const TruncationOptions& options, std::int32_t eos,
                   const SectionMarkers& markers, SourceStats& stats) {
  const std::size_t budget = options.max_source_tokens - 1;  // eos takes the last slot
  LayoutOptions layout_options;
  layout_options.segments = options.segments;
  // Head needs only the first tokens: one past the budget tells whether any were cut.
  if (options.policy == TruncationPolicy::Head) layout_options.max_tokens = budget + 1;
  Layout layout = make_layout(document, tokenizer, layout_options);

  const std::vector<char> keep = options.policy == TruncationPolicy::Head
                                     ? keep_head(layout, markers, budget)
                                     : keep_section_leads(layout, markers, budget);
  const auto kept = static_cast<std::size_t>(std::count(keep.begin(), keep.end(), 1));
  stats.truncated = kept < layout.size();
  compact(layout, keep, markers, eos, options.segments, stats.levels_clamped);
  return layout;
}

// "section_lead", or "section_lead, lvlsectok" with section tokens.
std::string source_cut_name(const TruncationOptions& options) {
  std::string name = truncation_policy_name(options.policy);
  if (options.section_tokens != SectionTokens::None)
    name.append(", ").append(section_tokens_name(options.section_tokens));
  return name;
}

struct Made {
  Seq2SeqExample example;
  SourceStats source;
  bool target_truncated = false;
};

Made make(const Document& document, const Tokenizer& tokenizer, const TruncationOptions& options,
          std::int32_t eos, const SectionMarkers& markers) {
  Made made;
  made.example.id = document.id;
  made.example.source = options.lead_section.empty()
                            ? make_source(document, tokenizer, options, eos, markers, made.source)
                            : make_source(with_section_first(document, options.lead_section), tokenizer, options, eos,
                                          markers, made.source);
  std::vector<std::int32_t>& target = made.example.target;
  target = tokenizer.encode(document.summary);
  made.target_truncated = target.size() > options.max_target_tokens - 1;
  if (made.target_truncated) target.resize(options.max_target_tokens - 1);
  target.push_back(eos);
  made.example.reference = document.summary;
  return made;
}

}  // namespace

TruncationPolicy truncation_policy_from_name(std::string_view name) {
  if (name == "head") return TruncationPolicy::Head;
  if (name == "section_lead") return TruncationPolicy::SectionLead;
  throw Error(fmt::format("unknown truncation policy '{}' (known: head, section_lead)", name));
}

const char* truncation_policy_name(TruncationPolicy policy) {
  return policy == TruncationPolicy::Head ? "head" : "section_lead";
}

SectionTokens section_tokens_from_name(std::string_view name) {
  if (name == "none") return SectionTokens::None;
  if (name == "sectok") return SectionTokens::Flat;
  if (name == "lvlsectok") return SectionTokens::Level;
  throw Error(fmt::format("unknown section tokens '{}' (known: none, sectok, lvlsectok)", name));
}

const char* section_tokens_name(SectionTokens tokens) {
  switch (tokens) {
    case SectionTokens::None: return "none";
    case SectionTokens::Flat: return "sectok";
    case SectionTokens::Level: return "lvlsectok";
  }
  return "none";
}

std::vector<std::size_t> share_budget(std::span<const std::size_t> section_lengths,
                                      std::size_t budget) {
  std::vector<std::size_t> share(section_lengths.begin(), section_lengths.end());
  if (std::accumulate(share.begin(), share.end(), std::size_t{0}) <= budget) return share;
  std::vector<std::size_t> open;  // non-empty sections, shortest first
  for (std::size_t s = 0; s < share.size(); ++s)
    if (share[s] > 0) open.push_back(s);
  std::stable_sort(open.begin(), open.end(),
                   [&](std::size_t a, std::size_t b) { return share[a] < share[b]; });
  // Sections that fit in an even share of what is left keep everything.
  std::size_t first_open = 0;
  while (share[open[first_open]] <= budget / (open.size() - first_open))
    budget -= share[open[first_open++]];
  // The rest get the same level, the remainder one token each in document order.
  open.erase(open.begin(), open.begin() + static_cast<std::ptrdiff_t>(first_open));
  std::sort(open.begin(), open.end());
  const std::size_t level = budget / open.size();
  std::size_t extra = budget % open.size();
  for (std::size_t s : open) {
    share[s] = level + (extra > 0);
    extra -= extra > 0;
  }
  return share;
}

Document with_section_first(const Document& document, std::string_view heading) {
  const auto matches = [&](const Section& section) { return equals_ignoring_case(section.heading, heading); };
  const std::vector<Section>& children = document.root.children;
  const auto lead = std::find_if(children.begin(), children.end(), matches);
  if (heading.empty() || lead == children.end() || lead == children.begin()) return document;
  Document reordered = document;
  std::vector<Section>& sections = reordered.root.children;
  std::rotate(sections.begin(), sections.begin() + (lead - children.begin()), sections.begin() + (lead - children.begin()) + 1);
  return reordered;
}

Seq2SeqExample make_seq2seq_example(const Document& document, const Tokenizer& tokenizer,
                                    const TruncationOptions& options) {
  check(options);
  const std::int32_t eos = require_eos(tokenizer, "seq2seq examples");
  const SectionMarkers markers(tokenizer, options.section_tokens);
  return make(document, tokenizer, options, eos, markers).example;
}

Seq2SeqExample make_source_example(const Document& document, const Tokenizer& tokenizer,
                                   const TruncationOptions& options) {
  Document without_summary = document;
  without_summary.summary = "x";  // make_seq2seq_example needs a target; decoding ignores it
  Seq2SeqExample example = make_seq2seq_example(without_summary, tokenizer, options);
  example.reference = document.summary;
  return example;
}

std::vector<Seq2SeqExample> load_seq2seq_examples(const std::filesystem::path& jsonl,
                                                  const Tokenizer& tokenizer,
                                                  const TruncationOptions& options,
                                                  bool show_progress, Seq2SeqLoadStats* stats_out) {
  check(options);
  const std::int32_t eos = require_eos(tokenizer, "seq2seq examples");
  const SectionMarkers markers(tokenizer, options.section_tokens);
  DatasetReader reader(jsonl);
  Progress progress(jsonl.filename().string(), 0, "documents", !show_progress);
  Seq2SeqLoadStats stats;
  std::vector<Seq2SeqExample> examples;
  std::vector<Document> batch;

  const auto tokenize_batch = [&] {
    std::vector<Made> made = make_in_parallel<Made>(
        batch, progress, [&](const Document& d) { return make(d, tokenizer, options, eos, markers); });
    for (Made& m : made) {
      stats.sources_truncated += m.source.truncated;
      stats.section_levels_clamped += m.source.levels_clamped;
      stats.targets_truncated += m.target_truncated;
      examples.push_back(std::move(m.example));
    }
    batch.clear();
  };

  Document document;
  while (reader.next(document)) {
    ++stats.documents;
    if (document.empty() || trim(document.summary).empty()) {
      ++stats.skipped;
      progress.add();
      continue;
    }
    batch.push_back(std::move(document));
    if (batch.size() == kDocumentBatch) tokenize_batch();
  }
  tokenize_batch();
  progress.finish();

  if (examples.empty())
    throw error_at(jsonl, 0, "",
                   stats.documents == 0 ? "no documents"
                                        : "no document has both a body and a summary");
  if (stats.skipped > 0)
    warn(fmt::format("{}: skipped {} of {} documents with an empty body or summary",
                     jsonl.string(), stats.skipped, stats.documents));
  if (stats.section_levels_clamped > 0)
    warn(fmt::format("{}: {} sections deeper than level {} got [SEC-L{}], the tokenizer's "
                     "deepest level marker",
                     jsonl.string(), stats.section_levels_clamped, markers.levels(),
                     markers.levels()));
  if (show_progress)
    std::fprintf(stderr,
                 "%s: %zu examples; %zu sources truncated to %zu tokens (%s), %zu targets to "
                 "%zu tokens\n",
                 jsonl.string().c_str(), examples.size(), stats.sources_truncated,
                 options.max_source_tokens, source_cut_name(options).c_str(),
                 stats.targets_truncated, options.max_target_tokens);
  if (stats_out) *stats_out = stats;
  return examples;
}

std::vector<Seq2SeqExample> make_seq2seq_examples(const std::vector<Document>& documents,
                                                  const Tokenizer& tokenizer,
                                                  const TruncationOptions& options,
                                                  Seq2SeqLoadStats* stats) {
  check(options);
  const std::int32_t eos = require_eos(tokenizer, "seq2seq examples");
  const SectionMarkers markers(tokenizer, options.section_tokens);
  Progress quiet("", 0, "documents", /*quiet=*/true);
  std::vector<Made> made = make_in_parallel<Made>(
      documents, quiet, [&](const Document& d) { return make(d, tokenizer, options, eos, markers); });
  std::vector<Seq2SeqExample> examples;
  examples.reserve(made.size());
  Seq2SeqLoadStats counts;
  counts.documents = made.size();
  for (Made& m : made) {
    counts.sources_truncated += m.source.truncated;
    counts.section_levels_clamped += m.source.levels_clamped;
    counts.targets_truncated += m.target_truncated;
    examples.push_back(std::move(m.example));
  }
  if (stats) *stats = counts;
  return examples;
}

std::vector<std::size_t> seq2seq_costs(std::span<const Seq2SeqExample> examples) {
  std::vector<std::size_t> costs;
  costs.reserve(examples.size());
  for (const Seq2SeqExample& example : examples)
    costs.push_back(example.source.size() + example.target.size());
  return costs;
}

}  // namespace strata
