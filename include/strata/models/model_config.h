#pragma once
// The size and shape of a model, from the [model] section of a run's config, saved as
// config.json beside the weights. One struct serves every architecture; fields an
// architecture does not use are ignored by it (and say so in their help). Which architectures
// exist, and what each checks of this struct, is the registry's business (recipes/architectures.h).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/attn/spec.h"

namespace strata {
class Config;
class ConfigSchema;
}  // namespace strata

namespace strata::models {

// What an encoder's head classifies.
enum class EncoderHead {
  Token,     // "token": one label per token
  Marker,    // "marker": one label per marker token (one vector per sentence or segment)
  Sequence,  // "sequence": one label per sequence, from the first token
};

struct ModelConfig {
  // A name in the architecture registry: "seq2seq" (BART-like), "causal_lm" (GPT-2-like),
  // "encoder" (BERT-like with a classification head), "bst_lm" (Block-State Transformer),
  // "ca_mtl", "sent_clf" / "sent_ptr" (hierarchical BiLSTM extractors), or one registered later.
  std::string architecture = "seq2seq";
  std::int64_t vocab_size = 8000;
  std::int64_t d_model = 256;
  std::int64_t heads = 4;
  std::int64_t d_ff = 1024;
  std::int64_t encoder_layers = 3;  // seq2seq and encoder
  std::int64_t decoder_layers = 3;  // seq2seq and causal_lm
  std::int64_t max_positions = 1024;
  double dropout = 0.1;              // residual and embedding dropout
  double attention_dropout = 0.0;    // on attention probabilities
  double activation_dropout = 0.0;   // after the FFN activation
  bool pre_norm = false;             // false = post-LayerNorm (BART), true = pre-LayerNorm (GPT-2)
  bool tie_embeddings = true;        // output projection shares the token embedding
  std::string activation = "gelu";   // "gelu" (erf), "gelu_new" (tanh approximation) or "relu"
  std::string attention_kernel = "fused";
  std::int64_t pad_id = 2;
  std::int64_t bos_id = 0;
  std::int64_t eos_id = 1;
  std::int64_t decoder_start_id = 0;  // seq2seq: the first decoder input
  EncoderHead head = EncoderHead::Sequence;
  std::int64_t num_labels = 2;        // encoder head
  std::int64_t marker_id = 4;         // encoder marker head: the marker token ([SEP])
  // causal_lm: the tokens that open a segment, ids in segment order ("5,6,7,8"; "" = none). A
  // token's segment is the index of the last of them at or before it; a window that holds
  // none continues the last segment (a later window of a long text). The TLM's part markers
  // [INTRO] [EXTRACT] [SUMMARY] [REST] when data.task = tlm, so that a decoder_attention mask
  // can read the parts (same_segment, query_segment) in training and decoding alike.
  std::string segment_markers;

