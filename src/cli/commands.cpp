#include "commands.h"

#include <map>

namespace strata::cli {

namespace {
std::map<const CLI::App*, std::function<void()>>& actions() {
  static std::map<const CLI::App*, std::function<void()>> table;
  return table;
}
}  // namespace

void on_run(CLI::App* sub, std::function<void()> action) { actions()[sub] = std::move(action); }

void register_all(CLI::App& app) {
  register_doc(app);
  register_data(app);
  register_baseline(app);
  register_tokenizer(app);
  register_plot(app);
  register_train(app);
  register_pretrain(app);
  register_recipes(app);
  register_summarize(app);
  register_attn(app);
  register_extract(app);
  register_segment(app);
  register_mtl(app);
  register_serve(app);
  register_explore(app);
  register_chain(app);
  register_hf(app);
  CLI::App* analyze = app.add_subcommand("analyze", "Look inside trained models: biases, head importance, attention patterns");
  analyze->require_subcommand(1);
  register_analyze_biases(*analyze);
  register_analyze_agreement(*analyze);
  register_analyze_heads(*analyze);
  register_analyze_patterns(*analyze);
  register_analyze_attention(*analyze);
  CLI::App* lm = app.add_subcommand("lm", "Language models: train, perplexity, per-token scores, generation");
  lm->require_subcommand(1);
  register_lm_train(*lm);
  register_lm_eval(*lm);
  register_lm_score(*lm);
  register_lm_generate(*lm);
  register_lm_summarize(*lm);
  CLI::App* eval = app.add_subcommand("eval", "Score outputs (ROUGE, BLEU, copy rate, hierarchy F1) and models (summarize)");
  eval->require_subcommand(1);
  register_eval_rouge(*eval);
  register_eval_bleu(*eval);
  register_eval_copy(*eval);
  register_eval_hierarchy(*eval);
  register_eval_summarize(*eval);
  CLI::App* bench = app.add_subcommand("bench", "Benchmarks that run from the installed binary");
  bench->require_subcommand(1);
  register_bench_attention(*bench);
  register_bench_long(*bench);
  register_bench_bst(*bench);
  register_bench_bst_long(*bench);
  register_bench_ddp(*bench);
  register_bench_hibrids(*bench);
  register_bench_linear(*bench);
  register_bench_patterns(*bench);
  register_bench_prefix(*bench);
}

void run_selected(CLI::App& app) {
  const CLI::App* leaf = &app;
  while (true) {
    const auto subs = leaf->get_subcommands();
    if (subs.empty()) break;
    leaf = subs.front();
  }
  const auto it = actions().find(leaf);
  if (it == actions().end()) throw CLI::CallForHelp();
  it->second();
}

}  // namespace strata::cli
