#pragma once
// Toy StepModels for the decoding tests. The next-token distribution is a function of a
// row's input and of every token fed to that row so far, kept per row: a search that does
// not honour reorder() feeds a row tokens of another hypothesis and sees other numbers.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "strata/decode/step_model.h"

namespace strata::test_support {

constexpr std::int64_t kStart = 0;
constexpr std::int64_t kEos = 1;
constexpr std::int64_t kPad = 2;

// Non-negative weights of each next token (normalised by the model) given the row's input and
// the tokens fed to it (the start token first).
using NextWeights =
    std::function<std::vector<double>(std::int64_t input, const std::vector<std::int64_t>& fed)>;

class PrefixModel : public decode::StepModel {
 public:
  struct Row {
    std::int64_t input;
    std::vector<std::int64_t> fed;
  };

  PrefixModel(const std::vector<std::int64_t>& inputs, NextWeights weights)
      : weights_(std::move(weights)) {
    for (std::int64_t input : inputs) rows_.push_back({input, {}});
  }

  std::int64_t rows() const override { return static_cast<std::int64_t>(rows_.size()); }

  at::Tensor step(const at::Tensor& tokens) override {
    EXPECT_EQ(tokens.dim(), 1);
    EXPECT_EQ(tokens.size(0), rows());
    std::vector<double> flat;
    for (std::int64_t i = 0; i < rows(); ++i) {
      Row& row = rows_[i];
      row.fed.push_back(tokens[i].item<std::int64_t>());
      const std::vector<double> lp = log_probs(weights_(row.input, row.fed));
      flat.insert(flat.end(), lp.begin(), lp.end());
    }
    const at::Tensor result =
        at::tensor(flat, at::kDouble).view({rows(), -1}).to(at::kFloat);
    ++steps;
    return result;
  }

  void reorder(const at::Tensor& index) override {
    std::vector<Row> kept;
    for (std::int64_t i = 0; i < index.size(0); ++i) kept.push_back(rows_.at(index[i].item<std::int64_t>()));
    rows_ = std::move(kept);
  }

  const std::vector<Row>& row_state() const { return rows_; }

  static std::vector<double> log_probs(const std::vector<double>& weights) {
    double total = 0;
    for (double w : weights) total += w;
    std::vector<double> out;
    for (double w : weights) out.push_back(std::log(w / total));  // log(0) = -inf
    return out;
  }

  int steps = 0;

 private:
  NextWeights weights_;
  std::vector<Row> rows_;
};

// Weights that depend on the last token only: table[last][next].
inline NextWeights table_weights(std::vector<std::vector<double>> table) {
  return [table = std::move(table)](std::int64_t, const std::vector<std::int64_t>& fed) {
    return table.at(fed.back());
  };
}

// Pseudo-random weights keyed on the input and the whole prefix (the same prefix always gets
// the same numbers). `eos_weight` scales eos; start and pad never come next.
inline NextWeights random_weights(std::int64_t vocab, std::uint32_t seed, double eos_weight) {
  return [=](std::int64_t input, const std::vector<std::int64_t>& fed) {
    std::uint64_t key = seed * 1000003ULL + static_cast<std::uint64_t>(input);
    for (std::int64_t t : fed) key = key * 31 + static_cast<std::uint64_t>(t) + 7;
    std::mt19937_64 rng(key);
    std::uniform_real_distribution<double> uniform(0.05, 1.0);
    std::vector<double> w(vocab);
    for (std::int64_t v = 0; v < vocab; ++v) w[v] = uniform(rng);
    w[kStart] = 0;
    w[kPad] = 0;
    w[kEos] *= eos_weight;
    return w;
  };
}

// sum of log P(token | input, start + previous tokens) over `sequence`.
inline double sequence_log_prob(const NextWeights& weights, std::int64_t input,
                                const std::vector<std::int64_t>& sequence) {
  std::vector<std::int64_t> fed{kStart};
  double total = 0;
  for (std::int64_t token : sequence) {
    total += PrefixModel::log_probs(weights(input, fed)).at(token);
    fed.push_back(token);
  }
  return total;
}

}  // namespace strata::test_support