  // Structured attention (attn/spec.h), each empty for plain attention, one spec for every
  // layer, or one per layer. In the run config each is a JSON string (a spec object or an
  // array of them) or the path of a JSON file; config.json holds the specs themselves.
  std::vector<attn::LayerSpec> encoder_attention;  // encoder self-attention
  std::vector<attn::LayerSpec> decoder_attention;  // decoder self-attention
  std::vector<attn::LayerSpec> cross_attention;    // decoder cross-attention
  // HIBRIDS-DEC (seed 001 Eq. 3): a tree relation whose learned table biases the last decoder
  // layer's cross-attention, weighted by the second-last layer's cross-attention. Kind None
  // = off.
  attn::Relation decoder_hibrids;
  // Projected attention layers (seed 003 Appendix A): a small attention of pal_size dims and
  // pal_heads heads beside every encoder layer's self-attention; pal_size 0 = none.
  // pal_attention: the PAL heads' specs, as encoder_attention.
  std::int64_t pal_size = 0;
  std::int64_t pal_heads = 4;
  std::vector<attn::LayerSpec> pal_attention;
  // Prefix-tuning (seed 000 §3, Li & Liang): prefix_length P learned keys and values before
  // the keys of every selected layer's encoder self-, decoder self- and cross-attention, each
  // family reparameterised by an MLP (embedding -> Linear(d, prefix_hidden) -> tanh ->
  // Linear to 2 * layers * d); 0 = none. prefix_layers: which layers of each stack have them
  // ("all", "low", "top", or indices from 0 such as "0,5"; low and top split at
  // hierarchy_split). Blocking (§4.1): the encoder's input is split evenly into
  // prefix_encoder_blocks segments and its prefixes into as many groups; the decoder's output
  // into segments of prefix_decoder_segment positions, prefix_decoder_blocks of them (the
  // last takes the rest). The masks themselves are prefix_block in the attention specs.
  std::int64_t prefix_length = 0;
  std::int64_t prefix_hidden = 512;
  std::string prefix_layers = "all";
  std::int64_t prefix_encoder_blocks = 1;
  std::int64_t prefix_decoder_blocks = 1;
  std::int64_t prefix_decoder_segment = 8;
  // The split layer of the hierarchical designs (HierBlock, HTruncSA, HSoftSA, prefixes at
  // low / top layers): layers below it are the lower ones; 0 = half of each stack, rounded up.
  std::int64_t hierarchy_split = 0;
  // Block-State Transformer (thesis ch. 5), read by bst_lm. Its decoder layers attend within
  // blocks of bst_window tokens (their own block and the one before, causal: SLIDE); the
  // layers bst_layers (indices from 0, e.g. "1,3") are BST layers, which also run a
  // state-space model over the whole sequence and cross-attend from each block to its context
  // states. bst_context: sh (one filter; the block's own positions, causal), mh (one output
  // matrix per head, as sh) or mf (bst_filters filters read at the previous block's last
  // token, with context ids, unmasked) or recurrent (no SSM: the Block-Recurrent Transformer's
  // bst_filters state vectors, updated block by block with fixed gates). bst_kernel: s4d (bst_states N, zero-order hold) or
  // unstructured (Eq. 5.4; t in [0, 1] spans bst_filter_length positions, the training
  // length). bst_ssm_width: the SSM's channels, 0 = d_model / 4 (mf: d_model / 8).
  // bst_memory: how a block reads the block before it: window (SLIDE, trained through) or xl
  // (a Transformer-XL cache: no gradient flows through it).
  std::int64_t bst_window = 64;
  std::string bst_memory = "window";
  std::string bst_layers = "1";
  std::string bst_context = "sh";
  std::string bst_kernel = "s4d";
  std::int64_t bst_states = 16;
  std::int64_t bst_filters = 32;
  std::int64_t bst_filter_length = 1024;
  std::int64_t bst_ssm_width = 0;
  // CA-MTL (thesis ch. 3), read by ca_mtl: a BERT-like encoder shared by tasks, each a task
  // embedding and a head. tasks: "name:classes,..." in the suite's order (classes 1 = a
  // regression), filled from the training suite when a run starts. camtl_attention: the
  // conditional attention bias of every layer: block (block-diagonal, camtl_blocks blocks; 0
  // = d_model / max_positions as the thesis's N = d / L, every input padded to
  // max_positions), full (one L × L block: FBA), hard (block, and attention masked to the
  // query's block), none. camtl_alignment: FiLM of the embeddings; camtl_cln: conditional
  // LayerNorms in the upper half of the layers (from hierarchy_split); camtl_bottleneck: the
  // conditional bottleneck in the top layer.
  std::string tasks;
  std::string camtl_attention = "block";
  std::int64_t camtl_blocks = 0;
  bool camtl_alignment = true;
  bool camtl_cln = true;
  bool camtl_bottleneck = true;
  // Hierarchical extractors (thesis ch. 2), read by sent_clf and sent_ptr: d_model is the word
  // embedding's size; a token-level BiLSTM of lstm_hidden units per direction reads each
  // sentence, a sentence-level one of the same size reads the sentence vectors, each
  // lstm_layers deep; dropout between them.
  std::int64_t lstm_hidden = 256;
  std::int64_t lstm_layers = 1;
  // Shapes of pretrained families (models/hf_checkpoint.h maps Hugging Face configs onto
  // them); the defaults are strata's own models. norm: "layer" or "rms" (T5: scale only),
  // with norm_eps. positions: "learned" or "none" (T5: its relative-position bias, an
  // attention spec, instead); position_offset: the rows the table keeps before position 0
  // (BART: 2); decoder_max_positions: the decoder's table when it differs (LED), 0 = the
  // same. scale_embedding: token embeddings times sqrt(d_model). scale_attention: scores
  // divided by sqrt(head dim) (T5: no). linear_bias: biases in attention and FFN projections
  // (T5: none). final_logits_bias: a fixed [1, V] bias added to the logits (BART, LED).
  // scale_decoder_outputs: the decoder's output times d_model^-0.5 before the tied output
  // projection (T5). share_relation_bias: every layer of a stack uses its first layer's
  // relation-bias table (T5). token_types: rows of a segment-type embedding added to the
  // encoder's input (BERT; 0 = none). pooler: the sequence head reads tanh(dense(first
  // token)) (BERT). global_projections: the encoder's global tokens (the spec's global(N))
  // attend through their own projections (Longformer / LED). ffn_gated: the feed-forward
  // block is act(fc1 x) * fc_gate(x) (T5 v1.1, FLAN-T5).
  std::string norm = "layer";
  double norm_eps = 1e-5;
  std::string positions = "learned";
  std::int64_t position_offset = 0;
  std::int64_t decoder_max_positions = 0;
  bool scale_embedding = false;
  bool scale_attention = true;
  bool linear_bias = true;
  bool final_logits_bias = false;
  bool scale_decoder_outputs = false;
  bool share_relation_bias = false;
  std::int64_t token_types = 0;
  bool pooler = false;
  bool global_projections = false;
  bool ffn_gated = false;
  // seq2seq: a pointer-generator (See et al. 2017): each output mixes the vocabulary
  // distribution with a copy distribution over the source tokens, by a learned gate.
  bool copy = false;
  // seq2seq: HIERENC's section encoder (section_encoder.h): layers over mean-pooled section
  // vectors after the encoder, read by the decoder after the tokens; 0 = none.
  std::int64_t section_encoder_layers = 0;
  // HIBRIDS in those section layers (seed 001 Table 5): a tree relation whose learned table
  // biases the sections' self-attention by each pair's relation. Kind None = off.
  attn::Relation section_encoder_hibrids;
  // seq2seq: MULTITASK (seed 001 §5.2): a bilinear classifier predicts each pair of sections'
  // HIBRIDS_S relation from the encoder's mean-pooled section vectors, its loss added to the
  // summary's with equal weight (Seq2SeqImpl::section_relation_loss).
  bool section_relation_head = false;

