// strata chain: interactive chain prompting and its baselines over any backend (chain/chain_job.h).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "strata/chain/chain_job.h"
#include "strata/chain/chain_training.h"

namespace strata::cli {

namespace {

struct ChainFlags {
  std::string config, data, out = "chain-out";
  std::vector<std::string> overrides;
  std::size_t limit = 0;
  bool quiet = false;
  bool example_config = false;
};

struct TextFlags {
  std::string data, language = "fr", out;
  std::vector<std::string> steps;
};

void register_chain_text(CLI::App& chain) {
  CLI::App* sub = chain.add_subcommand("text", "Training documents for small models that play the chain's roles");
  sub->footer(
      "Each example through each step: the step's zero-shot prompt in Appendix C's layout and the right completion, "
      "one {\"id\", \"text\"} document each, the shape `strata lm train` reads. Steps: no_extra (S -> A), "
      "with_context (S, C -> A), ask (S -> Q), user (S, C, Q -> U), translate (S, Q, U -> A). A model trained on "
      "some steps answers a chain whose prompt file has no exemplars.");
  auto flags = std::make_shared<TextFlags>();
  sub->add_option("--data", flags->data, "examples (.jsonl with question and answer, as `strata data ambig` writes)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--language", flags->language, "which of the examples' targets is the translation")->capture_default_str();
  sub->add_option("--steps", flags->steps, "steps to write, comma-separated")->required()->delimiter(',');
  sub->add_option("--out", flags->out, "the JSONL file to write")->required();
  on_run(sub, [flags] {
    std::vector<chain::ChainStep> steps;
    for (const std::string& name : flags->steps) steps.push_back(chain::parse_chain_step(name));
    const std::size_t documents = chain::write_chain_training_docs(flags->data, flags->language, steps, flags->out);
    std::cerr << documents << " documents -> " << flags->out << "\n";
  });
}

}  // namespace

void register_chain(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "chain", "Interactive chain prompting (ask -> answer -> translate) against its baselines, on any backend");
  sub->footer(
      "Systems: no_extra (S -> A), with_context (S, C -> A) and chain (translator S -> Q; user S, C, Q -> U; "
      "translator S, Q, U -> A, never seeing C). Backends: any OpenAI-compatible URL (key from the environment; "
      "retries, timeouts) or a strata language model run in this process; responses cached on disk, so a re-run asks "
      "nothing twice. Data: JSONL {source, context, reference | targets, answer, label, type} (`strata data ambig` "
      "writes it) or a released AmbigMT .tsv. Writes OUT/outputs/<system>.jsonl and OUT/scores.json (BLEU, chrF, "
      "exact match, formality accuracy, Hit@n, the chain's answer accuracy, paired bootstrap p-values).\n"
      "Start from `strata chain --example-config > chain.toml`.");
  auto flags = std::make_shared<ChainFlags>();
  sub->add_option("--config", flags->config, "the chain's TOML file")->check(CLI::ExistingFile);
  sub->add_option("--data", flags->data, "test examples (.jsonl, or an AmbigMT .tsv)")->check(CLI::ExistingFile);
  sub->add_option("--out", flags->out, "output directory")->capture_default_str();
  sub->add_option("--limit", flags->limit, "run the first N examples only (0: all)")->capture_default_str();
  sub->add_option("overrides", flags->overrides, "key=value settings over the file's (chain.seed=2, user.gold=true)");
  sub->add_flag("--quiet", flags->quiet, "no progress and no table");
  sub->add_flag("--example-config", flags->example_config, "print a commented chain.toml and exit");
  register_chain_text(*sub);
  on_run(sub, [flags] {
    if (flags->example_config) {
      std::cout << chain::example_chain_config();
      return;
    }
    if (flags->config.empty() || flags->data.empty()) throw CLI::RequiredError("--config and --data");
    const chain::ChainJob job = chain::read_chain_job(flags->config, flags->overrides);
    chain::run_chain_job(job, flags->data, flags->out, flags->limit, flags->quiet);
  });
}

}  // namespace strata::cli
