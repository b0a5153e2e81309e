#include "strata/models/sentence_extractors.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <tuple>

#include "strata/core/error.h"

namespace strata::models {

namespace {

// Mean of d_i over each document's real sentences: [B, 2H].
at::Tensor mean_over_sentences(const at::Tensor& document, const SentenceBatch& batch) {
  const at::Tensor mask = batch.sentence_mask.unsqueeze(-1).to(document.dtype());
  return (document * mask).sum(1) / batch.sentence_counts.unsqueeze(-1).to(document.dtype());
}

std::int64_t at_index(std::size_t i) { return static_cast<std::int64_t>(i); }

}  // namespace

SentClfImpl::SentClfImpl(const ModelConfig& config) {
  check_stacks(config, "sent_clf", {});
  encoder = register_module("encoder", HierarchicalEncoder(config));
  const std::int64_t width = encoder->output_size();
  document_projection = register_module("document_projection", torch::nn::Linear(width, width));
  output = register_module("output", torch::nn::Linear(2 * width, 1));
}

at::Tensor SentClfImpl::forward(const SentenceBatch& batch) {
  const HierarchicalEncoding encoding = encoder(batch);
  const at::Tensor d = torch::tanh(document_projection(mean_over_sentences(encoding.document, batch)));  // Eq. 2.1
  const at::Tensor both = torch::cat({encoding.document, d.unsqueeze(1).expand_as(encoding.document)}, -1);
  return output(both).squeeze(-1);  // Eq. 2.2 before the sigmoid
}

ExtractorLoss SentClfImpl::loss(const SentenceBatch& batch, std::span<const std::vector<std::size_t>> oracles) {
  const at::Tensor logits = forward(batch);
  at::Tensor labels = torch::zeros_like(logits);
  for (std::size_t b = 0; b < oracles.size(); ++b)
    for (std::size_t i : oracles[b]) labels[at_index(b)][at_index(i)] = 1.0;
  const at::Tensor per_sentence =
      torch::binary_cross_entropy_with_logits(logits, labels, {}, {}, at::Reduction::None);
  return {per_sentence.masked_select(batch.sentence_mask).sum(), batch.sentence_mask.sum().item<std::int64_t>()};
}

std::vector<std::vector<std::size_t>> SentClfImpl::extract(const SentenceBatch& batch,
                                                           const ExtractionOptions& options) {
  torch::NoGradGuard no_grad;
  const at::Tensor logits = forward(batch).contiguous();
  std::vector<std::vector<std::size_t>> chosen(static_cast<std::size_t>(logits.size(0)));
  for (std::int64_t b = 0; b < logits.size(0); ++b) {
    const auto count = static_cast<std::size_t>(batch.sentence_counts[b].item<std::int64_t>());
    const float* row = logits[b].data_ptr<float>();
    std::vector<std::size_t> order(count);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return row[x] > row[y]; });
    order.resize(std::min(options.top_k, count));
    std::sort(order.begin(), order.end());
    chosen[static_cast<std::size_t>(b)] = std::move(order);
  }
  return chosen;
}

// One document's encoding as the decoder reads it.
struct SentPtrImpl::Decoding {
  at::Tensor sentences;  // s_i: [N, 2H], the decoder's inputs
  at::Tensor keys;       // [N + 1, 2H]: d_1..d_N, then the stop vector
  std::tuple<at::Tensor, at::Tensor> state;  // h, c: [layers, 1, 2H]
  std::size_t count = 0;
};

SentPtrImpl::SentPtrImpl(const ModelConfig& config) {
  check_stacks(config, "sent_ptr", {});
  encoder = register_module("encoder", HierarchicalEncoder(config));
  const std::int64_t width = encoder->output_size();
  initial_state = register_module("initial_state", torch::nn::Linear(width, width));
  decoder = register_module("decoder", torch::nn::LSTM(torch::nn::LSTMOptions(width, width)
                                                           .num_layers(config.lstm_layers)
                                                           .batch_first(true)
                                                           .dropout(config.lstm_layers > 1 ? config.dropout : 0.0)));
  start = register_parameter("start", torch::randn({width}) * 0.1);
  stop = register_parameter("stop", torch::randn({width}) * 0.1);
}

