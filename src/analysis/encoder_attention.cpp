#include "strata/analysis/encoder_attention.h"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "strata/analysis/global_relevance.h"
#include "strata/core/error.h"
#include "strata/core/progress.h"
#include "strata/models/collate.h"
#include "strata/models/seq2seq.h"

namespace strata::analysis {

void visit_encoder_attention(models::Seq2SeqImpl& model, std::span<const Seq2SeqExample> examples,
                             const AttentionMapVisitor& visit, Progress* progress) {
  const std::vector<NamedAttention> layers = encoder_self_attention(model);
  AttentionRecording recording(model, layers);
  torch::NoGradGuard no_grad;
  const models::ModelConfig& config = model.config();
  for (std::size_t e = 0; e < examples.size(); ++e) {
    const std::int64_t tokens = static_cast<std::int64_t>(examples[e].source.size());
    if (tokens == 0) throw Error("encoder attention: example " + examples[e].id + " has no source token");
    const std::size_t row[] = {e};
    const models::Seq2SeqBatch batch = models::collate_seq2seq(examples, row, config.pad_id, config.decoder_start_id,
                                                               /*with_targets=*/false, model.uses_layout());
    recording.restart();
    model.encode(batch.source, batch.source_padding, model.uses_layout() ? &batch.source_layout : nullptr);
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const at::Tensor& recorded = layers[l].module->recorded_weights();  // [1, H, n, P + n]
      if (!recorded.defined() || recorded.dim() != 4 || recorded.size(2) != tokens || recorded.size(3) < tokens)
        throw Error("encoder attention: encoder layer " + std::to_string(l) +
                    " recorded no [1, heads, tokens, prefixes + tokens] weights");
      AttentionMap map;
      map.example = e;
      map.layer = l;
      map.prefix_length = recorded.size(3) - tokens;
      map.head_weights = recorded[0].to(torch::kCPU, torch::kFloat).contiguous();
      map.weights = map.head_weights.mean(0);
      visit(map);
    }
    if (progress) progress->add();
  }
}

double prefix_mass(const at::Tensor& map, std::int64_t prefix_length) {
  if (prefix_length <= 0 || map.size(0) == 0) return 0.0;
  return map.narrow(1, 0, prefix_length).sum(1, /*keepdim=*/false, torch::kDouble).mean().item<double>();
}

double mean_row_entropy(const at::Tensor& map) {
  if (map.size(0) == 0) return 0.0;
  const at::Tensor p = map.to(torch::kDouble);
  // xlogy gives 0 · log 0 = 0.
  return (-at::xlogy(p, p)).sum(1).mean().item<double>();
}

}  // namespace strata::analysis
