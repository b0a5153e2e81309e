#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "beam_hypotheses.h"
#include "stepping.h"
#include "strata/decode/generate.h"
#include "strata/decode/logits_processing.h"

namespace strata::decode {
namespace {

// The rows `rows` of `history` ([R, T]) on the CPU, one vector each.
std::vector<std::vector<std::int64_t>> host_rows(const at::Tensor& history,
                                                 const std::vector<std::int64_t>& rows) {
  const at::Tensor index = at::tensor(rows, at::kLong).to(history.device());
  const at::Tensor picked = history.index_select(0, index).cpu().contiguous();
  const std::int64_t length = picked.size(1);
  const std::int64_t* data = picked.data_ptr<std::int64_t>();
  std::vector<std::vector<std::int64_t>> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    out.emplace_back(data + i * length, data + (i + 1) * length);
  return out;
}

// Beam search over B inputs with K beams each, rows b * K ... b * K + K - 1 being input b's.
// Tensors do the per-step selection for all inputs at once; the CPU keeps the finished
// hypotheses, which change rarely.
class BeamSearch {
 public:
  BeamSearch(const GenerationOptions& options, std::int64_t batch, const at::Tensor& scores)
      : options_(options),
        batch_(batch),
        beams_(options.beam_size),
        vocab_(scores.size(1)),
        long_(scores.options().dtype(at::kLong)),
        finished_(batch, BeamHypotheses(beams_, options.length_penalty, options.early_stopping)),
        done_(batch, false) {
    // Only beam 0 is live at first, so the first step's candidates are distinct tokens.
    beam_sums_ = at::full({batch_, beams_}, -std::numeric_limits<double>::infinity(),
                          scores.options());
    beam_sums_.select(1, 0).zero_();
    history_ = at::full({batch_ * beams_, options.max_length}, options.pad_id, long_);
    first_row_ = (at::arange(batch_, long_) * beams_).unsqueeze(1);
  }

  // One step from the model's [B * K, V] scores. Returns false when every input is done or
  // max_length is reached; otherwise the next tokens and the rows the model must keep.
  bool advance(at::Tensor scores, at::Tensor& tokens, at::Tensor& source) {
    scores = constrain(scores, history_.narrow(1, 0, length_), options_);
    const std::int64_t rows = batch_ * beams_;
    const at::Tensor totals =
        (scores + beam_sums_.view({rows, 1})).view({batch_, beams_ * vocab_});
    // 2K candidates per input: each beam has one eos candidate, so K or more continue.
    const std::int64_t candidates = std::min(2 * beams_, beams_ * vocab_);
    const auto [top_sums, top_index] = totals.topk(candidates, 1);
    const at::Tensor top_beam = top_index.div(vocab_, "floor");
    const at::Tensor top_token = top_index.remainder(vocab_);
    const at::Tensor ends = top_token == options_.eos_id;
    // Live beams: the best candidates that do not end in eos, in rank order.
    const at::Tensor rank = at::arange(candidates, long_).expand({batch_, candidates});
    const at::Tensor live = std::get<1>(
        (rank + ends.to(at::kLong) * candidates).topk(beams_, 1, /*largest=*/false));

    record_finished(ends, top_sums, top_beam, top_sums.gather(1, live.narrow(1, 0, 1)));
    if (std::all_of(done_.begin(), done_.end(), [](bool d) { return d; })) return false;

    beam_sums_ = top_sums.gather(1, live);
    source = (first_row_ + top_beam.gather(1, live)).view(rows);
    tokens = top_token.gather(1, live);
    // Inputs that are done feed pad; their beams are ignored from now on.
    std::vector<std::int64_t> done_inputs;
    for (std::int64_t b = 0; b < batch_; ++b)
      if (done_[b]) done_inputs.push_back(b);
    if (!done_inputs.empty())
      tokens.index_fill_(0, at::tensor(done_inputs, at::kLong).to(tokens.device()),
                         options_.pad_id);
    tokens = tokens.view(rows);
    history_ = history_.index_select(0, source);
    history_.select(1, length_).copy_(tokens);
    ++length_;
    if (length_ < options_.max_length) return true;
    add_live_beams();
    return false;
  }

