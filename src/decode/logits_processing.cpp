#include "strata/decode/logits_processing.h"

#include <torch/torch.h>

#include <limits>
#include <tuple>

namespace strata::decode {
namespace {

constexpr double kBanned = -std::numeric_limits<double>::infinity();

// Top-p over logits sorted most likely first: a token is kept while the mass of the tokens
// ranked above it (an exclusive cumulative sum) is still short of p, which keeps the top token
// and the smallest prefix reaching p.
at::Tensor nucleus(const at::Tensor& sorted, double p) {
  const at::Tensor probs = sorted.softmax(1);
  const at::Tensor above = at::cat(
      {at::zeros({probs.size(0), 1}, probs.options()),
       probs.cumsum(1).narrow(1, 0, probs.size(1) - 1)},
      1);
  return sorted.masked_fill(above >= p, kBanned);
}

}  // namespace

at::Tensor constrain(const at::Tensor& scores, const at::Tensor& history,
                     const GenerationOptions& options) {
  const std::int64_t length = history.size(1);
  std::int64_t forced = -1;
  if (length == 0 && options.forced_bos_id >= 0) forced = options.forced_bos_id;
  if (length == options.max_length - 1 && options.forced_eos) forced = options.eos_id;
  if (forced >= 0) {
    at::Tensor only = torch::full_like(scores, kBanned);
    only.select(1, forced).copy_(scores.select(1, forced));
    return only;
  }
  at::Tensor out = scores;
  if (length < options.min_length) {
    out = out.clone();
    out.select(1, options.eos_id).fill_(kBanned);
  }
  return ban_repeated_ngrams(out, history, options.no_repeat_ngram_size);
}

at::Tensor ban_repeated_ngrams(const at::Tensor& scores, const at::Tensor& history,
                               std::int64_t n) {
  const std::int64_t length = history.size(1);
  if (n <= 0 || length < n) return scores;
  // Every n-gram of every row: [N, W, n], W = length - n + 1. Those whose first n - 1
  // tokens equal the row's last n - 1 tokens name a banned next token (for n = 1 the empty
  // prefix matches everywhere, so every token seen is banned).
  const at::Tensor ngrams = history.unfold(1, n, 1);
  const at::Tensor tail = history.narrow(1, length - (n - 1), n - 1).unsqueeze(1);
  const at::Tensor matches = ngrams.narrow(2, 0, n - 1).eq(tail).all(2);
  const at::Tensor next = ngrams.select(2, n - 1);
  // Flat positions of the banned (row, token) pairs; a pair banned twice is no harm.
  const std::int64_t vocab = scores.size(1);
  const at::Tensor row_start = at::arange(scores.size(0), history.options()).unsqueeze(1) * vocab;
  const at::Tensor banned = (row_start + next).masked_select(matches);
  at::Tensor out = scores.clone(at::MemoryFormat::Contiguous);
  out.view(-1).index_fill_(0, banned, kBanned);
  return out;
}

SamplingCandidates sampling_candidates(const at::Tensor& scores,
                                       const GenerationOptions& options) {
  const at::Tensor logits = options.temperature == 1.0 ? scores : scores / options.temperature;
  const std::int64_t vocab = logits.size(1);
  SamplingCandidates candidates;
  // top-k needs only a partial selection; top-p alone needs every token sorted.
  if (options.top_k > 0 && options.top_k < vocab)
    std::tie(candidates.logits, candidates.tokens) = logits.topk(options.top_k, 1);
  else if (options.top_p < 1)
    std::tie(candidates.logits, candidates.tokens) = logits.sort(1, /*descending=*/true);
  else
    return {at::arange(vocab, logits.options().dtype(at::kLong)).expand_as(logits), logits};
  if (options.top_p < 1) candidates.logits = nucleus(candidates.logits, options.top_p);
  return candidates;
}

}  // namespace strata::decode