  // The spec of `layer` among `count` from a list above (plain when the list is empty).
  static attn::LayerSpec spec_of(const std::vector<attn::LayerSpec>& specs, std::int64_t layer);

  std::int64_t head_dim() const { return d_model / heads; }
  // Whether `name` is one of the pretrained families' shape fields above (norm ... global_projections).
  static bool pretrained_shape_field(std::string_view name);

  // Checks what holds for every architecture (d_model divisible by heads, positive sizes,
  // known names, token ids inside the vocabulary); strata::Error naming the field otherwise.
  // Each model checks what its own architecture needs on construction (check_stacks).
  void check() const;

  nlohmann::json to_json() const;
  // `source` names the file in errors. Unknown keys and wrong types are errors.
  static ModelConfig from_json(const nlohmann::json& json, const std::string& source);
  // Declares the model.* keys (defaults from ModelConfig{}) in a run's schema.
  static void declare(ConfigSchema& schema);
  // Reads the model.* keys of a validated config: sizes and explicit attention specs. The
  // designs that compile into specs (recipes/designs.h) are applied on top by the caller.
  static ModelConfig from_config(const Config& config);
};

std::string encoder_head_name(EncoderHead head);

// Which of a stack's `layers` layers a list of indices from 0 names ("0,5"; "" = none);
// strata::Error naming `field` for a malformed list or an index outside the stack.
std::vector<bool> layer_indices(const std::string& field, const std::string& text, std::int64_t layers);

// model.segment_markers as token ids (empty for none); strata::Error naming the field for a
// malformed list or an id outside the vocabulary.
std::vector<std::int64_t> segment_marker_ids(const ModelConfig& config);

// Which stacks an architecture has, for the checks that depend on it.
struct Stacks {
  bool encoder = false;
  bool decoder = false;
  bool cross_attention = false;  // the decoder attends to the encoder's output
  bool pals = false;             // projected attention layers beside encoder layers may be added
  bool prefixes = false;         // prefix-tuning's prefixes (encoder, decoder and cross-attention)
};
// config.check(), then what `stacks` need: strata::Error unless config.architecture is
// `architecture`, each present stack has layers, and no setting asks for a stack the
// architecture lacks (PALs, prefixes, HIBRIDS-DEC without cross-attention).
void check_stacks(const ModelConfig& config, const std::string& architecture, const Stacks& stacks);

}  // namespace strata::models
