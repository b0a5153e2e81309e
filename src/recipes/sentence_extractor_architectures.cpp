// sent_clf and sent_ptr: thesis ch. 2's hierarchical BiLSTM extractors (Sent-CLF, Sent-PTR),
// trained on the chapter's oracle (per summary sentence its two closest document sentences).
#include <torch/torch.h>

#include "builtin_architectures.h"
#include "strata/data/sentence_extraction_examples.h"
#include "strata/models/sentence_extractors.h"
#include "strata/train/sentence_extraction_task.h"

namespace strata::recipes {

namespace {

std::unique_ptr<train::TrainTask> make_extractor_task(std::shared_ptr<torch::nn::Module> module, const TaskInputs& in) {
  reject_denoising(in, in.model.architecture);
  const train::DataOptions data = train::data_options(in.run);
  const SentenceExtractionOptions options = train::sentence_extraction_options(in.run);
  auto load = [&](const std::filesystem::path& path) {
    return path.empty() ? std::vector<SentenceExtractionExample>{}
                        : load_sentence_extraction_examples(path, in.tokenizer, options, !in.quiet);
  };
  std::vector<SentenceExtractionExample> train_set = keep_fraction(load(in.train), data), valid_set = load(in.valid);
  std::printf("data: %zu training and %zu validation documents (at most %zu sentences of %zu tokens; mean summary "
              "%zu sentences)\n",
              train_set.size(), valid_set.size(), options.max_sentences, options.max_sentence_tokens,
              mean_summary_sentences(train_set.empty() ? valid_set : train_set));
  return std::make_unique<train::SentenceExtractionTask>(module, in.model.pad_id, std::move(train_set),
                                                         std::move(valid_set), train::extraction_options(in.run));
}

}  // namespace

Architecture sent_clf_architecture() {
  return {"sent_clf",
          "Sent-CLF (thesis ch. 2): hierarchical BiLSTM sentence classifier, the top extract.top_k sentences",
          [](const models::ModelConfig& config) -> std::shared_ptr<torch::nn::Module> {
            return models::SentClf(config).ptr();
          },
          make_extractor_task, nullptr};
}

Architecture sent_ptr_architecture() {
  return {"sent_ptr",
          "Sent-PTR (thesis ch. 2): hierarchical BiLSTM with a pointer decoder, beam search until its stop vector",
          [](const models::ModelConfig& config) -> std::shared_ptr<torch::nn::Module> {
            return models::SentPtr(config).ptr();
          },
          make_extractor_task, nullptr};
}

}  // namespace strata::recipes
