// strata segment: topic boundaries of a dataset's documents with a trained segmentation model
// (Cross-Segment BERT; seed 003 §4.1), scored against the section breaks beside two peers
// computed on the same candidates.
#include <torch/torch.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/data/segmentation_examples.h"
#include "strata/eval/boundary_scores.h"
#include "strata/models/encoder_model.h"
#include "strata/text/tokenizer.h"
#include "strata/train/checkpoint.h"
#include "strata/recipes/loaded_model.h"
#include "strata/train/run_config.h"
#include "strata/train/segmentation_task.h"

namespace strata::cli {

namespace {

namespace fs = std::filesystem;

struct SegmentFlags {
  std::string model;
  std::string data;
  std::string json;
  std::string out;
  std::string tune_on;
  std::size_t limit = 0;
  std::uint64_t seed = 1;
  bool quiet = false;
};

// The segmentation model of a checkpoint, in eval mode, as recipes/loaded_model.h loads the other
// architectures; strata::Error when the run trained something else.
// Each candidate a boundary with probability `rate`, from a seeded mt19937_64 (whose output,
// unlike <random>'s distributions, is the same in every standard library).
std::vector<int> random_boundaries(std::size_t count, double rate, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<int> out(count);
  for (int& boundary : out) boundary = static_cast<double>(generator() >> 11) * 0x1.0p-53 < rate;
  return out;
}

struct System {
  std::string key;   // in the JSON report
  std::string name;  // in the table
  BoundaryScores scores;
};

nlohmann::ordered_json scores_json(const BoundaryScores& s) {
  return {{"precision", s.precision}, {"recall", s.recall}, {"f1", s.f1},
          {"predicted", s.predicted}, {"correct", s.correct}};
}

// A dataset's candidate boundaries and the model's probability for each.
struct Scored {
  std::vector<SegmentationExample> examples;
  std::vector<float> probabilities;
  std::vector<int> gold;
  SegmentationLoadStats stats;
};

Scored score_candidates(models::EncoderModel& model, const recipes::LoadedModel& info,
                        const SegmentationOptions& options, const std::string& data, std::size_t limit, bool quiet) {
  Scored out;
  out.examples = load_segmentation_examples(data, *info.tokenizer, options, !quiet, &out.stats);
  if (limit > 0 && out.examples.size() > limit) out.examples.resize(limit);
  Progress progress("segment", out.examples.size(), "candidates", quiet);
  out.probabilities = train::boundary_probabilities(
      model, out.examples, static_cast<std::size_t>(info.run.get<std::int64_t>("train.max_tokens")), &progress);
  progress.finish();
  for (const SegmentationExample& e : out.examples) out.gold.push_back(e.label);
  return out;
}

void run_segment(const SegmentFlags& flags) {
  recipes::LoadedModel info;
  models::EncoderModel model = recipes::load_encoder(flags.model, info, "segmentation", "strata segment");
  SegmentationOptions options;
  options.context_tokens = static_cast<std::size_t>(info.run.get<std::int64_t>("segment.context_tokens"));
  options.max_candidates_per_document =
      static_cast<std::size_t>(info.run.get<std::int64_t>("segment.max_candidates"));
  // The threshold first, from the validation set alone.
  std::optional<TunedThreshold> tuned;
  if (!flags.tune_on.empty()) {
    const Scored validation = score_candidates(model, info, options, flags.tune_on, 0, flags.quiet);
    tuned = tune_threshold(validation.probabilities, validation.gold);
  }
  const Scored test = score_candidates(model, info, options, flags.data, flags.limit, flags.quiet);
  const std::vector<SegmentationExample>& examples = test.examples;
  const std::vector<float>& probabilities = test.probabilities;
  const std::vector<int>& gold = test.gold;
  const SegmentationLoadStats& stats = test.stats;

  std::vector<int> predicted, everywhere(examples.size(), 1);
  for (std::size_t i = 0; i < examples.size(); ++i)
    predicted.push_back(probabilities[i] > 0.5f);  // the argmax of two classes
  const BoundaryScores all = boundary_scores(everywhere, gold);
  const double base_rate = all.precision;  // boundaries / candidates
  std::vector<System> systems{
      {"model", "model", boundary_scores(predicted, gold)},
      {"all_boundaries", "all boundaries", all},
      {"random_base_rate", "random at the base rate", boundary_scores(random_boundaries(gold.size(), base_rate, flags.seed), gold)}};
  std::vector<int> tuned_predicted;
  if (tuned) {
    tuned_predicted = boundaries_at(probabilities, tuned->threshold);
    systems.insert(systems.begin() + 1, System{"model_tuned", fmt::format("model, threshold {:.4g}", tuned->threshold),
                                               boundary_scores(tuned_predicted, gold)});
  }

  std::printf("%s: %zu candidate boundaries, %zu true (%.1f%%); context %zu tokens each side\n\n",
              flags.data.c_str(), examples.size(), all.gold, 100 * base_rate, options.context_tokens);
  std::printf("%-26s %9s %7s %7s\n", "", "precision", "recall", "f1");
  for (const System& s : systems)
    std::printf("%-26s %9.3f %7.3f %7.3f\n", s.name.c_str(), s.scores.precision, s.scores.recall, s.scores.f1);

  if (tuned)
    std::printf("\nthreshold %.4g tuned on %s (validation F1 %.3f at it)\n", tuned->threshold, flags.tune_on.c_str(),
                tuned->scores.f1);

  if (!flags.out.empty()) {
    std::string lines;
    for (std::size_t i = 0; i < examples.size(); ++i) {
      nlohmann::ordered_json line{{"id", examples[i].id},
                                  {"probability", probabilities[i]},
                                  {"prediction", predicted[i]},
                                  {"label", gold[i]}};
      if (tuned) line["tuned_prediction"] = tuned_predicted[i];
      lines += line.dump() + "\n";
    }
    write_file_atomic(flags.out, lines);
  }
  if (!flags.json.empty()) {
    nlohmann::ordered_json report{{"model", info.checkpoint.string()},
                                  {"data", flags.data},
                                  {"context_tokens", options.context_tokens},
                                  {"documents", stats.documents},
                                  {"skipped_documents", stats.skipped},
                                  {"candidates", examples.size()},
                                  {"boundaries", all.gold},
                                  {"random_seed", flags.seed}};
    if (tuned)
      report["tuned_threshold"] = {{"data", flags.tune_on},
                                   {"threshold", tuned->threshold},
                                   {"validation", scores_json(tuned->scores)}};
    for (const System& s : systems) report["systems"][s.key] = scores_json(s.scores);
    write_file_atomic(flags.json, report.dump(2) + "\n");
  }
}

}  // namespace

void register_segment(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "segment", "Predict topic boundaries between the sentences of a dataset's documents and score them against "
                 "the section breaks, beside the peers 'all boundaries' and 'random at the base rate'");
  auto flags = std::make_shared<SegmentFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint) or checkpoint directory")->required();
  sub->add_option("--data", flags->data, "JSONL dataset whose documents have sections")->required();
  sub->add_option("--json", flags->json, "write the scores here as JSON");
  sub->add_option("--out", flags->out, "write {id, probability, prediction, label} JSON lines here, one per candidate");
  sub->add_option("--tune-on", flags->tune_on,
                  "a labelled validation set: choose the probability threshold that maximises boundary F1 there, "
                  "and score the model at it too (row 'model, threshold T'; JSON 'model_tuned')")
      ->check(CLI::ExistingFile);
  sub->add_option("--limit", flags->limit, "score only the first N candidate boundaries (in file order)");
  sub->add_option("--seed", flags->seed, "seed of the random peer")->capture_default_str();
  sub->add_flag("--quiet", flags->quiet, "no progress bars");
  on_run(sub, [flags] { run_segment(*flags); });
}

}  // namespace strata::cli
