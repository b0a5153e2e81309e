// strata baseline lead | oracle: extractive reference systems, written as prediction /
// reference pairs that `strata eval rouge --pairs` scores.
#include <cstdio>
#include <functional>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/doc/dataset.h"
#include "strata/eval/baselines.h"

namespace strata::cli {

namespace {

// One {prediction, reference, source} line per document of `data`, written atomically.
void write_pairs(const std::string& data, const std::string& out,
                 const std::function<std::string(const Document&)>& predict) {
  DatasetReader reader(data);
  AtomicFile file(out);
  Document document;
  std::size_t count = 0;
  while (reader.next(document)) {
    nlohmann::json line;
    line["prediction"] = predict(document);
    line["reference"] = document.summary;
    line["source"] = document.text;
    file.stream() << line.dump() << '\n';
    ++count;
  }
  if (count == 0) throw Error(data + ": no documents");
  file.commit();
  std::printf("wrote %zu pairs to %s\n", count, out.c_str());
}

struct PairFiles {
  std::string data, out;
};

std::shared_ptr<PairFiles> add_pair_options(CLI::App* sub) {
  auto files = std::make_shared<PairFiles>();
  sub->add_option("--data", files->data, "dataset JSONL (any shape strata reads)")->required();
  sub->add_option("--out", files->out, "output pairs JSONL")->required();
  return files;
}

}  // namespace

void register_baseline(CLI::App& app) {
  CLI::App* baseline = app.add_subcommand("baseline", "Extractive reference systems");
  baseline->require_subcommand(1);

  auto* lead = baseline->add_subcommand(
      "lead", "Lead-N baseline: the first N sentences of each document, one per line. Writes "
              "JSONL pairs {prediction, reference, source} that `strata eval rouge --pairs` reads.");
  auto lead_files = add_pair_options(lead);
  auto sentences = std::make_shared<std::size_t>(1);
  auto section = std::make_shared<std::string>();
  lead->add_option("--sentences", *sentences, "N, sentences to take")->capture_default_str();
  lead->add_option("--section", *section,
                   "take the lead from the first section with this heading (e.g. DESCRIPTION)");
  on_run(lead, [=] {
    write_pairs(lead_files->data, lead_files->out,
                [&](const Document& d) { return lead_summary(d, *sentences, *section); });
  });

  auto* oracle = baseline->add_subcommand(
      "oracle", "Oracle: the single sentence of each document with the best ROUGE-1 F + "
                "ROUGE-2 F (stemmed) against its reference. An upper bound for one-sentence "
                "extraction; it reads the reference. Writes pairs as `baseline lead` does.");
  auto oracle_files = add_pair_options(oracle);
  on_run(oracle, [=] {
    write_pairs(oracle_files->data, oracle_files->out,
                [](const Document& d) { return oracle_sentence(d, d.summary); });
  });
}

}  // namespace strata::cli
