#include "training_tasks.h"

#include <torch/torch.h>

#include <cstdio>

#include "strata/attn/patterns.h"
#include "strata/attn/token_layout.h"
#include "strata/core/error.h"
#include "strata/data/denoising.h"
#include "strata/data/extractive_examples.h"
#include "strata/data/lm_examples.h"
#include "strata/data/segmentation_examples.h"
#include "strata/data/seq2seq_examples.h"
#include "strata/data/train_fraction.h"
#include "strata/models/causal_lm.h"
#include "strata/models/encoder_model.h"
#include "strata/models/seq2seq.h"
#include "strata/train/checkpoint.h"
#include "strata/train/extractive_task.h"
#include "strata/train/lm_task.h"
#include "strata/train/model_dir.h"
#include "strata/train/run_config.h"
#include "strata/train/segmentation_task.h"
#include "strata/train/seq2seq_task.h"

namespace strata::cli {

namespace {

// The training set cut to data.train_fraction, saying so when it is cut.
template <class Example>
std::vector<Example> keep_fraction(std::vector<Example> train_set, const train::DataOptions& options) {
  if (options.train_fraction == 1.0 || train_set.empty()) return train_set;
  const std::size_t all = train_set.size();
  train_set = keep_train_fraction(std::move(train_set), options.train_fraction, options.fraction_seed);
  std::printf("data: using %zu of %zu training examples (train_fraction %g)\n", train_set.size(), all,
              options.train_fraction);
  return train_set;
}

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

// Sparsity ρ = 1 - |M| / N² (seed 003 §4.3.2) of the encoder's self-attention, averaged over
// layers, heads and up to 200 examples. Printed only when some layer is structured.
template <class Example>
void report_sparsity(const models::ModelConfig& m, const std::vector<Example>& examples) {
  if (m.encoder_attention.empty() || examples.empty()) return;
  double total = 0;
  std::size_t count = 0;
  for (std::size_t e = 0; e < examples.size() && e < 200; ++e) {
    const Layout& layout = examples[e].layout;
    const attn::TokenLayout batch = attn::batch_layouts({&layout});
    for (std::int64_t layer = 0; layer < m.encoder_layers; ++layer)
      total += attn::attention_sparsity(models::ModelConfig::spec_of(m.encoder_attention, layer), m.heads, batch,
                                        static_cast<std::int64_t>(layout.size()));
    count += static_cast<std::size_t>(m.encoder_layers);
  }
  std::printf("sparsity: rho = %.3f (1 - |M|/N^2 of the encoder's self-attention, mean over layers, heads and "
              "%zu examples)\n", total / static_cast<double>(count), std::min<std::size_t>(examples.size(), 200));
}

std::unique_ptr<train::TrainTask> encoder_task(const Config& config, const models::ModelConfig& m,
                                               const Tokenizer& tokenizer, const TaskData& data) {
  const std::string task = config.get<std::string>("data.task");
  const train::DataOptions options = train::data_options(config);
  if (task == "extractive") {
    if (m.head != models::EncoderHead::Marker) throw Error("model.head: extractive models need the marker head");
    ExtractiveOptions extract;
    extract.max_tokens = options.truncation.max_source_tokens;
    extract.oracle_sentences = static_cast<std::size_t>(config.get<std::int64_t>("extract.oracle_sentences"));
    auto load = [&](const std::filesystem::path& path) {
      return path.empty() ? std::vector<ExtractiveExample>{}
                          : load_extractive_examples(path, tokenizer, extract, !data.quiet, nullptr);
    };
    std::vector<ExtractiveExample> train_set = keep_fraction(load(data.train), options), valid_set = load(data.valid);
    std::printf("data: %zu training and %zu validation documents (extractive)\n", train_set.size(), valid_set.size());
    report_sparsity(m, train_set.empty() ? valid_set : train_set);
    train::ExtractiveSelection selection;
    selection.top_k = static_cast<std::size_t>(config.get<std::int64_t>("extract.top_k"));
    selection.trigram_blocking = config.get<bool>("extract.trigram_blocking");
    return std::make_unique<train::ExtractiveTask>(models::EncoderModel(m), tokenizer, std::move(train_set),
                                                   std::move(valid_set), selection);
  }
  if (task == "segmentation") {
    if (m.head != models::EncoderHead::Sequence) throw Error("model.head: segmentation models need the sequence head");
    SegmentationOptions segment;
    segment.context_tokens = static_cast<std::size_t>(config.get<std::int64_t>("segment.context_tokens"));
    segment.max_candidates_per_document = static_cast<std::size_t>(config.get<std::int64_t>("segment.max_candidates"));
    auto load = [&](const std::filesystem::path& path) {
      return path.empty() ? std::vector<SegmentationExample>{}
                          : load_segmentation_examples(path, tokenizer, segment, !data.quiet, nullptr);
    };
    std::vector<SegmentationExample> train_set = keep_fraction(load(data.train), options),
                                     valid_set = load(data.valid);
    std::printf("data: %zu training and %zu validation candidate boundaries (segmentation)\n", train_set.size(),
                valid_set.size());
    report_sparsity(m, train_set.empty() ? valid_set : train_set);
    return std::make_unique<train::SegmentationTask>(models::EncoderModel(m), std::move(train_set),
                                                     std::move(valid_set));
  }
  throw Error("data.task: encoder models learn 'extractive' or 'segmentation', got '" + task + "'");
}

// BART denoising pretraining (data.task = denoise): clean documents as loaded, noised afresh
// every epoch from (train.seed, epoch, example). Validation noise is drawn once from a seed
// of its own, so valid_loss compares across steps and across runs.
std::unique_ptr<train::TrainTask> denoising_task(const Config& config, const models::ModelConfig& m,
                                                 const Tokenizer& tokenizer, const TaskData& data) {
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
                        : load_denoising_examples(path, tokenizer, options.truncation, !data.quiet);
  };
  std::vector<Seq2SeqExample> train_set = keep_fraction(load(data.train), options), valid_set = load(data.valid);
  constexpr std::uint64_t kValidationNoiseSeed = 0x76616C6964ULL;
  for (std::size_t i = 0; i < valid_set.size(); ++i)
    valid_set[i] = add_noise(valid_set[i], *mask, noise, segments, noise_seed(kValidationNoiseSeed, 0, i));
  std::printf("data: %zu training and %zu validation documents (denoising: mask_ratio %g, poisson_lambda %g, "
              "sentence permutation %s)\n",
              train_set.size(), valid_set.size(), noise.mask_ratio, noise.poisson_lambda,
              noise.permute_sentences ? "on" : "off");
  report_clamping(m, train_set);
  const auto seed = static_cast<std::uint64_t>(config.get<std::int64_t>("train.seed"));
  train::ExampleRedraw redraw = [=, mask = *mask](const Seq2SeqExample& clean, std::size_t index, std::int64_t epoch) {
    return add_noise(clean, mask, noise, segments, noise_seed(seed, static_cast<std::uint64_t>(epoch), index));
  };
  return std::make_unique<train::Seq2SeqTask>(models::Seq2Seq(m), tokenizer, std::move(train_set), std::move(valid_set),
                                              config.get<std::int64_t>("decode.max_length"), std::move(redraw));
}

}  // namespace