ExtractorLoss SentPtrImpl::loss(const SentenceBatch& batch, std::span<const std::vector<std::size_t>> oracles) {
  const HierarchicalEncoding encoding = encoder(batch);
  const std::int64_t B = batch.tokens.size(0), S = batch.tokens.size(1), width = encoder->output_size();
  std::size_t longest = 0;
  for (const auto& oracle : oracles) longest = std::max(longest, oracle.size());
  const std::int64_t steps = at_index(longest) + 1;  // the picks, then stop
  // Teacher forcing: step t reads the sentence picked at t - 1.
  std::vector<at::Tensor> rows;
  at::Tensor targets = torch::full({B, steps}, -100, torch::kInt64);
  at::Tensor allowed = torch::zeros({B, steps, S + 1}, torch::kBool);
  auto target = targets.accessor<std::int64_t, 2>();
  auto allow = allowed.accessor<bool, 3>();
  auto real = batch.sentence_mask.accessor<bool, 2>();
  for (std::int64_t b = 0; b < B; ++b) {
    const std::vector<std::size_t>& oracle = oracles[static_cast<std::size_t>(b)];
    std::vector<at::Tensor> inputs{start};
    for (std::size_t i : oracle) inputs.push_back(encoding.sentences[b][at_index(i)]);
    while (at_index(inputs.size()) < steps) inputs.push_back(torch::zeros({width}));
    rows.push_back(torch::stack(inputs));
    std::vector<bool> picked(static_cast<std::size_t>(S), false);
    for (std::int64_t t = 0; t <= at_index(oracle.size()); ++t) {
      for (std::int64_t i = 0; i < S; ++i) allow[b][t][i] = real[b][i] && !picked[static_cast<std::size_t>(i)];
      allow[b][t][S] = t > 0 || oracle.empty();  // as decoding: no stop before the first pick
      target[b][t] = t < at_index(oracle.size()) ? at_index(oracle[static_cast<std::size_t>(t)]) : S;
      if (t < at_index(oracle.size())) picked[oracle[static_cast<std::size_t>(t)]] = true;
    }
  }
  const at::Tensor h0 = torch::tanh(initial_state(mean_over_sentences(encoding.document, batch)));
  const std::int64_t layers = decoder->options.num_layers();
  const at::Tensor h = h0.unsqueeze(0).expand({layers, B, width}).contiguous();
  const at::Tensor states = std::get<0>(decoder(torch::stack(rows), std::make_tuple(h, torch::zeros_like(h))));
  const at::Tensor keys = torch::cat({encoding.document, stop.view({1, 1, width}).expand({B, 1, width})}, 1);
  const at::Tensor scores = torch::bmm(states, keys.transpose(1, 2)).masked_fill(~allowed, -1e9);
  const at::Tensor log_probs = torch::log_softmax(scores, -1);
  const at::Tensor valid = targets >= 0;
  const at::Tensor picked = log_probs.gather(-1, targets.clamp_min(0).unsqueeze(-1)).squeeze(-1);
  return {-picked.masked_select(valid).sum(), valid.sum().item<std::int64_t>()};
}

SentPtrImpl::Decoding SentPtrImpl::begin(const HierarchicalEncoding& encoding, const SentenceBatch& batch,
                                          std::int64_t row) {
  const auto count = batch.sentence_counts[row].item<std::int64_t>();
  const std::int64_t width = encoder->output_size();
  Decoding d;
  d.count = static_cast<std::size_t>(count);
  d.sentences = encoding.sentences[row].slice(0, 0, count);
  d.keys = torch::cat({encoding.document[row].slice(0, 0, count), stop.view({1, width})}, 0);
  const at::Tensor mean = encoding.document[row].slice(0, 0, count).mean(0, /*keepdim=*/true);
  const at::Tensor h = torch::tanh(initial_state(mean)).unsqueeze(0).expand({decoder->options.num_layers(), 1, width});
  d.state = std::make_tuple(h.contiguous(), torch::zeros_like(h).contiguous());
  return d;
}

namespace {

struct Hypothesis {
  std::vector<std::size_t> picks;
  double log_prob = 0;
  std::tuple<at::Tensor, at::Tensor> state;
};

// Log-probabilities [K, N + 1] of each hypothesis's next pick and the states after reading
// its last pick; a picked sentence, and stop before the first pick, are excluded.
std::pair<at::Tensor, std::tuple<at::Tensor, at::Tensor>> next_picks(torch::nn::LSTM& decoder,
                                                                     const std::vector<Hypothesis>& hyps,
                                                                     const at::Tensor& sentences,
                                                                     const at::Tensor& keys, const at::Tensor& start) {
  std::vector<at::Tensor> inputs, hs, cs;
  const std::int64_t columns = keys.size(0);
  at::Tensor allowed = torch::ones({at_index(hyps.size()), columns}, torch::kBool);
  for (std::size_t k = 0; k < hyps.size(); ++k) {
    const Hypothesis& hyp = hyps[k];
    inputs.push_back(hyp.picks.empty() ? start : sentences[at_index(hyp.picks.back())]);
    hs.push_back(std::get<0>(hyp.state));
    cs.push_back(std::get<1>(hyp.state));
    for (std::size_t i : hyp.picks) allowed[at_index(k)][at_index(i)] = false;
    if (hyp.picks.empty()) allowed[at_index(k)][columns - 1] = false;
  }
  auto [out, state] = decoder(torch::stack(inputs).unsqueeze(1), std::make_tuple(torch::cat(hs, 1), torch::cat(cs, 1)));
  const at::Tensor scores = torch::matmul(out.squeeze(1), keys.t()).masked_fill(~allowed, -1e9);
  return {torch::log_softmax(scores, -1), state};
}

}  // namespace

