// strata eval copy: how much of each prediction is lifted from its source, as the fraction of
// prediction n-grams (n = 1..max) that also occur in the source, and the novel remainder;
// with --attribute, how the copied n-grams split between the model's extract block and the
// rest of its input.
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
  bool attribute = false;
  std::string extract_field = "extract";
  std::string context_field = "context";
};

struct Pair {
  std::string prediction;
  std::string source;
  std::string extract;  // with --attribute: the model's extract block
  std::string context;  // and the rest of its input
};

// Pairs are scored a batch at a time, in parallel, so that long sources neither sit in
// memory all at once nor keep the other cores idle.
constexpr std::size_t kBatch = 256;

void score_batch(const std::vector<Pair>& batch, int max_n, CopyRateCorpus& corpus,
                 std::optional<CopyAttributionCorpus>& attribution) {
  std::vector<CopyCounts> counts(batch.size());
  std::vector<CopyAttribution> attributed(attribution ? batch.size() : 0);
#pragma omp parallel for schedule(dynamic)
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::vector<std::string> prediction = copy_rate_tokens(batch[i].prediction);
    counts[i] = copy_counts(prediction, copy_rate_tokens(batch[i].source), max_n);
    if (attribution)
      attributed[i] = copy_attribution(prediction, copy_rate_tokens(batch[i].extract),
                                       copy_rate_tokens(batch[i].context), max_n);
  }
  for (const CopyCounts& c : counts) corpus.add(c);
  for (const CopyAttribution& a : attributed) attribution->add(a);
}

