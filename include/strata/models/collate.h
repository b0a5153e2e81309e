#pragma once
// Examples → padded model inputs. Sources and targets are padded on the right; labels use
// -100 (cross-entropy's ignore index) where there is no target token.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/attn/token_layout.h"
#include "strata/data/seq2seq_examples.h"

namespace strata::models {

constexpr std::int64_t kIgnoreLabel = -100;

struct Seq2SeqBatch {
  at::Tensor source;          // [B, Ls] int64
  at::Tensor source_padding;  // [B, Ls] bool, true = real token
  at::Tensor decoder_inputs;  // [B, T]: decoder_start_id, then the target shifted right
  at::Tensor labels;          // [B, T]: the target, kIgnoreLabel after its end
  at::Tensor decoder_padding;  // [B, T] bool, true = a real target position
  attn::TokenLayout source_layout;  // [B, Ls] ids and section trees, when asked for
  std::int64_t source_tokens = 0;
  std::int64_t target_tokens = 0;
};

// Rows `rows` of `examples`. Without targets (decoding), decoder_inputs and labels stay
// undefined; with_layout fills source_layout (for models whose attention reads it).
Seq2SeqBatch collate_seq2seq(std::span<const Seq2SeqExample> examples, std::span<const std::size_t> rows,
                             std::int64_t pad_id, std::int64_t decoder_start_id, bool with_targets = true,
                             bool with_layout = false);

// An encoder's inputs: each layout's tokens as one row, padded on the right.
struct EncoderBatch {
  at::Tensor ids;      // [B, L] int64, padded with pad_id
  at::Tensor padding;  // [B, L] bool, true = real token
  attn::TokenLayout layout;  // when asked for (models whose attention reads it, analyses)
  std::int64_t tokens = 0;   // real tokens
};

EncoderBatch collate_encoder(const std::vector<const Layout*>& rows, std::int64_t pad_id, bool with_layout);

struct LmBatch {
  at::Tensor inputs;  // [B, T] int64: chunk[:-1], padded with pad_id
  at::Tensor labels;  // [B, T]: chunk[1:], kIgnoreLabel after its end and for prompt tokens
  std::int64_t tokens = 0;  // labelled tokens
};

LmBatch collate_lm(std::span<const std::vector<std::int32_t>> chunks, std::span<const std::size_t> rows,
                   std::int64_t pad_id);

}  // namespace strata::models
