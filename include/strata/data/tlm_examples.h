#pragma once
// Thesis ch. 2's Transformer LM summariser (TLM): a decoder-only LM trained on documents
// formatted as
//     [INTRO] intro [EXTRACT] extracted sentences [SUMMARY] summary [REST] rest <eos>
// so that it learns p(summary | intro, extracts) with a plain LM loss, the summary coming after
// its evidence. The sequence is cut into non-overlapping windows; budgets on the intro (a),
// the extract (b) and the summary (c) tokens keep the summary in the first window with its
// evidence, and the rest (the other sections: more in-domain LM data) fills the windows after.
// Without extracts the [EXTRACT] block is left out (TLM, TLM-I). A summary always ends at
// [REST] (followed by <eos> when there is no rest), which is where decoding stops.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/doc/document.h"

namespace strata {

class Tokenizer;

// The part markers, special tokens of the tokenizer (`strata tokenizer train --special`).
inline constexpr std::string_view kTlmIntro = "[INTRO]";
inline constexpr std::string_view kTlmExtract = "[EXTRACT]";
inline constexpr std::string_view kTlmSummary = "[SUMMARY]";
inline constexpr std::string_view kTlmRest = "[REST]";

struct TlmMarkers {
  std::int32_t intro = 0, extract = 0, summary = 0, rest = 0, eos = 0;
};
// strata::Error naming the missing markers and how to train a tokenizer with them.
TlmMarkers tlm_markers(const Tokenizer& tokenizer);

struct TlmFormat {
  std::size_t window = 512;          // tokens per training example (data.block_size)
  std::size_t intro_tokens = 256;    // a
  std::size_t extract_tokens = 128;  // b
  std::size_t summary_tokens = 64;   // c
  bool with_rest = true;             // the rest is LM data after the summary
  // The sections, by heading (case-insensitive), whose paragraphs make the intro, in document
  // order; the rest is every other paragraph. Empty, or a document with none of them: the
  // intro is the whole document and there is no rest.
  std::vector<std::string> intro_sections = {"SYNOPSIS", "DESCRIPTION"};

  // strata::Error unless a, b, c are positive and the markers, a, b and c fit one window.
  void check() const;
};

struct TlmParts {
  std::string intro, rest;  // paragraphs joined by "\n\n"
};
TlmParts tlm_parts(const Document& document, const std::vector<std::string>& intro_sections);

// What the model reads before it writes the summary, and the parts as it reads them (the
// intro and the extract cut to their budgets), for the copy analysis.
struct TlmPrompt {
  std::vector<std::int32_t> ids;  // [INTRO] intro [EXTRACT] extract [SUMMARY]
  std::vector<std::int32_t> intro, extract;
};
// `extract` null: no [EXTRACT] block (TLM, TLM-I); its sentences are joined by spaces.
TlmPrompt tlm_prompt(const TlmParts& parts, const std::vector<std::string>* extract, const Tokenizer& tokenizer,
                     const TlmFormat& format, const TlmMarkers& markers);

// The whole formatted sequence of a document: the prompt, the summary cut to its budget,
// [REST], the rest (when format.with_rest), <eos>.
std::vector<std::int32_t> tlm_sequence(const Document& document, const std::vector<std::string>* extract,
                                       const Tokenizer& tokenizer, const TlmFormat& format, const TlmMarkers& markers);

// Where a document's extract comes from: the chapter's oracle on the reference (G), none, or a
// model's extracts (M): a JSONL file of {id, prediction} lines, the prediction's sentences one
// per line (what `strata extract --out` and `strata baseline` write).
struct TlmExtracts {
  enum class Kind { Gold, None, File } kind = Kind::Gold;
  std::map<std::string, std::vector<std::string>> by_id;  // Kind::File

  // "gold", "none", or a file path; strata::Error naming the file, line and field.
  static TlmExtracts parse(const std::string& spec);
  // Null for Kind::None; strata::Error naming the id when the file has no line for it.
  std::optional<std::vector<std::string>> of(const Document& document) const;
};

// The training windows of every document of a JSONL dataset (documents without a summary are
// skipped with a warning), in file order, made in parallel: each document's sequence cut into
// non-overlapping windows of format.window tokens (a last, shorter one kept when it has at
// least 2 tokens). strata::Error naming the file when nothing is left.
std::vector<std::vector<std::int32_t>> load_tlm_windows(const std::filesystem::path& jsonl,
                                                        const Tokenizer& tokenizer, const TlmFormat& format,
                                                        const TlmExtracts& extracts, bool show_progress);

}  // namespace strata
