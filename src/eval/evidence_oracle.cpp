#include "strata/eval/evidence_oracle.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <unordered_map>

#include "strata/core/strings.h"
#include "strata/doc/sentence_splitter.h"
#include "strata/eval/rouge.h"

namespace strata {

namespace {

// Stemmed rouge tokens of many sentences over one numbering, so that any two of them form a
// TokenizedPair without tokenising again (the ids only need to be below `distinct`).
class SentenceTokens {
 public:
  TokenizedText add(std::string_view sentence) {
    TokenizedText text;
    for (std::string& token : rouge_tokenize(sentence, /*use_stemmer=*/true)) {
      const auto [it, added] = ids_.try_emplace(std::move(token), static_cast<std::int32_t>(ids_.size()));
      text.ids.push_back(it->second);
    }
    text.sentence_ends = {static_cast<std::uint32_t>(text.ids.size())};
    return text;
  }
  std::size_t distinct() const { return ids_.size(); }

 private:
  std::unordered_map<std::string, std::int32_t> ids_;
};

double mean_rouge_f(const TokenizedPair& pair) {
  return (rouge_n(pair, 1).fmeasure + rouge_n(pair, 2).fmeasure + rouge_l(pair).fmeasure) / 3;
}

const Section* find_section(const Section& section, std::string_view heading) {
  if (section.level > 0 && equals_ignoring_case(section.heading, heading)) return &section;
  for (const Section& child : section.children)
    if (const Section* found = find_section(child, heading)) return found;
  return nullptr;
}

}  // namespace

std::vector<std::size_t> evidence_oracle(std::span<const std::string> document_sentences,
                                         std::span<const std::string> summary_sentences,
                                         std::size_t per_sentence) {
  SentenceTokens tokens;
  std::vector<TokenizedText> document;
  for (const std::string& sentence : document_sentences) document.push_back(tokens.add(sentence));
  std::vector<TokenizedText> summary;
  for (const std::string& sentence : summary_sentences) summary.push_back(tokens.add(sentence));

  std::vector<std::size_t> picked;
  std::vector<char> taken(document.size(), 0);
  std::vector<double> scores(document.size());
  std::vector<std::size_t> order(document.size());
  TokenizedPair pair;
  pair.distinct = tokens.distinct();
  for (TokenizedText& target : summary) {
    pair.target = std::move(target);
    for (std::size_t i = 0; i < document.size(); ++i) {
      pair.prediction = document[i];
      scores[i] = mean_rouge_f(pair);
    }
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
    for (std::size_t rank = 0; rank < std::min(per_sentence, order.size()); ++rank) {
      const std::size_t i = order[rank];
      if (scores[i] <= 0) break;
      if (!taken[i]) picked.push_back(i);
      taken[i] = 1;
    }
  }
  return picked;
}

std::vector<std::string> document_sentences(const Document& document,
                                            std::string_view section_heading) {
  const Section* start = &document.root;
  if (!section_heading.empty())
    if (const Section* found = find_section(document.root, section_heading)) start = found;
  std::vector<std::string> sentences;
  for_each_section(*start, [&](const Section& section) {
    for (const Paragraph& paragraph : section.paragraphs)
      for (const Span& sentence : paragraph.sentences) sentences.emplace_back(document.slice(sentence));
  });
  return sentences;
}

std::vector<std::string> summary_sentences(std::string_view summary) {
  std::vector<std::string> sentences;
  for (const std::string_view line : split_lines(summary))
    for (const Span& sentence : split_sentences(line))
      sentences.emplace_back(line.substr(sentence.begin, sentence.size()));
  return sentences;
}

}  // namespace strata
