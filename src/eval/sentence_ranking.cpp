#include "strata/eval/sentence_ranking.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "strata/eval/porter_stemmer.h"
#include "strata/eval/rouge.h"

namespace strata {

namespace {

// NLTK's English stop words (nltk.corpus.stopwords), less the forms with an apostrophe: the
// rouge tokenizer splits those into pieces ("don't" -> "don", "t") that the list also holds.
bool is_stop_word(std::string_view word) {
  static const std::unordered_set<std::string_view> kStopWords = {
      "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
      "yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
      "it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which",
      "who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be",
      "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an",
      "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by",
      "for", "with", "about", "against", "between", "into", "through", "during", "before",
      "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over",
      "under", "again", "further", "then", "once", "here", "there", "when", "where", "why",
      "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no",
      "nor", "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will",
      "just", "don", "should", "now", "d", "ll", "m", "o", "re", "ve", "y", "ain", "aren",
      "couldn", "didn", "doesn", "hadn", "hasn", "haven", "isn", "ma", "mightn", "mustn",
      "needn", "shan", "shouldn", "wasn", "weren", "won", "wouldn"};
  return kStopWords.contains(word);
}

// Every sentence's words (see the header) as ids 0 .. distinct - 1 over one numbering, in
// order, with repeats.
struct Words {
  std::vector<std::vector<std::int32_t>> sentences;
  std::size_t distinct = 0;
};

Words words_of(std::span<const std::string> sentences) {
  std::unordered_map<std::string, std::int32_t> ids;
  Words words;
  for (const std::string& sentence : sentences) {
    std::vector<std::int32_t>& out = words.sentences.emplace_back();
    for (const std::string& token : rouge_tokenize(sentence, /*use_stemmer=*/false)) {
      if (is_stop_word(token)) continue;
      std::string word = token.size() > 3 ? porter_stem(token) : token;
      out.push_back(ids.try_emplace(std::move(word), static_cast<std::int32_t>(ids.size())).first->second);
    }
  }
  words.distinct = ids.size();
  return words;
}

// A sentence's distinct words with their counts, by id.
std::vector<std::pair<std::int32_t, double>> counts_of(std::vector<std::int32_t> words) {
  std::sort(words.begin(), words.end());
  std::vector<std::pair<std::int32_t, double>> counts;
  for (const std::int32_t word : words) {
    if (counts.empty() || counts.back().first != word) counts.emplace_back(word, 0.0);
    counts.back().second += 1;
  }
  return counts;
}

// A sentence's distinct words, by id.
std::vector<std::int32_t> word_set(std::vector<std::int32_t> words) {
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

// PageRank over an n x n row-major matrix of edge weights (see the header).
std::vector<double> pagerank(std::size_t n, std::vector<double> weights, const PageRankOptions& options) {
  std::vector<char> dangling(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const auto row = weights.begin() + static_cast<std::ptrdiff_t>(i * n);
    const double sum = std::accumulate(row, row + static_cast<std::ptrdiff_t>(n), 0.0);
    if (sum > 0)
      std::for_each(row, row + static_cast<std::ptrdiff_t>(n), [&](double& w) { w /= sum; });
    else
      dangling[i] = 1;
  }
  const double d = options.damping, size = static_cast<double>(n);
  std::vector<double> p(n, 1 / size), next(n);
  for (int iteration = 0; iteration < options.max_iterations; ++iteration) {
    double jumping = 0;
    for (std::size_t i = 0; i < n; ++i)
      if (dangling[i]) jumping += p[i];
    std::fill(next.begin(), next.end(), (1 - d) / size + d * jumping / size);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) next[j] += d * weights[i * n + j] * p[i];
    double change = 0;
    for (std::size_t i = 0; i < n; ++i) change += std::abs(next[i] - p[i]);
    p.swap(next);
    if (change < options.tolerance) break;
  }
  return p;
}

std::vector<std::size_t> top_k(const std::vector<double>& scores, std::size_t k) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  order.resize(std::min(k, order.size()));
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace

std::vector<double> lexrank_scores(std::span<const std::string> sentences,
                                   const LexRankOptions& options) {
  const Words words = words_of(sentences);
  const std::size_t n = sentences.size();
  std::vector<std::vector<std::pair<std::int32_t, double>>> vectors;
  std::vector<double> df(words.distinct, 0);
  for (const std::vector<std::int32_t>& sentence : words.sentences) {
    vectors.push_back(counts_of(sentence));
    for (const auto& [word, count] : vectors.back()) df[word] += 1;
  }
  std::vector<double> norms;
  for (auto& vector : vectors) {
    double squares = 0;
    for (auto& [word, weight] : vector) {
      weight *= std::log(static_cast<double>(n) / df[word]);
      squares += weight * weight;
    }
    norms.push_back(std::sqrt(squares));
  }
  const auto cosine = [&](std::size_t i, std::size_t j) {
    if (norms[i] == 0 || norms[j] == 0) return 0.0;
    double dot = 0;
    auto a = vectors[i].begin(), b = vectors[j].begin();
    while (a != vectors[i].end() && b != vectors[j].end()) {
      if (a->first < b->first) ++a;
      else if (b->first < a->first) ++b;
      else dot += (a++)->second * (b++)->second;
    }
    return dot / (norms[i] * norms[j]);
  };
  std::vector<double> edges(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    edges[i * n + i] = 1;
    for (std::size_t j = i + 1; j < n; ++j)
      if (cosine(i, j) > options.threshold) edges[i * n + j] = edges[j * n + i] = 1;
  }
  return pagerank(n, std::move(edges), options.pagerank);
}

std::vector<double> textrank_scores(std::span<const std::string> sentences,
                                    const PageRankOptions& options) {
  const Words words = words_of(sentences);
  const std::size_t n = sentences.size();
  std::vector<std::vector<std::int32_t>> sets;
  for (const std::vector<std::int32_t>& sentence : words.sentences) sets.push_back(word_set(sentence));
  std::vector<double> edges(n * n, 0);
  std::vector<std::int32_t> common;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      if (words.sentences[i].empty() || words.sentences[j].empty()) continue;
      common.clear();
      std::set_intersection(sets[i].begin(), sets[i].end(), sets[j].begin(), sets[j].end(),
                            std::back_inserter(common));
      const double denominator = std::log(static_cast<double>(words.sentences[i].size())) +
                                 std::log(static_cast<double>(words.sentences[j].size()));
      if (denominator > 0)
        edges[i * n + j] = edges[j * n + i] = static_cast<double>(common.size()) / denominator;
    }
  return pagerank(n, std::move(edges), options);
}

std::vector<std::size_t> lexrank(std::span<const std::string> sentences, std::size_t k) {
  return top_k(lexrank_scores(sentences), k);
}

std::vector<std::size_t> textrank(std::span<const std::string> sentences, std::size_t k) {
  return top_k(textrank_scores(sentences), k);
}

std::vector<std::size_t> sumbasic(std::span<const std::string> sentences, std::size_t k) {
  const Words words = words_of(sentences);
  std::vector<double> p(words.distinct, 0);
  std::size_t total = 0;
  for (const std::vector<std::int32_t>& sentence : words.sentences) {
    for (const std::int32_t word : sentence) p[word] += 1;
    total += sentence.size();
  }
  for (double& probability : p) probability /= static_cast<double>(total);
  std::vector<std::vector<std::int32_t>> sets;
  for (const std::vector<std::int32_t>& sentence : words.sentences) sets.push_back(word_set(sentence));

  std::vector<char> taken(sentences.size(), 0);
  std::vector<std::size_t> picks;
  while (picks.size() < std::min(k, sentences.size())) {
    std::size_t best = 0;
    double best_score = -1;
    for (std::size_t i = 0; i < sentences.size(); ++i) {
      if (taken[i]) continue;
      double score = 0;
      for (const std::int32_t word : sets[i]) score += p[word];
      if (!sets[i].empty()) score /= static_cast<double>(sets[i].size());
      if (score > best_score) {
        best = i;
        best_score = score;
      }
    }
    taken[best] = 1;
    picks.push_back(best);
    for (const std::int32_t word : sets[best]) p[word] *= p[word];
  }
  std::sort(picks.begin(), picks.end());
  return picks;
}

}  // namespace strata
