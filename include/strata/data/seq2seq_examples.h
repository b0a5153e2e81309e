#pragma once
// Summarisation training examples: a document's tokens with their structure (a Layout, so
// structured attention can read section, sentence and segment ids) as the source, its
// reference summary's tokens as the target. docs/training-data.md describes the forms and
// the truncation policies.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/doc/document.h"
#include "strata/doc/layout.h"

namespace strata {

class Tokenizer;

enum class TruncationPolicy {
  Head,         // the first tokens in document order
  SectionLead,  // the leading tokens of every section, the budget shared among sections
};

// "head", "section_lead"; strata::Error listing the known names otherwise.
TruncationPolicy truncation_policy_from_name(std::string_view name);
const char* truncation_policy_name(TruncationPolicy policy);

// Structural markers in the source (seed 001 §5.2, the SECTOK and LVLSECTOK comparisons),
// inserted before the first kept token of every section below the root that keeps text.
enum class SectionTokens {
  None,   // no markers
  Flat,   // [SEC] for every section
  Level,  // [SEC-Ld] for a section of depth d; [SEC-Ln], the tokenizer's deepest, below that
};

// "none", "sectok", "lvlsectok"; strata::Error listing the known names otherwise.
SectionTokens section_tokens_from_name(std::string_view name);
const char* section_tokens_name(SectionTokens tokens);

struct TruncationOptions {
  std::size_t max_source_tokens = 512;  // eos included; at least 2
  std::size_t max_target_tokens = 64;   // eos included; at least 2
  TruncationPolicy policy = TruncationPolicy::Head;
  int segments = 1;  // K of the source layout's even split into segments
  SectionTokens section_tokens = SectionTokens::None;  // count against max_source_tokens
  // A top-level section read first (its heading, e.g. "DESCRIPTION", compared without case),
  // the others after it in their order; before the cut, so it is kept. "" or no such section:
  // document order.
  std::string lead_section;
};

// `document` with its top-level section headed `heading` (compared without case) first, the
// others after it in their order; unchanged when none is (or `heading` is empty). Sections
// keep their spans into the text: only the order in which they are read changes.
Document with_section_first(const Document& document, std::string_view heading);

struct Seq2SeqExample {
  std::string id;
  Layout source;                     // the document's tokens, then eos (no bos)
  std::vector<std::int32_t> target;  // the summary's tokens, then eos
  std::string reference;             // the summary untruncated, for ROUGE
};

// How many tokens each section keeps when `budget` tokens are shared among sections of
// the given lengths: an even share each, and what a short section leaves unused goes to
// the others (water-filling). Tokens that do not divide evenly go to the earliest sections.
// When the budget is smaller than the number of non-empty sections, the first `budget`
// of them keep one token each.
std::vector<std::size_t> share_budget(std::span<const std::size_t> section_lengths,
                                      std::size_t budget);

// strata::Error when the tokenizer has no eos, lacks the section markers the options ask
// for ([SEC], or [SEC-L1] at least), or the options leave no room for text.
Seq2SeqExample make_seq2seq_example(const Document& document, const Tokenizer& tokenizer,
                                    const TruncationOptions& options);
// An example to decode: the source only (the target is a placeholder), the reference the
// document's summary when it has one.
Seq2SeqExample make_source_example(const Document& document, const Tokenizer& tokenizer,
                                   const TruncationOptions& options);

struct Seq2SeqLoadStats {
  std::size_t documents = 0;          // documents read
  std::size_t skipped = 0;            // documents with an empty body or summary
  std::size_t sources_truncated = 0;  // of the examples made
  std::size_t targets_truncated = 0;
  std::size_t section_levels_clamped = 0;  // level markers of sections deeper than [SEC-Ln]
};

// Examples of every usable document of a JSONL dataset (any shape DatasetReader knows), in
// file order, tokenized in parallel. Documents with an empty body or summary are skipped
// with a warning; strata::Error naming the file when none is left, and on any bad line
// (FILE:LINE). `stats`, when given, receives the counts.
std::vector<Seq2SeqExample> load_seq2seq_examples(const std::filesystem::path& jsonl,
                                                  const Tokenizer& tokenizer,
                                                  const TruncationOptions& options,
                                                  bool show_progress,
                                                  Seq2SeqLoadStats* stats = nullptr);

// Examples of documents in memory, each with its summary as the target, tokenized in
// parallel; none is skipped. `stats`, when given, receives the truncation counts.
std::vector<Seq2SeqExample> make_seq2seq_examples(const std::vector<Document>& documents,
                                                  const Tokenizer& tokenizer,
                                                  const TruncationOptions& options,
                                                  Seq2SeqLoadStats* stats = nullptr);

// The per-example cost plan_batches (token_batches.h) expects: source + target tokens.
std::vector<std::size_t> seq2seq_costs(std::span<const Seq2SeqExample> examples);

}  // namespace strata
