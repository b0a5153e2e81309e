#pragma once
// The unsupervised extractive baselines a summarisation reader expects beside lead-N:
// LexRank (Erkan & Radev 2004), TextRank (Mihalcea & Tarau 2004) and SumBasic (Nenkova &
// Vanderwende 2005). They read only the document, so they are systems, not upper bounds.
//
// Words: rouge-score's tokens without stemming (lower-cased [a-z0-9] runs), less the English
// stop words (NLTK's list), then Porter-stemmed as rouge-score stems (tokens over three
// characters), so that "copies" and "copy" count as one word, as in sumy's implementations
// and in `strata eval rouge --stem`. Stop words go before stemming: their list is of words.
//
// Both graph methods rank by PageRank with damping d, by power iteration from the uniform
// vector until the L1 change is below `tolerance`: p' = (1 - d) / N + d * (P^T p + z / N),
// with P the similarity graph with each row divided by its sum and z the score on sentences
// with no edge (they jump anywhere, as in networkx.pagerank). Scores are positive and sum to 1.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace strata {

struct PageRankOptions {
  double damping = 0.85;
  double tolerance = 1e-6;  // on the L1 change between iterations
  int max_iterations = 200;
};

struct LexRankOptions {
  double threshold = 0.1;  // an edge where the idf-modified cosine is above it
  PageRankOptions pagerank;
};

// LexRank centrality of every sentence. Similarity: the cosine of tf * idf vectors with
// idf(w) = log(N / df(w)) over the N sentences as documents (0 when a vector is all zero).
// The graph is unweighted: an edge where the similarity is above the threshold, and always
// from a sentence to itself, so every row is divided by the sentence's degree.
std::vector<double> lexrank_scores(std::span<const std::string> sentences,
                                   const LexRankOptions& options = {});

// TextRank scores: weighted PageRank over similarity(i, j) = |words in both| /
// (log |S_i| + log |S_j|), |S| counting a sentence's words with repeats, 0 when the
// denominator is not positive; no sentence links to itself.
std::vector<double> textrank_scores(std::span<const std::string> sentences,
                                    const PageRankOptions& options = {});

// The indices of the k sentences with the highest scores (ties to the earlier sentence), in
// document order; all of them when there are fewer than k.
std::vector<std::size_t> lexrank(std::span<const std::string> sentences, std::size_t k);
std::vector<std::size_t> textrank(std::span<const std::string> sentences, std::size_t k);

// SumBasic: p(w) = count(w) / words over the whole text; k times, pick the unpicked sentence
// with the highest mean p over its distinct words (a sentence without words scores 0; ties
// to the earlier), then square p of each of its words, so that repeating them pays less.
// The picks in document order.
std::vector<std::size_t> sumbasic(std::span<const std::string> sentences, std::size_t k);

}  // namespace strata
