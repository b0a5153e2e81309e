#include "strata/models/seq2seq.h"

#include <torch/torch.h>

#include "strata/attn/attention_call.h"
#include "strata/core/error.h"
#include "strata/models/collate.h"
#include "strata/models/model_layers.h"
#include "strata/models/prefix_settings.h"

namespace strata::models {

namespace {

nn::PrefixOptions prefix_options(const ModelConfig& config) {
  nn::PrefixOptions o;
  o.length = config.prefix_length;
  o.hidden = config.prefix_hidden;
  o.d_model = config.d_model;
  o.heads = config.heads;
  o.encoder_layers = prefix_layers(config, config.encoder_layers);
  o.decoder_layers = prefix_layers(config, config.decoder_layers);
  if (config.prefix_encoder_blocks > 1) o.encoder_groups = nn::prefix_groups(o.length, config.prefix_encoder_blocks);
  if (config.prefix_decoder_blocks > 1) o.decoder_groups = nn::prefix_groups(o.length, config.prefix_decoder_blocks);
  return o;
}

// Blocked prefixes read each source token's segment from the layout, which the data cut into
// data.segments even parts: an item with at least `blocks` real tokens must reach segment
// blocks - 1, and none may pass it. Catches data loaded with another segment count.
void check_segments(const attn::TokenLayout& layout, const at::Tensor& padding, std::int64_t blocks) {
  if (!layout.segment.defined())
    throw Error("model.prefix_encoder_blocks = " + std::to_string(blocks) + " reads the source layout's segments, "
                "but the layout has none");
  at::Tensor segment = layout.segment;  // [B, L], or [1, L] shared by the batch
  if (padding.defined()) segment = segment.expand_as(padding);
  const at::Tensor real = padding.defined() ? padding.to(torch::kBool) : torch::ones_like(segment, torch::kBool);
  const at::Tensor last = segment.masked_fill(real.logical_not(), -1).amax(1);
  const at::Tensor long_enough = real.sum(1).ge(blocks);
  const bool fits = last.lt(blocks).all().item<bool>() &&
                    last.eq(blocks - 1).logical_or(long_enough.logical_not()).all().item<bool>();
  if (!fits)
    throw Error("the source layout's segments reach " + std::to_string(last.max().item<std::int64_t>()) +
                " but model.prefix_encoder_blocks = " + std::to_string(blocks) + " needs segments 0.." +
                std::to_string(blocks - 1) + ": load the data with data.segments = " + std::to_string(blocks));
}

// The decoder reads the section states after the tokens, so nothing on the decoder side may
// read the source positions as tokens of the layout.
void check_section_encoder(const ModelConfig& config) {
  if (config.section_encoder_layers < 0)
    throw Error("model.section_encoder_layers: must be >= 0, got " + std::to_string(config.section_encoder_layers));
  if (config.copy) throw Error("model.section_encoder_layers: HIERENC does not combine with model.copy");
  if (config.decoder_hibrids.kind != attn::RelationKind::None)
    throw Error("model.section_encoder_layers: HIERENC does not combine with model.decoder_hibrids");
  for (const attn::LayerSpec& spec : config.cross_attention)
    if (spec.reads_layout())
      throw Error("model.section_encoder_layers: HIERENC does not combine with a structured model.cross_attention");
}

// The sections a batch's layout has room for (its tree tables' size) and the mask of real
// source tokens (all of them without padding).
std::int64_t section_count(const attn::TokenLayout& layout) {
  return layout.section_depth.defined() ? layout.section_depth.size(1)
                                        : layout.section.max().item<std::int64_t>() + 1;
}

at::Tensor real_tokens(const at::Tensor& padding, std::int64_t batch, std::int64_t length) {
  return padding.defined() ? padding.to(torch::kBool) : torch::ones({batch, length}, torch::kBool);
}

}  // namespace

Seq2SeqImpl::Seq2SeqImpl(const ModelConfig& config) : config_(config) {
  check_stacks(config, "seq2seq", {.encoder = true, .decoder = true, .cross_attention = true, .prefixes = true});
  shared = register_module("shared", torch::nn::Embedding(config.vocab_size, config.d_model));
  encoder = register_module("encoder", nn::TransformerEncoder(stack_options(config, Stack::Encoder), shared));
  decoder = register_module(
      "decoder", nn::TransformerDecoder(stack_options(config, Stack::Decoder), shared, /*cross_attention=*/true));
  if (!config.tie_embeddings)
    lm_head = register_module("lm_head", nn::AdaptableLinear(torch::nn::LinearOptions(config.d_model, config.vocab_size).bias(false)));
  if (config.prefix_length > 0)
    prefix = register_module("prefix", nn::PrefixTuning(prefix_options(config)));
  if (config.section_relation_head && config.copy)
    throw Error("model.section_relation_head: MULTITASK does not combine with model.copy (its loss path)");
  if (config.section_relation_head)
    relation_classifier = register_module(
        "relation_classifier", torch::nn::Bilinear(config.d_model, config.d_model, attn::kSelectedRelations));
  if (config.section_encoder_layers > 0) {
    check_section_encoder(config);
    section_encoder = register_module(
        "section_encoder",
        SectionEncoder(stack_options(config, Stack::Encoder).layer_options(0), config.section_encoder_layers,
                       config.section_encoder_hibrids));
  }
  final_logits_bias = register_final_logits_bias(*this, config);
  if (config.copy) {
    copy_query = register_module("copy_query", torch::nn::Linear(config.d_model, config.d_model));
    copy_key = register_module("copy_key", torch::nn::Linear(config.d_model, config.d_model));
    copy_gate = register_module("copy_gate", torch::nn::Linear(2 * config.d_model, 1));
  }
  init_weights(*this, config.pad_id);
  // After init_weights: the follow bias starts at 1, already favouring a copy that goes on;
  // the position biases start at 0.
  if (config.copy) {
    copy_follow = register_parameter("copy_follow", torch::ones({1}));
    copy_position = register_parameter("copy_position", torch::zeros({kCopyPositionBuckets}));
  }
}

nn::PrefixStates Seq2SeqImpl::prefix_states() {
  if (config_.prefix_length == 0) throw Error("the model has no prefixes (model.prefix_length = 0)");
  return fixed_prefix_ ? *fixed_prefix_ : prefix->forward();
}

void Seq2SeqImpl::set_fixed_prefix(nn::PrefixStates states) {
  if (config_.prefix_length == 0) throw Error("the model has no prefixes (model.prefix_length = 0)");
  if (prefix) {
    unregister_module("prefix");
    prefix = nullptr;
  }
  fixed_prefix_ = std::move(states);
}

bool Seq2SeqImpl::uses_layout() const {
  for (const auto* specs : {&config_.encoder_attention, &config_.cross_attention})
    for (const attn::LayerSpec& spec : *specs)
      if (spec.reads_layout()) return true;
  return config_.decoder_hibrids.kind != attn::RelationKind::None || config_.prefix_encoder_blocks > 1 ||
         config_.section_encoder_layers > 0 || config_.section_relation_head;
}

EncoderOutput Seq2SeqImpl::encode(const at::Tensor& source, const at::Tensor& padding,
                                  const attn::TokenLayout* layout) {
  EncoderOutput out{.padding = padding};
  if (config_.prefix_length > 0) out.prefixes = prefix_states();
  const bool structured = uses_layout();
  if (structured && layout == nullptr)
    throw Error("this model's attention reads the source's structure (model.encoder_attention, cross_attention, "
                "decoder_hibrids or prefix_encoder_blocks), but no source layout was given");
  if (config_.prefix_encoder_blocks > 1) check_segments(*layout, padding, config_.prefix_encoder_blocks);
  out.hidden = encoder(source, padding, structured ? layout : nullptr, out.prefixes ? &out.prefixes->encoder : nullptr);
  if (section_encoder) {
    // The decoder reads the tokens, then the sections (padded to the batch's most sections).
    const at::Tensor real = real_tokens(padding, source.size(0), source.size(1));
    const SectionStates sections =
        section_encoder(out.hidden, real, *layout, section_count(*layout));
    out.hidden = torch::cat({out.hidden, sections.hidden}, 1);
    out.padding = torch::cat({real, sections.present}, 1);
  } else if (structured) {
    out.layout = *layout;
  }
  if (config_.copy) {
    out.source = source;
    out.copy_keys = copy_key(out.hidden);
  }
  return out;
}

at::Tensor Seq2SeqImpl::decode(const at::Tensor& inputs, const EncoderOutput& encoded, nn::KvCache* cache,
                               const at::Tensor& padding) {
  return decoder(inputs, at::Tensor(), encoded.hidden, encoded.padding, cache,
                 encoded.layout ? &*encoded.layout : nullptr, encoded.prefixes ? &*encoded.prefixes : nullptr,
                 padding);
}

at::Tensor Seq2SeqImpl::logits(const at::Tensor& hidden) {
  return output_logits(config_, hidden, shared->weight, lm_head, final_logits_bias);
}

Seq2SeqImpl::CopyParts Seq2SeqImpl::copy_parts(const at::Tensor& h, const EncoderOutput& encoded,
                                                const at::Tensor& inputs) {
  if (!encoded.copy_keys.defined() || !encoded.source.defined())
    throw Error("model.copy: the encoder output has no source ids and copy keys (encode() gives them)");
  // The copy attention: one head through the engine, its weights kept.
  attn::AttentionCall call;
  call.q = copy_query(h).unsqueeze(1);  // [B, 1, T, d]
  call.k = call.v = encoded.copy_keys.unsqueeze(1);  // [B, 1, Ls, d]
  call.key_padding = encoded.padding;
  // Where: a learned bias per source position bucket (bucket b holds positions 2^b - 1 to
  // 2^(b+1) - 2; the last one, every position past), so the copy can favour the page's opening.
  const std::int64_t source_length = encoded.source.size(1);
  const at::Tensor buckets =
      torch::log2(torch::arange(1, source_length + 1, torch::kFloat)).floor().clamp_max(kCopyPositionBuckets - 1);
  at::Tensor bias = copy_position.index_select(0, buckets.to(torch::kInt64)).view({1, 1, 1, source_length});
  // Spans: a learned bias toward the source positions that follow an occurrence of the token
  // just read (the decoder's input), so that copying goes on where it left off.
  if (inputs.defined()) {
    const at::Tensor source = encoded.source.to(torch::kInt64);
    const at::Tensor before = torch::cat({torch::full({source.size(0), 1}, -1, source.options()),
                                          source.narrow(1, 0, source_length - 1)}, 1);  // [B, Ls]: source[j - 1]
    const at::Tensor follows = before.unsqueeze(1).eq(inputs.to(torch::kInt64).view({source.size(0), -1, 1}));
    bias = bias + (follows.to(copy_follow.dtype()) * copy_follow).unsqueeze(1);  // [B, 1, T, Ls]
  }
  call.dense_bias = bias.expand({bias.size(0), 1, h.size(1), source_length});
  attn::LayerSpec spec;
  spec.dense_bias = true;
  call.spec = &spec;
  at::Tensor weights;  // [B, 1, T, Ls]
  const at::Tensor context = attn::attend_keeping_weights(call, weights).squeeze(1);
  return {weights.squeeze(1).to(torch::kFloat), copy_gate(torch::cat({h, context}, -1)).to(torch::kFloat)};
}

at::Tensor Seq2SeqImpl::next_token_scores(const at::Tensor& hidden, const EncoderOutput& encoded,
                                           const at::Tensor& inputs) {
  const at::Tensor vocabulary = logits(hidden);
  if (!config_.copy) return vocabulary;
  const bool one_step = hidden.dim() == 2;  // [B, d]: a decoding step
  const at::Tensor h = one_step ? hidden.unsqueeze(1) : hidden;  // [B, T, d]
  const CopyParts parts = copy_parts(h, encoded, inputs);
  const std::int64_t batch = h.size(0), steps = h.size(1);
  const at::Tensor ids = encoded.source.to(torch::kInt64).unsqueeze(1).expand({batch, steps, parts.weights.size(2)});
  const at::Tensor copied =
      torch::zeros({batch, steps, vocabulary.size(-1)}, parts.weights.options()).scatter_add(2, ids, parts.weights);
  // log(g · softmax(logits) + (1 − g) · copied) in log space; g = sigmoid(gate).
  const at::Tensor scores =
      torch::logaddexp(torch::log_sigmoid(parts.gate) + torch::log_softmax(vocabulary.view({batch, steps, -1}).to(torch::kFloat), -1),
                       torch::log_sigmoid(-parts.gate) + copied.clamp_min(1e-20).log());
  return one_step ? scores.squeeze(1) : scores;
}

at::Tensor Seq2SeqImpl::label_log_probs(const at::Tensor& hidden, const EncoderOutput& encoded, const at::Tensor& labels,
                                         const at::Tensor& inputs) {
  const at::Tensor vocabulary = torch::log_softmax(logits(hidden).to(torch::kFloat), -1);
  const at::Tensor real = labels.ne(kIgnoreLabel);
  const at::Tensor safe = labels.masked_fill(real.logical_not(), 0).to(torch::kInt64);  // [B, T]
  const at::Tensor generated = vocabulary.gather(2, safe.unsqueeze(2)).squeeze(2);
  if (!config_.copy) return generated.masked_fill(real.logical_not(), 0);
  const CopyParts parts = copy_parts(hidden, encoded, inputs);
  // The copy's probability of the label: the weight on the source positions that hold it.
  const at::Tensor holds = encoded.source.to(torch::kInt64).unsqueeze(1).eq(safe.unsqueeze(2));  // [B, T, Ls]
  const at::Tensor copied = (parts.weights * holds).sum(-1);
  const at::Tensor gate = parts.gate.squeeze(-1);
  const at::Tensor mixed = torch::logaddexp(torch::log_sigmoid(gate) + generated,
                                            torch::log_sigmoid(-gate) + copied.clamp_min(1e-20).log());
  return mixed.masked_fill(real.logical_not(), 0);
}

at::Tensor Seq2SeqImpl::section_relation_loss(const EncoderOutput& encoded, const attn::TokenLayout& layout) {
  if (!relation_classifier) throw Error("the model has no section relation classifier (model.section_relation_head)");
  const std::int64_t batch = encoded.hidden.size(0), length = layout.section.size(1);
  const std::int64_t sections = section_count(layout);
  // The tokens only: HIERENC's section states, when present, follow them.
  const at::Tensor real = real_tokens(encoded.padding, batch, encoded.hidden.size(1)).slice(1, 0, length);
  const SectionStates pooled =
      pool_sections(encoded.hidden.slice(1, 0, length), real, layout.section.expand({batch, -1}), sections);
  // Only the P sections with tokens take part: a long document's tree has far more sections
  // than its truncated source reaches, and S × S pairs of d-vectors would not fit. Each row's
  // present sections first (stable), padded with absent ones that the mask drops.
  const at::Tensor order = pooled.present.to(torch::kInt).argsort(/*stable=*/true, 1, /*descending=*/true);
  const std::int64_t kept = std::max<std::int64_t>(1, pooled.present.sum(1).max().item<std::int64_t>());
  const at::Tensor index = order.narrow(1, 0, kept);                                        // [B, P]
  const at::Tensor present = pooled.present.gather(1, index);
  const at::Tensor x = pooled.hidden.gather(1, index.unsqueeze(-1).expand({batch, kept, pooled.hidden.size(2)}));
  // The bilinear classifier x_i^T W_r x_j + b_r for every pair, without [B, P, P, d] copies.
  const at::Tensor scores = torch::einsum("bpd,rde,bqe->bpqr", {x, relation_classifier->weight, x}) +
                            relation_classifier->bias;  // [B, P, P, relations]
  const attn::Relation selected{.kind = attn::RelationKind::HibridsSelected};
  const at::Tensor all_labels =
      attn::section_relation_ids(selected, layout.path_len, layout.lvl_diff, layout.section_depth).to(torch::kLong);
  const at::Tensor labels = all_labels.expand({batch, sections, sections})
                                .gather(1, index.unsqueeze(2).expand({batch, kept, sections}))
                                .gather(2, index.unsqueeze(1).expand({batch, kept, kept}));
  const at::Tensor pairs = present.unsqueeze(2).logical_and(present.unsqueeze(1));
  const at::Tensor losses = torch::nn::functional::cross_entropy(
      scores.reshape({-1, attn::kSelectedRelations}), labels.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  const at::Tensor mask = pairs.reshape({-1}).to(losses.scalar_type());
  return (losses * mask).sum() / mask.sum().clamp_min(1);
}

at::Tensor Seq2SeqImpl::forward(const at::Tensor& source, const at::Tensor& padding,
                                const at::Tensor& decoder_inputs, const attn::TokenLayout* layout,
                                const at::Tensor& decoder_padding) {
  const EncoderOutput encoded = encode(source, padding, layout);
  return next_token_scores(decode(decoder_inputs, encoded, nullptr, decoder_padding), encoded, decoder_inputs);
}

}  // namespace strata::models
