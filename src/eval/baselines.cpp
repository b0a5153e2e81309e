#include "strata/eval/baselines.h"

#include <algorithm>
#include <cctype>

#include "strata/eval/rouge.h"

namespace strata {

namespace {
bool same_heading(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

const Section* find_section(const Section& section, std::string_view heading) {
  if (section.level > 0 && same_heading(section.heading, heading)) return &section;
  for (const Section& child : section.children)
    if (const Section* found = find_section(child, heading)) return found;
  return nullptr;
}
}  // namespace

std::string lead_summary(const Document& document, std::size_t sentences,
                         std::string_view section_heading) {
  const Section* start = &document.root;
  if (!section_heading.empty())
    if (const Section* found = find_section(document.root, section_heading)) start = found;
  std::string out;
  std::size_t taken = 0;
  for_each_section(*start, [&](const Section& section) {
    for (const Paragraph& paragraph : section.paragraphs)
      for (const Span& sentence : paragraph.sentences) {
        if (taken == sentences) return;
        if (taken++ > 0) out += '\n';
        out += document.slice(sentence);
      }
  });
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
