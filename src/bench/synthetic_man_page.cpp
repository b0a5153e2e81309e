#include "synthetic_man_page.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <random>
#include <vector>

namespace strata::bench {

namespace {

constexpr std::int32_t kPeriod = 4;     // the token ending every sentence; 0-3 are special
constexpr std::int32_t kFirstWord = 5;  // word ids kFirstWord.. by falling frequency
constexpr int kShortestSentence = 8, kLongestSentence = 40;

}  // namespace

Layout man_page(std::int64_t length) {
  static const char* const headings[] = {"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS",
                                         "ENVIRONMENT", "FILES", "EXAMPLES", "BUGS", "SEE ALSO"};
  std::mt19937 random(20240607u);
  const auto below = [&random](int n) { return static_cast<int>(random() % static_cast<std::uint32_t>(n)); };
  std::vector<double> cumulative;
  double total = 0;
  for (std::int64_t rank = 1; rank <= kManPageVocab - kFirstWord; ++rank)
    cumulative.push_back(total += 1.0 / std::pow(static_cast<double>(rank), kManPageZipfExponent));
  const auto word = [&] {
    const double u = (static_cast<double>(random()) + 0.5) / 4294967296.0 * total;
    const auto rank = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
    return static_cast<std::int32_t>(kFirstWord + std::min<std::int64_t>(rank, kManPageVocab - kFirstWord - 1));
  };

  Layout layout;
  layout.tree.parent = {-1};
  layout.tree.depth = {0};
  layout.tree.heading = {"page"};
  std::int32_t section = 0, paragraph = -1, sentence = -1;
  int sentences_left_in_section = 0, sentences_left_in_paragraph = 0;
  while (static_cast<std::int64_t>(layout.size()) < length) {
    if (sentences_left_in_section == 0) {
      ++section;
      layout.tree.parent.push_back(0);
      layout.tree.depth.push_back(1);
      layout.tree.heading.emplace_back(headings[(section - 1) % std::size(headings)]);
      sentences_left_in_section = section == 1 ? 1 : 6 + below(15);  // NAME: one line
      sentences_left_in_paragraph = 0;
    }
    if (sentences_left_in_paragraph == 0) {
      ++paragraph;
      sentences_left_in_paragraph = 2 + below(5);
    }
    ++sentence;
    --sentences_left_in_section;
    --sentences_left_in_paragraph;
    const int tokens = kShortestSentence + below(kLongestSentence - kShortestSentence + 1);
    for (int t = 0; t < tokens && static_cast<std::int64_t>(layout.size()) < length; ++t) {
      layout.position.push_back(static_cast<std::int32_t>(layout.size()));
      layout.token.push_back(t + 1 == tokens ? kPeriod : word());
      layout.section.push_back(section);
      layout.paragraph.push_back(paragraph);
      layout.sentence.push_back(sentence);
      layout.segment.push_back(0);
    }
  }
  return layout;
}

PageStats page_stats(const Layout& page) {
  PageStats s;
  s.sections = page.tree.size() - 1;
  s.sentences = page.sentence.empty() ? 0 : page.sentence.back() + 1;
  std::map<std::int32_t, std::int64_t> count;
  for (std::int32_t t : page.token) ++count[t];
  s.distinct = static_cast<std::int64_t>(count.size());
  for (std::int32_t t : page.token) s.once_seen += count[t] == 1;
  std::vector<std::int64_t> sentence_tokens(static_cast<std::size_t>(s.sentences), 0);
  for (std::int32_t id : page.sentence) ++sentence_tokens[static_cast<std::size_t>(id)];
  if (s.sentences > 1) {
    const auto [lo, hi] = std::minmax_element(sentence_tokens.begin(), sentence_tokens.end() - 1);
    s.shortest = *lo;
    s.longest = *hi;
  }
  return s;
}

}  // namespace strata::bench
