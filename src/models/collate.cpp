#include "strata/models/collate.h"

#include <torch/torch.h>

#include <algorithm>

namespace strata::models {

namespace {

// [rows, width] int64 filled with `fill`, then row r holds the `count` tokens that get(r) points to.
template <class Get>
at::Tensor pad_rows(std::size_t rows, std::size_t width, std::int64_t fill, Get&& get) {
  at::Tensor out = torch::full({static_cast<std::int64_t>(rows), static_cast<std::int64_t>(width)}, fill, torch::kInt64);
  auto a = out.accessor<std::int64_t, 2>();
  for (std::size_t r = 0; r < rows; ++r) {
    const auto [tokens, count] = get(r);
    for (std::size_t t = 0; t < count; ++t) a[r][t] = tokens[t];
  }
  return out;
}

}  // namespace

Seq2SeqBatch collate_seq2seq(std::span<const Seq2SeqExample> examples, std::span<const std::size_t> rows,
                             std::int64_t pad_id, std::int64_t decoder_start_id, bool with_targets,
                             bool with_layout) {
  std::size_t source_width = 1, target_width = 1;
  Seq2SeqBatch batch;
  for (const std::size_t r : rows) {
    source_width = std::max(source_width, examples[r].source.size());
    target_width = std::max(target_width, examples[r].target.size());
    batch.source_tokens += static_cast<std::int64_t>(examples[r].source.size());
    batch.target_tokens += static_cast<std::int64_t>(examples[r].target.size());
  }
  batch.source = pad_rows(rows.size(), source_width, pad_id, [&](std::size_t i) {
    const auto& tokens = examples[rows[i]].source.token;
    return std::pair{tokens.data(), tokens.size()};
  });
  batch.source_padding = torch::zeros_like(batch.source, torch::kBool);
  for (std::size_t i = 0; i < rows.size(); ++i)
    batch.source_padding[static_cast<std::int64_t>(i)].narrow(0, 0, examples[rows[i]].source.size()).fill_(true);
  if (with_layout) {
    std::vector<const Layout*> layouts;
    for (const std::size_t r : rows) layouts.push_back(&examples[r].source);
    batch.source_layout = attn::batch_layouts(layouts, batch.source.size(1));
  }
  if (!with_targets) return batch;
  batch.labels = pad_rows(rows.size(), target_width, kIgnoreLabel, [&](std::size_t i) {
    const auto& tokens = examples[rows[i]].target;
    return std::pair{tokens.data(), tokens.size()};
  });
  // Shift right: start token, then the target without its last token (ignored labels → pad).
  batch.decoder_inputs = torch::cat(
      {torch::full({batch.labels.size(0), 1}, decoder_start_id, torch::kInt64), batch.labels.narrow(1, 0, target_width - 1)},
      1);
  batch.decoder_inputs.masked_fill_(batch.decoder_inputs == kIgnoreLabel, pad_id);
  batch.decoder_padding = batch.labels.ne(kIgnoreLabel);
  return batch;
}

LmBatch collate_lm(std::span<const std::vector<std::int32_t>> chunks, std::span<const std::size_t> rows,
                   std::int64_t pad_id) {
  std::size_t width = 1;
  LmBatch batch;
  for (const std::size_t r : rows) width = std::max(width, chunks[r].size() - 1);
  batch.inputs = pad_rows(rows.size(), width, pad_id, [&](std::size_t i) {
    const auto& c = chunks[rows[i]];
    return std::pair{c.data(), c.size() - 1};
  });
  batch.labels = pad_rows(rows.size(), width, kIgnoreLabel, [&](std::size_t i) {
    const auto& c = chunks[rows[i]];
    return std::pair{c.data() + 1, c.size() - 1};
  });
  // A prompt token (stored as -1 - id, data/lm_examples.h) is read as its id and is no label.
  const at::Tensor prompt = batch.inputs.lt(0);
  batch.inputs = torch::where(prompt, -1 - batch.inputs, batch.inputs);
  batch.labels.masked_fill_(batch.labels.lt(0), kIgnoreLabel);
  batch.tokens = batch.labels.ne(kIgnoreLabel).sum().item<std::int64_t>();
  return batch;
}

EncoderBatch collate_encoder(const std::vector<const Layout*>& rows, std::int64_t pad_id, bool with_layout) {
  std::size_t width = 1;
  for (const Layout* layout : rows) width = std::max(width, layout->size());
  EncoderBatch batch;
  batch.ids = torch::full({static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(width)}, pad_id,
                          torch::kInt64);
  batch.padding = torch::zeros_like(batch.ids, torch::kBool);
  auto ids = batch.ids.accessor<std::int64_t, 2>();
  auto padding = batch.padding.accessor<bool, 2>();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::vector<std::int32_t>& tokens = rows[i]->token;
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      ids[i][t] = tokens[t];
      padding[i][t] = true;
    }
    batch.tokens += static_cast<std::int64_t>(tokens.size());
  }
  if (with_layout) batch.layout = attn::batch_layouts(rows, static_cast<std::int64_t>(width));
  return batch;
}

}  // namespace strata::models
