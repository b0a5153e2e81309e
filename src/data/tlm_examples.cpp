#include "strata/data/tlm_examples.h"

#include <algorithm>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/jsonl.h"
#include "strata/core/progress.h"
#include "strata/core/strings.h"
#include "strata/data/lm_examples.h"
#include "strata/data/parallel_documents.h"
#include "strata/eval/evidence_oracle.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {

constexpr std::size_t kMarkersInWindow = 4;  // [INTRO] [EXTRACT] [SUMMARY] [REST]

void append(std::string& text, std::string_view paragraph) {
  if (!text.empty()) text += "\n\n";
  text += paragraph;
}

std::vector<std::int32_t> encode_cut(const Tokenizer& tokenizer, std::string_view text, std::size_t budget) {
  std::vector<std::int32_t> ids = tokenizer.encode(text);
  if (ids.size() > budget) ids.resize(budget);
  return ids;
}

std::string joined(const std::vector<std::string>& sentences) {
  std::string text;
  for (const std::string& sentence : sentences) {
    if (!text.empty()) text += ' ';
    text += sentence;
  }
  return text;
}

}  // namespace

TlmMarkers tlm_markers(const Tokenizer& tokenizer) {
  std::vector<std::string> missing;
  const auto id = [&](std::string_view piece) {
    const std::optional<std::int32_t> found = tokenizer.piece_to_id(piece);
    if (!found) missing.emplace_back(piece);
    return found.value_or(0);
  };
  TlmMarkers markers{id(kTlmIntro), id(kTlmExtract), id(kTlmSummary), id(kTlmRest), 0};
  if (!missing.empty()) {
    std::string names;
    for (const std::string& name : missing) names += (names.empty() ? "" : " ") + name;
    throw Error(fmt::format("the TLM format needs the special tokens {} {} {} {}; this tokenizer lacks {} (train "
                            "one with `strata tokenizer train --special '{},{},{},{}'`)",
                            kTlmIntro, kTlmExtract, kTlmSummary, kTlmRest, names, kTlmIntro, kTlmExtract,
                            kTlmSummary, kTlmRest));
  }
  markers.eos = require_eos(tokenizer, "the TLM format");
  return markers;
}

void TlmFormat::check() const {
  if (intro_tokens == 0 || extract_tokens == 0 || summary_tokens == 0)
    throw Error("tlm: intro_tokens, extract_tokens and summary_tokens must be positive");
  const std::size_t first = intro_tokens + extract_tokens + summary_tokens + kMarkersInWindow;
  if (first > window)
    throw Error(fmt::format("tlm: the intro, extract and summary budgets ({} + {} + {}) and {} markers need {} tokens, "
                            "more than a window of {} (data.block_size): the summary could leave its evidence's window",
                            intro_tokens, extract_tokens, summary_tokens, kMarkersInWindow, first, window));
}

TlmParts tlm_parts(const Document& document, const std::vector<std::string>& intro_sections) {
  TlmParts intro_and_rest, whole;
  bool found = false;
  for_each_section(document.root, [&](const Section& section) {
    const bool intro = std::any_of(intro_sections.begin(), intro_sections.end(),
                                   [&](const std::string& heading) { return equals_ignoring_case(heading, section.heading); });
    found = found || intro;
    for (const Paragraph& paragraph : section.paragraphs) {
      append(intro ? intro_and_rest.intro : intro_and_rest.rest, document.slice(paragraph.span));
      append(whole.intro, document.slice(paragraph.span));
    }
  });
  return found ? intro_and_rest : whole;
}

TlmPrompt tlm_prompt(const TlmParts& parts, const std::vector<std::string>* extract, const Tokenizer& tokenizer,
                     const TlmFormat& format, const TlmMarkers& markers) {
  TlmPrompt prompt;
  prompt.intro = encode_cut(tokenizer, parts.intro, format.intro_tokens);
  prompt.ids.push_back(markers.intro);
  prompt.ids.insert(prompt.ids.end(), prompt.intro.begin(), prompt.intro.end());
  if (extract) {
    prompt.extract = encode_cut(tokenizer, joined(*extract), format.extract_tokens);
    prompt.ids.push_back(markers.extract);
    prompt.ids.insert(prompt.ids.end(), prompt.extract.begin(), prompt.extract.end());
  }
  prompt.ids.push_back(markers.summary);
  return prompt;
}

