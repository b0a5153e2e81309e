#include "strata/data/extractive_examples.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/core/strings.h"
#include "strata/data/parallel_documents.h"
#include "strata/doc/dataset.h"
#include "strata/eval/rouge.h"
#include "strata/text/tokenizer.h"

namespace strata {

namespace {


void check(const ExtractiveOptions& options) {
  if (options.max_tokens < 3)
    throw Error("extractive examples: max_tokens must be at least 3 ([CLS], a token and [SEP])");
  if (options.oracle_sentences < 1) throw Error("extractive examples: oracle_sentences must be at least 1");
}

struct Wrappers {
  std::int32_t cls = 0, sep = 0;
};

Wrappers wrappers_of(const Tokenizer& tokenizer) {
  const std::optional<std::int32_t> sep = tokenizer.sep_id();
  if (!sep)
    throw Error(fmt::format("extractive examples need a tokenizer with a sep token ([SEP] closes every "
                            "sentence and is what the model reads); this {} tokenizer has none",
                            tokenizer.kind()));
  std::optional<std::int32_t> cls = tokenizer.piece_to_id("[CLS]");
  if (!cls) cls = tokenizer.bos_id();
  if (!cls)
    throw Error(fmt::format("extractive examples need a tokenizer with a [CLS] or bos token (it opens every "
                            "sentence); this {} tokenizer has neither",
                            tokenizer.kind()));
  return {*cls, *sep};
}

// Sentence texts in the order make_layout numbers sentences.
std::vector<std::string_view> sentence_texts(const Document& document) {
  std::vector<std::string_view> texts;
  for_each_section(document.root, [&](const Section& section) {
    for (const Paragraph& paragraph : section.paragraphs)
      for (const Span& sentence : paragraph.sentences) texts.push_back(document.slice(sentence));
  });
  return texts;
}

std::string selection_text(const std::vector<std::string>& sentences, const std::vector<int>& chosen) {
  std::string text;
  for (std::size_t i = 0; i < sentences.size(); ++i) {
    if (!chosen[i]) continue;
    if (!text.empty()) text += '\n';
    text += sentences[i];
  }
  return text;
}

std::set<std::string> word_trigrams(std::string_view text) {
  const std::vector<std::string> words = rouge_tokenize(text, /*use_stemmer=*/false);
  std::set<std::string> trigrams;
  for (std::size_t i = 0; i + 2 < words.size(); ++i)
    trigrams.insert(words[i] + ' ' + words[i + 1] + ' ' + words[i + 2]);
  return trigrams;
}

struct Made {
  std::optional<ExtractiveExample> example;
  bool truncated = false;
};

Made make(const Document& document, const Tokenizer& tokenizer, const ExtractiveOptions& options,
          const Wrappers& wrappers) {
  Made made;
  if (options.needs_reference && trim(document.summary).empty()) return made;
  // Wrapping adds two tokens per sentence, so one token past max_tokens is enough to tell
  // whether text was left out.
  LayoutOptions layout_options;
  layout_options.max_tokens = options.max_tokens + 1;
  Layout text = make_layout(document, tokenizer, layout_options);
  // The text was cut: its last sentence may be partial, so it is kept only when it is the
  // first (and then cut to fit anyway).
  const bool cut_short = text.size() > options.max_tokens;
  made.truncated = cut_short;
  const std::vector<std::string_view> texts = sentence_texts(document);

  ExtractiveExample e;
  Layout& out = e.layout;
  const auto push = [&](std::int32_t token, std::size_t from) {
    out.token.push_back(token);
    out.section.push_back(text.section[from]);
    out.paragraph.push_back(text.paragraph[from]);
    out.sentence.push_back(static_cast<std::int32_t>(e.sentences.size()));
  };
  std::vector<std::int32_t> tokens;
  for (std::size_t begin = 0, end = 0; begin < text.size(); begin = end) {
    while (end < text.size() && text.sentence[end] == text.sentence[begin]) ++end;
    tokens.clear();
    for (std::size_t i = begin; i < end; ++i)
      if (text.token[i] != wrappers.sep) tokens.push_back(text.token[i]);
    if (tokens.empty()) continue;
    const bool first = e.sentences.empty();
    const bool partial = cut_short && end == text.size();
    const std::size_t room = options.max_tokens - out.size();
    if (!first && (partial || tokens.size() + 2 > room)) {
      made.truncated = true;
      break;
    }
    if (tokens.size() + 2 > room) {  // a first sentence longer than everything: cut inside
      tokens.resize(room - 2);
      made.truncated = true;
    }
    push(wrappers.cls, begin);
    for (std::int32_t token : tokens) push(token, begin);
    push(wrappers.sep, begin);
    e.sentences.emplace_back(texts[static_cast<std::size_t>(text.sentence[begin])]);
  }
  if (e.sentences.empty()) return made;

  const std::size_t n = out.size();
  out.position.resize(n);
  std::iota(out.position.begin(), out.position.end(), 0);
  out.segment.assign(n, 0);
  out.tree = std::move(text.tree);
  e.id = document.id;
  e.ids = out.token;
  e.labels = options.needs_reference ? oracle_labels(e.sentences, document.summary, options.oracle_sentences)
                                     : std::vector<int>(e.sentences.size(), 0);
  e.reference = document.summary;
  made.example = std::move(e);
  return made;
}

}  // namespace

std::vector<int> oracle_labels(const std::vector<std::string>& sentences, std::string_view reference,
                               std::size_t max_sentences) {
  static const RougeScorer scorer(std::vector<std::string>{"rouge1", "rouge2"}, /*use_stemmer=*/true);
  std::vector<int> chosen(sentences.size(), 0);
  double best = 0;  // the empty selection's score
  for (std::size_t round = 0; round < max_sentences; ++round) {
    std::optional<std::size_t> pick;
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      if (chosen[i]) continue;
      chosen[i] = 1;
      const std::vector<RougeScore> row = scorer.score_row(reference, selection_text(sentences, chosen));
      chosen[i] = 0;
      const double score = row[0].fmeasure + row[1].fmeasure;
      if (score > best) {
        best = score;
        pick = i;
      }
    }
    if (!pick) break;
    chosen[*pick] = 1;
  }
  return chosen;
}