std::unique_ptr<train::TrainTask> make_training_task(const Config& config, const models::ModelConfig& m,
                                                     const Tokenizer& tokenizer, const TaskData& data) {
  const train::DataOptions options = train::data_options(config);
  if (config.get<std::string>("data.task") == "denoise") {
    if (m.architecture != models::Architecture::Seq2Seq)
      throw Error("data.task: denoise pretrains seq2seq models (`strata pretrain`), this model is " +
                  models::architecture_name(m.architecture));
    return denoising_task(config, m, tokenizer, data);
  }
  if (m.architecture == models::Architecture::Encoder) return encoder_task(config, m, tokenizer, data);
  if (m.architecture == models::Architecture::Seq2Seq) {
    auto load = [&](const std::filesystem::path& path) {
      return path.empty() ? std::vector<Seq2SeqExample>{}
                          : load_seq2seq_examples(path, tokenizer, options.truncation, !data.quiet);
    };
    std::vector<Seq2SeqExample> train_set = keep_fraction(load(data.train), options), valid_set = load(data.valid);
    std::printf("data: %zu training and %zu validation documents\n", train_set.size(), valid_set.size());
    report_clamping(m, train_set);
    return std::make_unique<train::Seq2SeqTask>(models::Seq2Seq(m), tokenizer, std::move(train_set),
                                                std::move(valid_set), config.get<std::int64_t>("decode.max_length"));
  }
  auto load = [&](const std::filesystem::path& path) {
    return path.empty() ? train::TokenBlocks{} : load_lm_chunks({path}, tokenizer, options.block_size, !data.quiet);
  };
  train::TokenBlocks train_set = keep_fraction(load(data.train), options), valid_set = load(data.valid);
  std::printf("data: %zu training and %zu validation blocks of %zu tokens\n", train_set.size(), valid_set.size(),
              options.block_size);
  return std::make_unique<train::LmTask>(models::CausalLm(m), std::move(train_set), std::move(valid_set));
}

TrainedTask load_trained_task(const std::filesystem::path& model, const std::filesystem::path& data, bool quiet) {
  TrainedTask out;
  out.checkpoint = train::resolve_checkpoint(model);
  const train::Checkpoint checkpoint = train::load_checkpoint(out.checkpoint);
  const std::string config_file = (out.checkpoint / "config.json").string();
  const models::ModelConfig config = models::ModelConfig::from_json(checkpoint.model_config, config_file);
  Config run = Config::from_json(checkpoint.run_config, config_file);
  run.validate(train::run_schema());
  if (!checkpoint.tokenizer_dir) throw Error(out.checkpoint.string() + ": no tokenizer/ in the checkpoint");
  out.tokenizer = load_tokenizer(*checkpoint.tokenizer_dir);
  out.task = make_training_task(run, config, *out.tokenizer, {"", data, quiet});
  train::load_weights_into(out.task->model(), checkpoint.weights, (out.checkpoint / "model.safetensors").string());
  return out;
}

}  // namespace strata::cli
