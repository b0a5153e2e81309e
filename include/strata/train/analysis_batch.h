#pragma once
// What a task hands to the attention analyses (seed 003 §3.1: global relevance of patterns)
// beside training: a batch of its examples as the analysed attention reads them, and a way to
// run the model over it.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "strata/attn/token_layout.h"
#include "strata/models/encoder_model.h"
#include "strata/train/task.h"

namespace strata::train {

struct AnalysisBatch {
  at::Tensor ids;      // [B, L] int64: the tokens the analysed attention reads (the encoder's)
  at::Tensor padding;  // [B, L] bool, true = real token; real tokens first in each row
  // [B, L] ids the patterns read: token and repeated (matching_token), sentence
  // (intra_sentence), segment (intra_context); batch_layouts() fills them all.
  attn::TokenLayout layout;
  // Runs the model over the batch, at least as far as the analysed attention modules (the
  // encoder); called in eval mode without gradients.
  std::function<void()> forward;
};

// Implemented beside TrainTask by the tasks whose model's attention can be analysed.
class AnalysisBatchSource {
 public:
  virtual ~AnalysisBatchSource() = default;
  // The examples `rows` of the split, padded into one batch.
  virtual AnalysisBatch analysis_batch(Split split, std::span<const std::size_t> rows) = 0;
};

// The rows as an encoder model reads them, and its encoder as the forward pass.
AnalysisBatch encoder_analysis_batch(models::EncoderModel model, const std::vector<const Layout*>& rows);

}  // namespace strata::train
