#include "strata/models/causal_lm.h"

#include <torch/torch.h>

#include <algorithm>

#include "strata/core/error.h"
#include "strata/models/model_layers.h"

namespace strata::models {

namespace {

bool specs_read_layout(const std::vector<attn::LayerSpec>& specs) {
  for (const attn::LayerSpec& spec : specs)
    if (spec.reads_layout()) return true;
  return false;
}

// [B, T] int32: each token's segment, the index of the last marker at or before it; a row
// starts in `start[b]` (the segment its cached tokens ended in, or the last one).
at::Tensor marker_segments(const at::Tensor& ids, const std::vector<std::int64_t>& markers,
                           const std::vector<std::int32_t>& start) {
  const at::Tensor cpu = ids.to(torch::kCPU, torch::kInt64).contiguous();
  at::Tensor segments = torch::empty(cpu.sizes(), torch::kInt32);
  const std::int64_t rows = cpu.size(0), length = cpu.size(1);
  const std::int64_t* in = cpu.data_ptr<std::int64_t>();
  std::int32_t* out = segments.data_ptr<std::int32_t>();
  for (std::int64_t b = 0; b < rows; ++b) {
    std::int32_t current = start[static_cast<std::size_t>(b)];
    for (std::int64_t t = 0; t < length; ++t) {
      const auto marker = std::find(markers.begin(), markers.end(), in[b * length + t]);
      if (marker != markers.end()) current = static_cast<std::int32_t>(marker - markers.begin());
      out[b * length + t] = current;
    }
  }
  return segments.to(ids.device());
}

}  // namespace

CausalLmImpl::CausalLmImpl(const ModelConfig& config) : config_(config) {
  check_stacks(config, "causal_lm", {.decoder = true});
  if (specs_read_layout(config.decoder_attention)) {
    segment_markers_ = segment_marker_ids(config);
    if (segment_markers_.empty())
      throw Error("causal_lm: model.decoder_attention reads the tokens' layout, and a causal_lm knows only the "
                  "segments its markers open (model.segment_markers, set by data.task = tlm from the "
                  "tokenizer's [INTRO] [EXTRACT] [SUMMARY] [REST])");
  }
  embed_tokens = register_module("embed_tokens", torch::nn::Embedding(config.vocab_size, config.d_model));
  decoder = register_module("decoder", nn::TransformerDecoder(stack_options(config, Stack::Decoder),
                                                              embed_tokens, /*cross_attention=*/false));
  if (!config.tie_embeddings)
    lm_head = register_module("lm_head", nn::AdaptableLinear(torch::nn::LinearOptions(config.d_model, config.vocab_size).bias(false)));
  final_logits_bias = register_final_logits_bias(*this, config);
  init_weights(*this, config.pad_id);
}

at::Tensor CausalLmImpl::forward(const at::Tensor& ids, nn::KvCache* cache, const at::Tensor& padding) {
  attn::TokenLayout queries, keys;  // self-attention's: these positions' segments, and every key's
  const bool segmented = !segment_markers_.empty();
  if (segmented) {
    // Each row continues the segment its cached tokens ended in; a fresh window that opens
    // with no marker is a later window of a long text, in its last part.
    const bool cached = cache && cache->segment.defined() && cache->segment.size(1) > 0;
    std::vector<std::int32_t> start(static_cast<std::size_t>(ids.size(0)),
                                    static_cast<std::int32_t>(segment_markers_.size() - 1));
    if (cached) {
      const at::Tensor last = cache->segment.select(1, -1).to(torch::kCPU).contiguous();
      start.assign(last.data_ptr<std::int32_t>(), last.data_ptr<std::int32_t>() + last.numel());
    }
    queries.segment = marker_segments(ids, segment_markers_, start);
    keys.segment = cached ? torch::cat({cache->segment, queries.segment}, 1) : queries.segment;
    if (cache) cache->segment = keys.segment;
  }
  const at::Tensor hidden = decoder(ids, padding, at::Tensor(), at::Tensor(), cache, nullptr, nullptr, at::Tensor(),
                                    segmented ? &keys : nullptr, segmented ? &queries : nullptr);
  return output_logits(config_, hidden, embed_tokens->weight, lm_head, final_logits_bias);
}

}  // namespace strata::models
