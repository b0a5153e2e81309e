// strata eval copy: how much of each prediction is lifted from its source, as the fraction of
// prediction n-grams (n = 1..max) that also occur in the source, and the novel remainder.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/jsonl.h"
#include "strata/core/progress.h"
#include "strata/eval/copy_rate.h"

namespace strata::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

struct CopyCommandOptions {
  std::string pairs;
  int max_n = kCopyRateDefaultMaxN;
  std::string field = "prediction";  // which text is scored against the source
  bool json = false;
};

struct Pair {
  std::string prediction;
  std::string source;
};

// Pairs are scored a batch at a time, in parallel, so that long sources neither sit in
// memory all at once nor keep the other cores idle.
constexpr std::size_t kBatch = 256;

void score_batch(const std::vector<Pair>& batch, int max_n, CopyRateCorpus& corpus) {
  std::vector<CopyCounts> counts(batch.size());
#pragma omp parallel for schedule(dynamic)
  for (std::size_t i = 0; i < batch.size(); ++i)
    counts[i] = copy_counts(batch[i].prediction, batch[i].source, max_n);
  for (const CopyCounts& c : counts) corpus.add(c);
}

ordered_json optional_json(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

void print_table(const CopyRateCorpus& corpus, const std::string& field) {
  std::printf("Copy rate over %zu pairs: the fraction of \"%s\" n-grams also in the source\n"
              "(lowercased words), averaged over the pairs whose \"%s\" has n words or more.\n"
              "novel = 1 - copy rate.\n\n",
              corpus.examples(), field.c_str(), field.c_str());
  std::printf("%4s %10s %10s %8s\n", "n", "copy_rate", "novel", "pairs");
  for (int n = 1; n <= corpus.max_n(); ++n) {
    const auto rate = corpus.copy_rate(n);
    if (rate)
      std::printf("%4d %10.4f %10.4f %8zu\n", n, *rate, 1.0 - *rate, corpus.examples_with(n));
    else
      std::printf("%4d %10s %10s %8zu\n", n, "-", "-", corpus.examples_with(n));
  }
}

void run_copy(const CopyCommandOptions& options) {
  CopyRateCorpus corpus(options.max_n);
  JsonlReader reader(options.pairs);
  Progress progress("copy rate", 0, "pairs");
  std::vector<Pair> batch;
  nlohmann::json object;
  while (reader.next(object)) {
    batch.push_back({reader.string_field(object, options.field), reader.string_field(object, "source")});
    if (batch.size() == kBatch) {
      score_batch(batch, options.max_n, corpus);
      progress.add(batch.size());
      batch.clear();
    }
  }
  score_batch(batch, options.max_n, corpus);
  progress.add(batch.size());
  progress.finish();
  if (corpus.examples() == 0) throw error_at(options.pairs, 0, "", "no pairs to score");

  if (!options.json) {
    print_table(corpus, options.field);
    return;
  }
  ordered_json orders = ordered_json::array();
  for (int n = 1; n <= corpus.max_n(); ++n)
    orders.push_back({{"n", n},
                      {"copy_rate", optional_json(corpus.copy_rate(n))},
                      {"novel", optional_json(corpus.novel_fraction(n))},
                      {"pairs", corpus.examples_with(n)},
                      {"copied", corpus.copied(n)},
                      {"total", corpus.total(n)}});
  const ordered_json summary = {
      {"count", corpus.examples()}, {"max_n", corpus.max_n()}, {"orders", orders}};
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void register_eval_copy(CLI::App& eval) {
  CLI::App* sub = eval.add_subcommand(
      "copy", "copy rate and novel n-gram fraction of predictions against their sources");
  auto options = std::make_shared<CopyCommandOptions>();
  sub->add_option("--pairs", options->pairs,
                  "JSONL file, one {\"prediction\": ..., \"source\": ...} per line")
      ->required();
  sub->add_option("--max-n", options->max_n, "largest n-gram order")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub->add_option("--field", options->field,
                  "the field scored against \"source\" (e.g. \"reference\", to measure how "
                  "abstractive the reference summaries are)")
      ->capture_default_str();
  sub->add_flag("--json", options->json, "print the table as one JSON object");
  on_run(sub, [options] { run_copy(*options); });
}

}  // namespace strata::cli
