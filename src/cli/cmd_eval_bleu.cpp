// strata eval bleu: corpus BLEU of prediction/reference pairs as SacreBLEU computes it,
// optionally sentence BLEU per pair, and chrF / chrF++ beside it (--chrf).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/eval/bleu.h"
#include "strata/eval/chrf.h"

namespace strata::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

struct BleuCommandOptions {
  std::string pairs;
  std::string tokenize = "13a";
  std::string smooth = "exp";
  std::optional<double> smooth_value;
  bool lowercase = false;
  std::string sentence;
  bool chrf = false;
  bool json = false;
};

// "reference" (one string) or "references" (an array), the same count on every line.
std::vector<std::string> read_references(const JsonlReader& reader, const nlohmann::json& object,
                                         std::optional<std::size_t>& expected_count) {
  const bool has_one = object.contains("reference");
  const bool has_many = object.contains("references");
  if (has_one && has_many)
    throw reader.error("references", "give either \"reference\" or \"references\", not both");
  if (!has_one && !has_many)
    throw reader.error("reference", "missing (give \"reference\" or \"references\")");
  std::vector<std::string> references =
      has_one ? std::vector<std::string>{reader.string_field(object, "reference")}
              : reader.string_list_field(object, "references");
  if (references.empty()) throw reader.error("references", "empty; at least one is needed");
  if (!expected_count) expected_count = references.size();
  if (references.size() != *expected_count)
    throw reader.error(has_one ? "reference" : "references",
                       fmt::format("{} reference(s) here, {} on earlier lines; every line needs "
                                   "the same number",
                                   references.size(), *expected_count));
  return references;
}

ordered_json score_json(const BleuScore& s) {
  return {{"bleu", s.score},     {"precisions", s.precisions}, {"bp", s.bp},
          {"ratio", s.ratio},    {"sys_len", s.sys_len},       {"ref_len", s.ref_len},
          {"counts", s.counts},  {"totals", s.totals}};
}

void print_table(const BleuScore& s, std::size_t count, const std::string& signature) {
  std::printf("BLEU over %zu pairs (%s)\n\n", count, signature.c_str());
  std::printf("%-10s %10s\n", "measure", "value");
  std::printf("%-10s %10.4f\n", "BLEU", s.score);
  for (int n = 0; n < kBleuMaxOrder; ++n)
    std::printf("%-10s %10.4f  (%zu/%zu)\n", fmt::format("P{}", n + 1).c_str(), s.precisions[n],
                s.counts[n], s.totals[n]);
  std::printf("%-10s %10.4f\n", "BP", s.bp);
  std::printf("%-10s %10.4f\n", "ratio", s.ratio);
  std::printf("%-10s %10zu\n", "hyp_len", s.sys_len);
  std::printf("%-10s %10zu\n", "ref_len", s.ref_len);
}

void run_bleu(const BleuCommandOptions& cli) {
  BleuOptions options;
  options.tokenize = parse_bleu_tokenize(cli.tokenize);
  options.smooth = parse_bleu_smooth(cli.smooth);
  options.smooth_value = cli.smooth_value;
  options.lowercase = cli.lowercase;
  BleuOptions sentence_options = options;  // SacreBLEU's sentence_bleu: effective order
  sentence_options.effective_order = true;

  JsonlReader reader(cli.pairs);
  std::optional<std::size_t> num_refs;
  BleuStats total;
  const ChrfOptions chrf_options{.lowercase = cli.lowercase}, chrf_pp_options{.word_order = 2, .lowercase = cli.lowercase};
  ChrfStats chrf_total, chrf_pp_total;
  std::vector<BleuScore> sentences;
  std::size_t count = 0;
  nlohmann::json object;
  while (reader.next(object)) {
    const std::string prediction = reader.string_field(object, "prediction");
    const std::vector<std::string> references = read_references(reader, object, num_refs);
    const BleuStats stats = bleu_segment_stats(prediction, references, options);
    total += stats;
    if (cli.chrf) {
      chrf_total += chrf_segment_stats(prediction, references, chrf_options);
      chrf_pp_total += chrf_segment_stats(prediction, references, chrf_pp_options);
    }
    if (!cli.sentence.empty()) sentences.push_back(bleu_from_stats(stats, sentence_options));
    ++count;
  }
  if (count == 0) throw error_at(cli.pairs, 0, "", "no pairs to score");

  if (!cli.sentence.empty()) {
    AtomicFile file(cli.sentence);
    for (const BleuScore& s : sentences) file.stream() << score_json(s).dump() << '\n';
    file.commit();
  }

  const BleuScore score = bleu_from_stats(total, options);
  const std::string signature = bleu_signature(options, *num_refs);
  const double chrf = cli.chrf ? chrf_from_stats(chrf_total, chrf_options) : 0;
  const double chrf_pp = cli.chrf ? chrf_from_stats(chrf_pp_total, chrf_pp_options) : 0;
  if (!cli.json) {
    print_table(score, count, signature);
    if (cli.chrf)
      std::printf("\n%-10s %10.4f  (%s)\n%-10s %10.4f  (%s)\n", chrf_name(chrf_options).c_str(), chrf,
                  chrf_signature(chrf_options, *num_refs).c_str(), chrf_name(chrf_pp_options).c_str(), chrf_pp,
                  chrf_signature(chrf_pp_options, *num_refs).c_str());
    return;
  }
  ordered_json summary = {{"count", count}, {"signature", signature}};
  summary.update(score_json(score));
  if (cli.chrf) {
    summary["chrf"] = chrf;
    summary["chrf_signature"] = chrf_signature(chrf_options, *num_refs);
    summary["chrf_plus_plus"] = chrf_pp;
    summary["chrf_plus_plus_signature"] = chrf_signature(chrf_pp_options, *num_refs);
  }
  std::printf("%s\n", summary.dump().c_str());
}

}  // namespace

void register_eval_bleu(CLI::App& eval) {
  CLI::App* sub = eval.add_subcommand(
      "bleu", "corpus BLEU exactly as SacreBLEU computes it (13a tokens, exp smoothing)");
  auto options = std::make_shared<BleuCommandOptions>();
  sub->add_option("--pairs", options->pairs,
                  "JSONL file, one {\"prediction\": ..., \"reference\": ...} or "
                  "{\"prediction\": ..., \"references\": [...]} per line")
      ->required();
  sub->add_option("--tokenize", options->tokenize, "13a (mteval-v13a), intl (mteval-v14) or none")
      ->check(CLI::IsMember({"13a", "intl", "none"}))
      ->capture_default_str();
  sub->add_option("--smooth", options->smooth, "exp, floor, add-k or none")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}))
      ->capture_default_str();
  sub->add_option("--smooth-value", options->smooth_value,
                  "value for floor (default 0.1) or add-k (default 1)");
  sub->add_flag("--lowercase", options->lowercase, "lowercase predictions and references");
  sub->add_option("--sentence", options->sentence,
                  "write sentence BLEU (effective order) as one JSON line per pair, in input order");
  sub->add_flag("--chrf", options->chrf,
                "also corpus chrF and chrF++ as SacreBLEU's CHRF() and CHRF(word_order=2) compute them");
  sub->add_flag("--json", options->json, "print the corpus score as one JSON object");
  on_run(sub, [options] { run_bleu(*options); });
}

}  // namespace strata::cli