  Sequences best() const {
    Sequences sequences;
    for (const BeamHypotheses& input : finished_) sequences.push_back(input.best());
    return sequences;
  }

 private:
  // Eos candidates become hypotheses, as HF, only within the first K ranks (and not when
  // eos was banned, which a tiny vocabulary can rank there); then each input is done or not. One device-to-host copy carries what this reads.
  void record_finished(const at::Tensor& ends, const at::Tensor& top_sums,
                       const at::Tensor& top_beam, const at::Tensor& best_live) {
    const auto as_double = [&](const at::Tensor& t) { return t.to(at::kDouble); };
    const at::Tensor host =
        at::cat({as_double(ends.narrow(1, 0, beams_)), as_double(top_sums.narrow(1, 0, beams_)),
                 as_double(top_beam.narrow(1, 0, beams_)), as_double(best_live)},
                1)
            .cpu();
    const auto h = host.accessor<double, 2>();
    std::vector<std::int64_t> inputs, rows;
    std::vector<double> sums;
    for (std::int64_t b = 0; b < batch_; ++b)
      for (std::int64_t r = 0; r < beams_ && !done_[b]; ++r)
        if (h[b][r] != 0 && std::isfinite(h[b][beams_ + r])) {  // not a banned eos
          inputs.push_back(b);
          rows.push_back(b * beams_ + static_cast<std::int64_t>(h[b][2 * beams_ + r]));
          sums.push_back(h[b][beams_ + r]);
        }
    if (!rows.empty()) {
      auto hypotheses = host_rows(history_.narrow(1, 0, length_), rows);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        hypotheses[i].push_back(options_.eos_id);
        finished_[inputs[i]].add(std::move(hypotheses[i]), sums[i]);
      }
    }
    for (std::int64_t b = 0; b < batch_; ++b)
      if (!done_[b]) done_[b] = finished_[b].is_done(h[b][3 * beams_], length_ + 1);
  }

  // Out of length: the live beams of unfinished inputs compete with their finished ones.
  void add_live_beams() {
    const at::Tensor sums = beam_sums_.to(at::kDouble).cpu();
    const auto s = sums.accessor<double, 2>();
    std::vector<std::int64_t> rows;
    for (std::int64_t b = 0; b < batch_; ++b)
      for (std::int64_t j = 0; j < beams_ && !done_[b]; ++j) rows.push_back(b * beams_ + j);
    auto hypotheses = host_rows(history_, rows);
    for (std::size_t i = 0; i < rows.size(); ++i)
      finished_[rows[i] / beams_].add(std::move(hypotheses[i]), s[rows[i] / beams_][rows[i] % beams_]);
  }

  const GenerationOptions& options_;
  std::int64_t batch_, beams_, vocab_;
  at::TensorOptions long_;
  std::vector<BeamHypotheses> finished_;
  std::vector<bool> done_;
  at::Tensor beam_sums_;  // [B, K] sums of log-probs of the live beams
  at::Tensor history_;    // [B * K, max_length] generated tokens, pad beyond length_
  at::Tensor first_row_;  // [B, 1]: b * K
  std::int64_t length_ = 0;  // tokens generated so far by every live beam
};

}  // namespace

Sequences beam_search(StepModel& model, const GenerationOptions& options) {
  options.check();
  torch::NoGradGuard no_grad;
  const std::int64_t batch = model.rows();
  if (batch == 0) return {};
  // The first step runs on the B inputs (their K beams would all see the start token); then
  // each row becomes K rows.
  at::Tensor scores = next_scores(model, at::full({batch}, options.start_id, at::kLong), options);
  const at::Tensor expand =
      at::arange(batch, scores.options().dtype(at::kLong)).repeat_interleave(options.beam_size);
  model.reorder(expand);
  scores = scores.index_select(0, expand);

  BeamSearch search(options, batch, scores);
  at::Tensor tokens, source;
  while (search.advance(scores, tokens, source)) {
    model.reorder(source);
    scores = next_scores(model, tokens, options);
  }
  return search.best();
}

}  // namespace strata::decode