std::optional<ExtractiveExample> make_extractive_example(const Document& document, const Tokenizer& tokenizer,
                                                         const ExtractiveOptions& options) {
  check(options);
  return make(document, tokenizer, options, wrappers_of(tokenizer)).example;
}

std::vector<std::size_t> select_sentences(std::span<const float> scores, const std::vector<std::string>& sentences,
                                          std::size_t k, bool trigram_blocking) {
  if (scores.size() != sentences.size())
    throw Error(fmt::format("select_sentences: {} scores for {} sentences", scores.size(), sentences.size()));
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  std::vector<std::size_t> chosen;
  std::set<std::string> seen;  // trigrams of the chosen sentences
  for (std::size_t i : order) {
    if (chosen.size() == k) break;
    if (trigram_blocking) {
      const std::set<std::string> trigrams = word_trigrams(sentences[i]);
      if (std::any_of(trigrams.begin(), trigrams.end(), [&](const std::string& t) { return seen.count(t) > 0; }))
        continue;
      seen.insert(trigrams.begin(), trigrams.end());
    }
    chosen.push_back(i);
  }
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::string join_sentences(const std::vector<std::string>& sentences, std::span<const std::size_t> chosen) {
  std::string text;
  for (std::size_t i : chosen) {
    if (!text.empty()) text += '\n';
    text += sentences.at(i);
  }
  return text;
}

std::vector<ExtractiveExample> load_extractive_examples(const std::filesystem::path& jsonl,
                                                        const Tokenizer& tokenizer,
                                                        const ExtractiveOptions& options, bool show_progress,
                                                        ExtractiveLoadStats* stats_out) {
  check(options);
  const Wrappers wrappers = wrappers_of(tokenizer);
  DatasetReader reader(jsonl);
  Progress progress(jsonl.filename().string(), 0, "documents", !show_progress);
  ExtractiveLoadStats stats;
  std::vector<ExtractiveExample> examples;
  std::vector<Document> batch;

  const auto make_batch = [&] {
    std::vector<Made> made = make_in_parallel<Made>(
        batch, progress, [&](const Document& d) { return make(d, tokenizer, options, wrappers); });
    for (Made& m : made) {
      if (!m.example) {
        ++stats.skipped;
        continue;
      }
      stats.truncated += m.truncated;
      examples.push_back(std::move(*m.example));
    }
    batch.clear();
  };

  Document document;
  while (reader.next(document)) {
    ++stats.documents;
    batch.push_back(std::move(document));
    if (batch.size() == kDocumentBatch) make_batch();
  }
  make_batch();
  progress.finish();

  if (examples.empty())
    throw error_at(jsonl, 0, "",
                   stats.documents == 0 ? "no documents" : "no document has both a sentence and a summary");
  if (stats.skipped > 0)
    warn(fmt::format("{}: skipped {} of {} documents without a sentence or a summary", jsonl.string(),
                     stats.skipped, stats.documents));
  if (show_progress)
    std::fprintf(stderr, "%s: %zu extractive examples; %zu truncated to %zu tokens\n", jsonl.string().c_str(),
                 examples.size(), stats.truncated, options.max_tokens);
  if (stats_out) *stats_out = stats;
  return examples;
}

std::vector<std::size_t> extractive_costs(std::span<const ExtractiveExample> examples) {
  std::vector<std::size_t> costs;
  costs.reserve(examples.size());
  for (const ExtractiveExample& example : examples) costs.push_back(example.ids.size());
  return costs;
}

}  // namespace strata
