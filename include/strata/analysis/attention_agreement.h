#pragma once
// How much two trained models agree on where their encoder self-attention looks (seed 003
// §3.1.2 reports "an average Jensen-Shannon Divergence of 0.01 between the attention
// distributions of BERTSum across 3 random seeds", which is what makes patterns found in one
// model's heads worth injecting in another's). For every pair of models, every encoder
// self-attention head and every real query of the validation examples: the JSD between the
// two models' attention rows over the real keys, in nats (0 when they agree, at most ln 2).
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <string>
#include <vector>

namespace strata::analysis {

// Each example's mean over its real queries i < lengths[b] of JSD(a[b, h, i, :], b[b, h, i, :])
// over its real keys j < lengths[b] (0 · log 0 = 0): a, b [B, H, L, L] attention weights,
// lengths [B] integers (real tokens first). Returns [B, H] double, 0 for an empty example.
// strata::Error on mismatched shapes.
at::Tensor attention_jsd_sums(const at::Tensor& a, const at::Tensor& b, const at::Tensor& lengths);

struct AgreementOptions {
  std::vector<std::string> models;  // two or more run directories or checkpoints of one task
  std::string data;                 // their validation data (JSONL, as the models were trained on)
  std::string out;                  // default FIRST_MODEL/agreement
  std::size_t max_examples = 0;     // the first N validation examples; 0: all
  std::size_t max_tokens = 4096;    // per batch (rows × longest)
  bool quiet = false;               // no progress output
};

// Loads every model inside its training task, runs them over the same batches, and writes
// OUT/agreement.json ({"models", "data", "examples", "layers", "pairs": [{"a", "b", "mean",
// "matrix"[layer][head]}], "mean"}) and prints a table per pair. strata::Error with fewer than
// two models, models whose encoders differ in layers or heads, or models that read different
// tokens for the same example (another tokenizer).
void run_agreement_analysis(const AgreementOptions& options);

}  // namespace strata::analysis
