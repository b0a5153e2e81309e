// strata baseline lead | lexrank | textrank | sumbasic | oracle | evidence: extractive
// reference systems, written as prediction / reference pairs that `strata eval rouge --pairs`
// scores.
#include <cstdio>
#include <functional>
#include <span>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/data/extractive_examples.h"
#include "strata/doc/dataset.h"
#include "strata/eval/baselines.h"
#include "strata/eval/evidence_oracle.h"
#include "strata/eval/sentence_ranking.h"

namespace strata::cli {

namespace {

// One {id, prediction, reference, source} line per document of `data`, written atomically.
void write_pairs(const std::string& data, const std::string& out,
                 const std::function<std::string(const Document&)>& predict) {
  DatasetReader reader(data);
  AtomicFile file(out);
  Document document;
  std::size_t count = 0;
  while (reader.next(document)) {
    nlohmann::json line;
    line["id"] = document.id;
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

// How many sentences an extractive system takes, and from which section.
struct Extent {
  std::size_t sentences = 1;
  std::string section;
};

std::shared_ptr<Extent> add_extent_options(CLI::App* sub) {
  auto extent = std::make_shared<Extent>();
  sub->add_option("--sentences", extent->sentences, "N, sentences to take")->capture_default_str();
  sub->add_option("--section", extent->section,
                  "take the sentences from the first section with this heading (e.g. DESCRIPTION)");
  return extent;
}

using Ranker = std::vector<std::size_t> (*)(std::span<const std::string>, std::size_t);

void add_ranker(CLI::App* baseline, const std::string& name, const std::string& description,
                Ranker rank) {
  auto* sub = baseline->add_subcommand(
      name, description + " Takes N sentences, one per line in document order; writes pairs as "
                          "`baseline lead` does.");
  auto files = add_pair_options(sub);
  auto extent = add_extent_options(sub);
  on_run(sub, [=] {
    write_pairs(files->data, files->out, [&](const Document& d) {
      const std::vector<std::string> sentences = document_sentences(d, extent->section);
      return join_sentences(sentences, rank(sentences, extent->sentences));
    });
  });
}

}  // namespace

void register_baseline(CLI::App& app) {
  CLI::App* baseline = app.add_subcommand("baseline", "Extractive reference systems");
  baseline->require_subcommand(1);

  auto* lead = baseline->add_subcommand(
      "lead", "Lead-N baseline: the first N sentences of each document, one per line. Writes "
              "JSONL pairs {id, prediction, reference, source} that `strata eval rouge --pairs` reads.");
  auto lead_files = add_pair_options(lead);
  auto lead_extent = add_extent_options(lead);
  on_run(lead, [=] {
    write_pairs(lead_files->data, lead_files->out, [&](const Document& d) {
      return lead_summary(d, lead_extent->sentences, lead_extent->section);
    });
  });

  add_ranker(baseline, "lexrank",
             "LexRank (Erkan & Radev 2004): PageRank over the sentences linked where their "
             "idf-modified cosine is above 0.1.",
             lexrank);
  add_ranker(baseline, "textrank",
             "TextRank (Mihalcea & Tarau 2004): PageRank over the sentences weighted by their "
             "shared words over the log of their lengths.",
             textrank);
  add_ranker(baseline, "sumbasic",
             "SumBasic (Nenkova & Vanderwende 2005): the sentences with the most frequent "
             "words, each pick squaring its words' probabilities.",
             sumbasic);

  auto* oracle = baseline->add_subcommand(
      "oracle", "Oracle: the single sentence of each document with the best ROUGE-1 F + "
                "ROUGE-2 F (stemmed) against its reference. An upper bound for one-sentence "
                "extraction; it reads the reference. Writes pairs as `baseline lead` does.");
  auto oracle_files = add_pair_options(oracle);
  on_run(oracle, [=] {
    write_pairs(oracle_files->data, oracle_files->out,
                [](const Document& d) { return oracle_sentence(d, d.summary); });
  });

  auto* evidence = baseline->add_subcommand(
      "evidence", "Evidence oracle (thesis ch. 2, Subramanian et al. 2020; \"Gold Ext\"): for each "
                  "reference sentence in turn, the two document sentences with the best mean "
                  "ROUGE-1/2/L F1 (stemmed) against it, each sentence once, one per line in "
                  "reference order. An upper bound; it reads the reference. Writes pairs as "
                  "`baseline lead` does.");
  auto evidence_files = add_pair_options(evidence);
  on_run(evidence, [=] {
    write_pairs(evidence_files->data, evidence_files->out, [](const Document& d) {
      const std::vector<std::string> sentences = document_sentences(d);
      return join_sentences(sentences, evidence_oracle(sentences, summary_sentences(d.summary)));
    });
  });
}

}  // namespace strata::cli