std::vector<std::int32_t> tlm_sequence(const Document& document, const std::vector<std::string>* extract,
                                       const Tokenizer& tokenizer, const TlmFormat& format, const TlmMarkers& markers) {
  const TlmParts parts = tlm_parts(document, format.intro_sections);
  std::vector<std::int32_t> ids = tlm_prompt(parts, extract, tokenizer, format, markers).ids;
  const std::vector<std::int32_t> summary = encode_cut(tokenizer, document.summary, format.summary_tokens);
  ids.insert(ids.end(), summary.begin(), summary.end());
  ids.push_back(markers.rest);
  if (format.with_rest) {
    const std::vector<std::int32_t> rest = tokenizer.encode(parts.rest);
    ids.insert(ids.end(), rest.begin(), rest.end());
  }
  ids.push_back(markers.eos);
  return ids;
}

TlmExtracts TlmExtracts::parse(const std::string& spec) {
  TlmExtracts extracts;
  if (spec == "gold") return extracts;
  if (spec == "none") {
    extracts.kind = Kind::None;
    return extracts;
  }
  extracts.kind = Kind::File;
  JsonlReader reader(spec);
  nlohmann::json line;
  while (reader.next(line)) {
    const std::string id = reader.string_field(line, "id");
    std::vector<std::string> sentences;
    const std::string prediction = reader.string_field(line, "prediction");
    for (std::string_view sentence : split_lines(prediction))
      if (!trim(sentence).empty()) sentences.emplace_back(trim(sentence));
    if (!extracts.by_id.emplace(id, std::move(sentences)).second)
      throw reader.error("id", "'" + id + "' appears twice");
  }
  if (extracts.by_id.empty()) throw error_at(spec, 0, "", "no extracts");
  return extracts;
}

std::optional<std::vector<std::string>> TlmExtracts::of(const Document& document) const {
  switch (kind) {
    case Kind::None:
      return std::nullopt;
    case Kind::Gold: {
      const std::vector<std::string> sentences = document_sentences(document);
      std::vector<std::string> picked;
      for (std::size_t i : evidence_oracle(sentences, summary_sentences(document.summary)))
        picked.push_back(sentences[i]);
      return picked;
    }
    case Kind::File:
      break;
  }
  const auto found = by_id.find(document.id);
  if (found == by_id.end()) throw Error("tlm.extracts: no extract for document '" + document.id + "'");
  return found->second;
}

std::vector<std::vector<std::int32_t>> load_tlm_windows(const std::filesystem::path& jsonl,
                                                        const Tokenizer& tokenizer, const TlmFormat& format,
                                                        const TlmExtracts& extracts, bool show_progress) {
  format.check();
  const TlmMarkers markers = tlm_markers(tokenizer);
  Progress progress(jsonl.filename().string(), 0, "documents", !show_progress);
  std::vector<std::vector<std::int32_t>> windows;
  std::size_t skipped = 0;
  using Sequence = std::vector<std::int32_t>;
  const std::size_t documents = make_from_dataset<Sequence>(
      jsonl, progress,
      [&](const Document& d) {
        if (trim(d.summary).empty()) return Sequence{};
        const auto extract = extracts.of(d);
        return tlm_sequence(d, extract ? &*extract : nullptr, tokenizer, format, markers);
      },
      [&](Sequence& sequence) {
        if (sequence.empty())
          ++skipped;
        else
          for (auto& window : make_lm_chunks(sequence, format.window)) windows.push_back(std::move(window));
      });
  progress.finish();
  if (windows.empty())
    throw error_at(jsonl, 0, "", documents == 0 ? "no documents" : "no document has a summary");
  if (skipped > 0)
    warn(fmt::format("{}: skipped {} of {} documents without a summary", jsonl.string(), skipped, documents));
  return windows;
}

}  // namespace strata
