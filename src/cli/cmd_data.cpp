// strata data manpages | stats.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/data/manpage_corpus.h"
#include "strata/text/tokenizer.h"

namespace strata::cli {

namespace {

void print_stats_table(const nlohmann::json& stats) {
  std::printf("%-11s %8s %22s %22s %22s\n", "split", "docs", "input words p50/p90",
              "target words p50/p90", "input tokens p50/p90");
  for (const char* split : {"train", "validation", "test"}) {
    const auto& s = stats["splits"][split];
    const auto pair = [](const nlohmann::json& p) {
      if (p.is_null() || p.empty()) return std::string("-");
      return fmt::format("{}/{}", p["p50"].get<std::size_t>(), p["p90"].get<std::size_t>());
    };
    std::printf("%-11s %8zu %22s %22s %22s\n", split, s["documents"].get<std::size_t>(),
                pair(s["input_words"]).c_str(), pair(s["target_words"]).c_str(),
                pair(s["input_tokens"]).c_str());
  }
  if (stats.contains("skipped")) std::printf("skipped: %s\n", stats["skipped"].dump().c_str());
  std::printf("sections by depth: %s\n", stats["all"]["sections_by_depth"].dump().c_str());
}

}  // namespace

void register_data(CLI::App& app) {
  CLI::App* data = app.add_subcommand("data", "Build and inspect datasets");
  data->require_subcommand(1);

  auto* manpages = data->add_subcommand(
      "manpages",
      "Build the man-page summarisation corpus from the installed English man pages: input = "
      "the sections after NAME, target = the NAME description. Writes OUT/{train,validation,"
      "test}.jsonl (native form) and OUT/stats.json.");
  auto options = std::make_shared<ManpageCorpusOptions>();
  auto out = std::make_shared<std::string>();
  auto tokenizer_path = std::make_shared<std::string>();
  manpages->add_option("--out", *out, "output directory")->required();
  manpages->add_option("--man-root", options->man_root, "man page root holding man1..man9")
      ->capture_default_str();
  manpages->add_option("--min-body-words", options->min_body_words, "skip pages with shorter bodies")
      ->capture_default_str();
  manpages->add_option("--exclude", options->exclude,
                       "skip pages whose name matches this shell glob (repeatable), e.g. 'gcloud*'");
  manpages->add_option("--validation-percent", options->validation_percent)->capture_default_str();
  manpages->add_option("--test-percent", options->test_percent)->capture_default_str();
  manpages->add_option("--tokenizer", *tokenizer_path, "also report token lengths with this tokenizer");
  manpages->add_flag("--quiet", options->quiet, "no progress output");
  on_run(manpages, [=] {
    std::unique_ptr<Tokenizer> tokenizer;
    if (!tokenizer_path->empty()) tokenizer = load_tokenizer(*tokenizer_path);
    ManpageCorpusOptions o = *options;
    o.tokenizer = tokenizer.get();
    print_stats_table(build_manpage_corpus(o, *out));
    std::printf("wrote %s/{train,validation,test}.jsonl and stats.json\n", out->c_str());
  });

  auto* stats = data->add_subcommand(
      "stats", "Recompute a corpus directory's stats.json, with token lengths from a tokenizer");
  auto corpus = std::make_shared<std::string>();
  auto stats_tokenizer = std::make_shared<std::string>();
  stats->add_option("--data", *corpus, "corpus directory (from `strata data manpages`)")->required();
  stats->add_option("--tokenizer", *stats_tokenizer, "tokenizer for token lengths");
  auto json = std::make_shared<bool>(false);
  stats->add_flag("--json", *json, "print stats.json instead of the table");
  on_run(stats, [=] {
    std::unique_ptr<Tokenizer> tokenizer;
    if (!stats_tokenizer->empty()) tokenizer = load_tokenizer(*stats_tokenizer);
    const nlohmann::json result = corpus_stats(*corpus, tokenizer.get());
    if (*json) std::cout << result.dump(2) << '\n';
    else print_stats_table(result);
  });
}

}  // namespace strata::cli
