#include "strata/decode/summarize.h"

#include <torch/torch.h>

#include "strata/core/progress.h"
#include "strata/core/utf8.h"
#include "strata/data/token_batches.h"
#include "strata/decode/generate.h"
#include "strata/decode/model_steppers.h"
#include "strata/models/collate.h"
#include "strata/text/tokenizer.h"

namespace strata::decode {

namespace {

// Drops the special tokens (eos, pad, ...) a generated sequence may hold before detokenizing.
// A byte-level model can emit a partial UTF-8 sequence: it becomes U+FFFD, as in HF's decode.
std::string detokenize(const Tokenizer& tokenizer, const std::vector<std::int64_t>& tokens,
                       const models::ModelConfig& config) {
  std::vector<std::int32_t> ids;
  for (const std::int64_t t : tokens) {
    if (t == config.eos_id) break;
    if (t == config.pad_id || t == config.bos_id || t == config.decoder_start_id) continue;
    ids.push_back(static_cast<std::int32_t>(t));
  }
  return sanitize_utf8(tokenizer.decode(ids));
}

// Eval mode for the duration of a call; the module's mode comes back on return and on an
// exception alike.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(torch::nn::Module& module) : module_(module), was_training_(module.is_training()) {
    module_.eval();
  }
  ~EvalModeGuard() { module_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  torch::nn::Module& module_;
  bool was_training_;
};
}  // namespace

GenerationOptions with_model_tokens(GenerationOptions options, const models::ModelConfig& config) {
  options.start_id = config.decoder_start_id;
  options.eos_id = config.eos_id;
  options.pad_id = config.pad_id;
  return options;
}

std::vector<std::string> summarize(models::Seq2Seq& model, const Tokenizer& tokenizer,
                                   std::span<const Seq2SeqExample> examples,
                                   const SummarizeOptions& options, Progress* progress) {
  const models::ModelConfig& config = model->config();
  const GenerationOptions generation = with_model_tokens(options.generation, config);
  generation.check();
  std::vector<std::size_t> lengths;
  lengths.reserve(examples.size());
  for (const Seq2SeqExample& e : examples) lengths.push_back(e.source.size());
  BatchPlanOptions plan_options;
  plan_options.max_tokens = options.max_source_tokens_per_batch;
  plan_options.shuffle = false;
  const BatchPlan plan = plan_batches(lengths, plan_options, 0);

  const EvalModeGuard eval_mode(*model);
  torch::NoGradGuard no_grad;
  std::vector<std::string> summaries(examples.size());
  for (const std::vector<std::size_t>& rows : plan) {
    const models::Seq2SeqBatch batch = models::collate_seq2seq(examples, rows, config.pad_id,
                                                               config.decoder_start_id, /*with_targets=*/false,
                                                               model->uses_layout());
    Seq2SeqStepper stepper(model, model->encode(batch.source, batch.source_padding, &batch.source_layout),
                           options.use_cache);
    const Sequences sequences = generate(stepper, generation);
    for (std::size_t i = 0; i < rows.size(); ++i)
      summaries[rows[i]] = detokenize(tokenizer, sequences[i], config);
    if (progress) progress->add(rows.size());
  }
  return summaries;
}

}  // namespace strata::decode
