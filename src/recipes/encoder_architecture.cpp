// encoder: the BERT-like encoder with a classification head, for extractive summarisation
// (marker head) and topic segmentation (sequence head), seed 003; and its masked-LM
// pretraining (token head over the vocabulary, data.task = mlm, `strata pretrain`).
#include <torch/torch.h>

#include <algorithm>

#include "builtin_architectures.h"
#include "strata/attn/patterns.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/data/extractive_examples.h"
#include "strata/data/masked_lm.h"
#include "strata/data/mlm_examples.h"
#include "strata/data/segmentation_examples.h"
#include "strata/models/encoder_model.h"
#include "strata/train/extractive_task.h"
#include "strata/train/mlm_task.h"
#include "strata/train/segmentation_task.h"

namespace strata::recipes {

namespace {

// The layout of an example, or of a masked-LM chunk (a layout itself).
const Layout& layout_of(const Layout& chunk) { return chunk; }
template <class Example>
const Layout& layout_of(const Example& example) {
  return example.layout;
}

// Sparsity ρ = 1 - |M| / N² (seed 003 §4.3.2) of the encoder's self-attention, averaged over
// layers, heads and up to 200 examples. Printed only when some layer is structured.
template <class Example>
void report_sparsity(const models::ModelConfig& m, const std::vector<Example>& examples) {
  if (m.encoder_attention.empty() || examples.empty()) return;
  double total = 0;
  std::size_t count = 0;
  for (std::size_t e = 0; e < examples.size() && e < 200; ++e) {
    const Layout& layout = layout_of(examples[e]);
    const attn::TokenLayout batch = attn::batch_layouts({&layout});
    for (std::int64_t layer = 0; layer < m.encoder_layers; ++layer)
      total += attn::attention_sparsity(models::ModelConfig::spec_of(m.encoder_attention, layer), m.heads, batch,
                                        static_cast<std::int64_t>(layout.size()));
    count += static_cast<std::size_t>(m.encoder_layers);
  }
  std::printf("sparsity: rho = %.3f (1 - |M|/N^2 of the encoder's self-attention, mean over layers, heads and "
              "%zu examples)\n", total / static_cast<double>(count), std::min<std::size_t>(examples.size(), 200));
}

// BERT's masked-LM pretraining (data.task = mlm): the documents' chunks as loaded, masked afresh
// every epoch from (train.seed, epoch, chunk) by the task.
std::unique_ptr<train::TrainTask> mlm_task(models::EncoderModel model, const TaskInputs& in) {
  const Config& config = in.run;
  const train::DataOptions options = train::data_options(config);
  train::MlmMasking masking{masking_vocabulary(in.tokenizer, options.tokenizer),
                            config.get<double>("pretrain.mlm_probability"),
                            static_cast<std::uint64_t>(config.get<std::int64_t>("train.seed"))};
  check_mlm_probability(masking.probability);
  auto load = [&](const std::filesystem::path& path) {
    return path.empty() ? std::vector<Layout>{} : load_mlm_chunks(path, in.tokenizer, options.truncation, !in.quiet);
  };
  std::vector<Layout> train_set = keep_fraction(load(in.train), options), valid_set = load(in.valid);
  std::printf("data: %zu training and %zu validation chunks of at most %zu tokens (masked LM: mlm_probability %g)\n",
              train_set.size(), valid_set.size(), options.truncation.max_source_tokens, masking.probability);
  report_sparsity(in.model, train_set.empty() ? valid_set : train_set);
  return std::make_unique<train::MlmTask>(model, std::move(train_set), std::move(valid_set), std::move(masking));
}

std::unique_ptr<train::TrainTask> make_encoder_task(std::shared_ptr<torch::nn::Module> module, const TaskInputs& in) {
  reject_denoising(in, "encoder");
  const Config& config = in.run;
  const models::ModelConfig& m = in.model;
  const Tokenizer& tokenizer = in.tokenizer;
  const models::EncoderModel model = model_as<models::EncoderModel>(module, "encoder");
  const std::string task = config.get<std::string>("data.task");
  if (task == "mlm") return mlm_task(model, in);
  const train::DataOptions options = train::data_options(config);
  if (task == "extractive") {
    if (m.head != models::EncoderHead::Marker) throw Error("model.head: extractive models need the marker head");
    const ExtractiveOptions extract = train::extractive_options(config);
    auto load = [&](const std::filesystem::path& path) {
      return path.empty() ? std::vector<ExtractiveExample>{}
                          : load_extractive_examples(path, tokenizer, extract, !in.quiet, nullptr);
    };
    std::vector<ExtractiveExample> train_set = keep_fraction(load(in.train), options), valid_set = load(in.valid);
    std::printf("data: %zu training and %zu validation documents (extractive)\n", train_set.size(), valid_set.size());
    report_sparsity(m, train_set.empty() ? valid_set : train_set);
    return std::make_unique<train::ExtractiveTask>(model, tokenizer, std::move(train_set),
                                                   std::move(valid_set), train::extractive_selection(config));
  }
  if (task == "segmentation") {
    if (m.head != models::EncoderHead::Sequence) throw Error("model.head: segmentation models need the sequence head");
    SegmentationOptions segment;
    segment.context_tokens = static_cast<std::size_t>(config.get<std::int64_t>("segment.context_tokens"));
    segment.max_candidates_per_document = static_cast<std::size_t>(config.get<std::int64_t>("segment.max_candidates"));
    auto load = [&](const std::filesystem::path& path) {
      return path.empty() ? std::vector<SegmentationExample>{}
                          : load_segmentation_examples(path, tokenizer, segment, !in.quiet, nullptr);
    };
    std::vector<SegmentationExample> train_set = keep_fraction(load(in.train), options),
                                     valid_set = load(in.valid);
    std::printf("data: %zu training and %zu validation candidate boundaries (segmentation)\n", train_set.size(),
                valid_set.size());
    report_sparsity(m, train_set.empty() ? valid_set : train_set);
    return std::make_unique<train::SegmentationTask>(model, std::move(train_set),
                                                     std::move(valid_set));
  }
  throw Error("data.task: encoder models learn 'extractive', 'segmentation' or 'mlm', got '" + task + "'");
}

// A masked-LM head has one class per vocabulary token, on the token head.
void complete_encoder_config(models::ModelConfig& m, const Config& run) {
  if (run.get<std::string>("data.task") != "mlm") return;
  if (m.head != models::EncoderHead::Token)
    throw Error("model.head: masked-LM pretraining (data.task = mlm) predicts a token at each masked position and "
                "needs head = \"token\"; the config has '" + models::encoder_head_name(m.head) + "'");
  m.num_labels = m.vocab_size;
}

}  // namespace

Architecture encoder_architecture() {
  return {"encoder",
          "BERT-like encoder with a classification head: extractive summarisation, topic segmentation, or "
          "masked-LM pretraining (data.task = mlm)",
          [](const models::ModelConfig& config) -> std::shared_ptr<torch::nn::Module> {
            return models::EncoderModel(config).ptr();
          },
          make_encoder_task, nullptr, complete_encoder_config};
}

}  // namespace strata::recipes
