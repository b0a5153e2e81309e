#include "strata/eval/baselines.h"

#include <algorithm>

#include "strata/eval/evidence_oracle.h"
#include "strata/eval/rouge.h"

namespace strata {

std::string lead_summary(const Document& document, std::size_t sentences,
                         std::string_view section_heading) {
  const std::vector<std::string> all = document_sentences(document, section_heading);
  std::string out;
  for (std::size_t i = 0; i < std::min(sentences, all.size()); ++i) {
    if (i > 0) out += '\n';
    out += all[i];
  }
  return out;
}

std::string oracle_sentence(const Document& document, std::string_view reference) {
  static const RougeScorer scorer(std::vector<std::string>{"rouge1", "rouge2"}, /*use_stemmer=*/true);
  std::string_view best;
  double best_score = -1;
  for_each_section(document.root, [&](const Section& section) {
    for (const Paragraph& paragraph : section.paragraphs)
      for (const Span& sentence : paragraph.sentences) {
        const std::string_view text = document.slice(sentence);
        const std::vector<RougeScore> row = scorer.score_row(reference, text);
        const double score = row[0].fmeasure + row[1].fmeasure;
        if (score > best_score) {
          best_score = score;
          best = text;
        }
      }
  });
  return std::string(best);
}

}  // namespace strata