std::vector<std::vector<std::size_t>> SentPtrImpl::extract(const SentenceBatch& batch,
                                                           const ExtractionOptions& options) {
  torch::NoGradGuard no_grad;
  if (options.beam_size == 0 || options.max_steps == 0)
    throw Error("Sent-PTR decoding: beam_size and max_steps must be positive");
  std::vector<std::vector<std::size_t>> chosen;
  const HierarchicalEncoding encoding = encoder(batch);
  for (std::int64_t row = 0; row < batch.tokens.size(0); ++row) {
    const Decoding d = begin(encoding, batch, row);
    const std::size_t stop_column = d.count;
    std::vector<Hypothesis> alive{{{}, 0.0, d.state}};
    std::vector<Hypothesis> finished;
    for (std::size_t step = 0; step < options.max_steps && !alive.empty(); ++step) {
      auto [log_probs, state] = next_picks(decoder, alive, d.sentences, d.keys, start);
      const at::Tensor lp_tensor = log_probs.to(torch::kFloat64).contiguous();
      const auto lp = lp_tensor.accessor<double, 2>();
      struct Candidate {
        double log_prob;
        std::size_t hyp, column;
      };
      std::vector<Candidate> candidates;
      for (std::size_t k = 0; k < alive.size(); ++k)
        for (std::size_t c = 0; c <= stop_column; ++c) {
          const double value = lp[at_index(k)][at_index(c)];
          if (value > -1e8) candidates.push_back({alive[k].log_prob + value, k, c});
        }
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate& x, const Candidate& y) { return x.log_prob > y.log_prob; });
      candidates.resize(std::min(candidates.size(), options.beam_size));
      std::vector<Hypothesis> next;
      for (const Candidate& c : candidates) {
        Hypothesis hyp{alive[c.hyp].picks, c.log_prob, {}};
        if (c.column == stop_column) {
          finished.push_back(std::move(hyp));
          continue;
        }
        hyp.picks.push_back(c.column);
        hyp.state = std::make_tuple(std::get<0>(state).slice(1, at_index(c.hyp), at_index(c.hyp) + 1),
                                    std::get<1>(state).slice(1, at_index(c.hyp), at_index(c.hyp) + 1));
        // With every sentence picked or max_steps reached, a hypothesis is finished as it is.
        if (hyp.picks.size() == options.max_steps || hyp.picks.size() == d.count)
          finished.push_back(std::move(hyp));
        else
          next.push_back(std::move(hyp));
      }
      alive = std::move(next);
    }
    const auto best = std::max_element(finished.begin(), finished.end(), [](const Hypothesis& x, const Hypothesis& y) {
      return x.log_prob < y.log_prob;
    });
    chosen.push_back(best == finished.end() ? std::vector<std::size_t>{} : best->picks);
  }
  return chosen;
}

double SentPtrImpl::sequence_log_prob(const SentenceBatch& batch, const std::vector<std::size_t>& picks,
                                      std::size_t max_steps) {
  torch::NoGradGuard no_grad;
  const Decoding d = begin(encoder(batch), batch, 0);
  std::vector<Hypothesis> hyp{{{}, 0.0, d.state}};
  double total = 0;
  for (std::size_t step = 0; step <= picks.size(); ++step) {
    if (step == picks.size() && (picks.size() == max_steps || picks.size() == d.count)) break;
    auto [log_probs, state] = next_picks(decoder, hyp, d.sentences, d.keys, start);
    const std::size_t column = step < picks.size() ? picks[step] : d.count;
    total += log_probs[0][at_index(column)].item<double>();
    if (step < picks.size()) hyp[0].picks.push_back(column);
    hyp[0].state = state;
  }
  return total;
}

}  // namespace strata::models
