// seq2seq: the BART-like encoder-decoder, trained to summarise (or, with data.task = denoise,
// pretrained on BART's noise).
#include <torch/torch.h>

#include "builtin_architectures.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/data/denoising.h"
#include "strata/data/seq2seq_examples.h"
#include "strata/decode/model_steppers.h"
#include "strata/models/seq2seq.h"
#include "strata/train/seq2seq_task.h"

namespace strata::recipes {

namespace {

// Trees deeper or wider than a HIBRIDS table share its edge entries: say how often.
void report_clamping(const models::ModelConfig& m, const std::vector<Seq2SeqExample>& examples) {
  std::vector<attn::Relation> relations;
  for (const attn::LayerSpec& spec : m.encoder_attention) relations.push_back(spec.bias);
  relations.push_back(m.decoder_hibrids);
  for (const attn::Relation& relation : relations) {
    if (relation.kind != attn::RelationKind::Hibrids) continue;
    attn::TreeClamping total;
    for (const Seq2SeqExample& example : examples) {
      const attn::TreeClamping one = attn::tree_clamping(relation, example.source.tree);
      total.pairs += one.pairs;
      total.clamped += one.clamped;
    }
    std::printf("hibrids: %lld of %lld section pairs (%.2f%%) lie beyond |PathLen| <= %lld or |LvlDiff| <= %lld "
                "and share the table's edge entries\n",
                static_cast<long long>(total.clamped), static_cast<long long>(total.pairs),
                total.pairs > 0 ? 100.0 * total.clamped / total.pairs : 0.0,
                static_cast<long long>(relation.max_path), static_cast<long long>(relation.max_level));
    return;  // the layers share one relation in every recipe; once is enough
  }
}

// BART denoising pretraining (data.task = denoise): clean documents as loaded, noised afresh
// every epoch from (train.seed, epoch, example). Validation noise is drawn once from a seed
// of its own, so valid_loss compares across steps and across runs.
std::unique_ptr<train::TrainTask> denoising_task(models::Seq2Seq model, const TaskInputs& in) {
  const Config& config = in.run;
  const Tokenizer& tokenizer = in.tokenizer;
  const train::DataOptions options = train::data_options(config);
  const DenoisingOptions noise = train::denoising_options(config);
  const std::optional<std::int32_t> mask = tokenizer.mask_id();
  if (!mask) {
    const std::string& piece = tokenizer.specials().mask;
    throw Error(options.tokenizer.string() + ": the " + tokenizer.kind() + " tokenizer has no mask token" +
                (piece.empty() ? "" : " (" + piece + ")") +
                ", which denoising (data.task = denoise, `strata pretrain`) needs; `strata tokenizer train` "
                "makes tokenizers with <mask>");
  }
  const int segments = options.truncation.segments;
  auto load = [&](const std::filesystem::path& path) {
    return path.empty() ? std::vector<Seq2SeqExample>{}
                        : (noise.whole_documents ? load_denoising_chunks : load_denoising_examples)(
                              path, tokenizer, options.truncation, !in.quiet);
  };
  std::vector<Seq2SeqExample> train_set = keep_fraction(load(in.train), options), valid_set = load(in.valid);
  constexpr std::uint64_t kValidationNoiseSeed = 0x76616C6964ULL;
  for (std::size_t i = 0; i < valid_set.size(); ++i)
    valid_set[i] = add_noise(valid_set[i], *mask, noise, segments, noise_seed(kValidationNoiseSeed, 0, i));
  std::printf("data: %zu training and %zu validation %s (denoising: mask_ratio %g, poisson_lambda %g, "
              "sentence permutation %s)\n",
              train_set.size(), valid_set.size(),
              noise.whole_documents ? "chunks of whole documents" : "documents", noise.mask_ratio, noise.poisson_lambda,
              noise.permute_sentences ? "on" : "off");
  report_clamping(in.model, train_set);
  const auto seed = static_cast<std::uint64_t>(config.get<std::int64_t>("train.seed"));
  train::ExampleRedraw redraw = [=, mask = *mask](const Seq2SeqExample& clean, std::size_t index, std::int64_t epoch) {
    return add_noise(clean, mask, noise, segments, noise_seed(seed, static_cast<std::uint64_t>(epoch), index));
  };
  return std::make_unique<train::Seq2SeqTask>(model, tokenizer, std::move(train_set), std::move(valid_set),
                                              config.get<std::int64_t>("decode.max_length"), std::move(redraw));
}

std::unique_ptr<train::TrainTask> make_seq2seq_task(std::shared_ptr<torch::nn::Module> module, const TaskInputs& in) {
  const models::Seq2Seq model = model_as<models::Seq2Seq>(module, "seq2seq");
  const std::string task = in.run.get<std::string>("data.task");
  if (task == "denoise") return denoising_task(model, in);
  if (!task.empty() && task != "qs_hierarchy")
    throw Error("data.task: seq2seq models summarise (\"\"), learn question-summary hierarchies (qs_hierarchy) or "
                "pretrain (denoise), got '" + task + "'");
  const train::DataOptions options = train::data_options(in.run);
  auto load = [&](const std::filesystem::path& path) {
    return path.empty() ? std::vector<Seq2SeqExample>{} : train::load_seq2seq_data(path, in.tokenizer, in.run, !in.quiet);
  };
  std::vector<Seq2SeqExample> train_set = keep_fraction(load(in.train), options), valid_set = load(in.valid);
  std::printf("data: %zu training and %zu validation %s\n", train_set.size(), valid_set.size(),
              task == "qs_hierarchy" ? "QS samples" : "documents");
  report_clamping(in.model, train_set);
  return std::make_unique<train::Seq2SeqTask>(model, in.tokenizer, std::move(train_set), std::move(valid_set),
                                              in.run.get<std::int64_t>("decode.max_length"));
}

std::unique_ptr<decode::StepModel> seq2seq_stepper(std::shared_ptr<torch::nn::Module> module, const DecodeInputs& in) {
  models::Seq2Seq model = model_as<models::Seq2Seq>(module, "seq2seq");
  models::EncoderOutput encoded = model->encode(in.ids, in.padding, in.layout);
  return std::make_unique<decode::Seq2SeqStepper>(model, std::move(encoded), in.use_cache);
}

}  // namespace

Architecture seq2seq_architecture() {
  return {"seq2seq", "BART-like encoder-decoder: summarisation, or denoising pretraining (data.task = denoise)",
          [](const models::ModelConfig& config) -> std::shared_ptr<torch::nn::Module> {
            return models::Seq2Seq(config).ptr();
          },
          make_seq2seq_task, seq2seq_stepper};
}

}  // namespace strata::recipes