ordered_json optional_json(const std::optional<double>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

void print_share(const std::optional<double>& share) {
  if (share)
    std::printf(" %12.4f", *share);
  else
    std::printf(" %12s", "-");
}

void print_table(const CopyRateCorpus& corpus,
                 const std::optional<CopyAttributionCorpus>& attribution,
                 const CopyCommandOptions& options) {
  const char* field = options.field.c_str();
  std::printf("Copy rate over %zu pairs: the fraction of \"%s\" n-grams also in the source\n"
              "(lowercased words), averaged over the pairs whose \"%s\" has n words or more.\n"
              "novel = 1 - copy rate.\n",
              corpus.examples(), field, field);
  if (attribution)
    std::printf("Attribution, pooled over the pairs: of the \"%s\" n-grams found in \"%s\" or\n"
                "\"%s\" (copied), the share found in \"%s\" (from_extract) and in it alone\n"
                "(extract_only).\n",
                field, options.extract_field.c_str(), options.context_field.c_str(),
                options.extract_field.c_str());
  std::printf("\n%4s %10s %10s %8s", "n", "copy_rate", "novel", "pairs");
  if (attribution) std::printf(" %12s %12s %10s", "from_extract", "extract_only", "copied");
  std::printf("\n");
  for (int n = 1; n <= corpus.max_n(); ++n) {
    const auto rate = corpus.copy_rate(n);
    if (rate)
      std::printf("%4d %10.4f %10.4f %8zu", n, *rate, 1.0 - *rate, corpus.examples_with(n));
    else
      std::printf("%4d %10s %10s %8zu", n, "-", "-", corpus.examples_with(n));
    if (attribution) {
      const CopyAttribution& pooled = attribution->pooled();
      print_share(pooled.from_extract_share(n));
      print_share(pooled.extract_only_share(n));
      std::printf(" %10zu", pooled.copied(n));
    }
    std::printf("\n");
  }
}

ordered_json attribution_json(const CopyAttribution& pooled, int n) {
  return {{"from_extract_share", optional_json(pooled.from_extract_share(n))},
          {"extract_only_share", optional_json(pooled.extract_only_share(n))},
          {"copied", pooled.copied(n)},
          {"extract_only", pooled.extract_only[n - 1]},
          {"context_only", pooled.context_only[n - 1]},
          {"both", pooled.both[n - 1]},
          {"novel", pooled.novel[n - 1]}};
}

void run_copy(const CopyCommandOptions& options) {
  CopyRateCorpus corpus(options.max_n);
  std::optional<CopyAttributionCorpus> attribution;
  if (options.attribute) attribution.emplace(options.max_n);
  JsonlReader reader(options.pairs);
  Progress progress("copy rate", 0, "pairs");
  std::vector<Pair> batch;
  nlohmann::json object;
  while (reader.next(object)) {
    Pair& pair = batch.emplace_back(
        Pair{reader.string_field(object, options.field), reader.string_field(object, "source")});
    if (options.attribute) {
      pair.extract = reader.string_field(object, options.extract_field);
      pair.context = reader.string_field(object, options.context_field);
    }
    if (batch.size() == kBatch) {
      score_batch(batch, options.max_n, corpus, attribution);
      progress.add(batch.size());
      batch.clear();
    }
  }
  score_batch(batch, options.max_n, corpus, attribution);
  progress.add(batch.size());
  progress.finish();
  if (corpus.examples() == 0) throw error_at(options.pairs, 0, "", "no pairs to score");

  if (!options.json) {
    print_table(corpus, attribution, options);
    return;
  }
  ordered_json orders = ordered_json::array();
  for (int n = 1; n <= corpus.max_n(); ++n) {
    ordered_json order = {{"n", n},
                          {"copy_rate", optional_json(corpus.copy_rate(n))},
                          {"novel", optional_json(corpus.novel_fraction(n))},
                          {"pairs", corpus.examples_with(n)},
                          {"copied", corpus.copied(n)},
                          {"total", corpus.total(n)}};
    if (attribution) order["attribution"] = attribution_json(attribution->pooled(), n);
    orders.push_back(std::move(order));
  }
  const ordered_json summary = {
      {"count", corpus.examples()}, {"max_n", corpus.max_n()}, {"orders", orders}};
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void register_eval_copy(CLI::App& eval) {
  CLI::App* sub = eval.add_subcommand(
      "copy", "copy rate and novel n-gram fraction of predictions against their sources");
  sub->footer(
      "--attribute (thesis ch. 2, Fig. 2.2 right) asks where a model that reads an extract "
      "block beside the rest of its input takes what it copies. Each line then also carries the "
      "extract block's text (--extract-field) and the rest of the model's input "
      "(--context-field), and every prediction n-gram counts, with multiplicity, as found in the "
      "extract only, the context only, both, or neither (an n-gram across their junction is in "
      "neither). Per n, the table adds from_extract, the share of the copied n-grams (found in "
      "either) that the extract holds; extract_only, the share found in the extract alone; and "
      "copied, their count. The shares are pooled ratios over all pairs, '-' where nothing was "
      "copied; the copy rate columns still compare against \"source\".");
  auto options = std::make_shared<CopyCommandOptions>();
  sub->add_option("--pairs", options->pairs,
                  "JSONL file, one {\"prediction\": ..., \"source\": ...} per line (with "
                  "--attribute, also the extract and context fields)")
      ->required();
  sub->add_option("--max-n", options->max_n, "largest n-gram order")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  sub->add_option("--field", options->field,
                  "the field scored against \"source\" (e.g. \"reference\", to measure how "
                  "abstractive the reference summaries are)")
      ->capture_default_str();
  CLI::Option* attribute = sub->add_flag(
      "--attribute", options->attribute,
      "split the copied n-grams between the extract block and the rest of the model's input");
  sub->add_option("--extract-field", options->extract_field,
                  "the field holding the extract block the model read")
      ->needs(attribute)
      ->capture_default_str();
  sub->add_option("--context-field", options->context_field,
                  "the field holding the rest of the model's input")
      ->needs(attribute)
      ->capture_default_str();
  sub->add_flag("--json", options->json,
                "print the table as one JSON object (with --attribute, each order gains an "
                "\"attribution\" object)");
  on_run(sub, [options] { run_copy(*options); });
}

}  // namespace strata::cli
