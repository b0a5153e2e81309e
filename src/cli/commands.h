#pragma once
// Subcommand registration. Each cmd_*.cpp adds its subcommand(s) to the app and a callback
// that runs after parsing; errors travel as strata::Error to main().
#include <CLI/CLI.hpp>

#include <functional>

namespace strata::cli {

void register_doc(CLI::App& app);        // strata doc show
void register_data(CLI::App& app);       // strata data manpages | stats | code | markup | books
void register_baseline(CLI::App& app);   // strata baseline lead | oracle | lexrank | ...
void register_tokenizer(CLI::App& app);  // strata tokenizer train | encode | decode
void register_plot(CLI::App& app);       // strata plot RUN_DIR
void register_train(CLI::App& app);      // strata train
void register_pretrain(CLI::App& app);   // strata pretrain
void register_recipes(CLI::App& app);    // strata recipes list | show
void register_summarize(CLI::App& app);  // strata summarize
void register_attn(CLI::App& app);       // strata attn show
void register_extract(CLI::App& app);    // strata extract
void register_segment(CLI::App& app);    // strata segment
void register_mtl(CLI::App& app);        // strata mtl eval | covsim
void register_serve(CLI::App& app);      // strata serve
void register_explore(CLI::App& app);    // strata explore
void register_chain(CLI::App& app);      // strata chain
void register_hf(CLI::App& app);         // strata import hf | export hf | forward | generate
// `analyze` is one group; each analysis is a file of its own.
void register_analyze_biases(CLI::App& analyze);    // strata analyze biases
void register_analyze_heads(CLI::App& analyze);     // strata analyze heads
void register_analyze_patterns(CLI::App& analyze);  // strata analyze patterns
void register_analyze_agreement(CLI::App& analyze);  // strata analyze agreement
void register_analyze_attention(CLI::App& analyze);  // strata analyze attention | spectrum
// `lm` is one group shared by several files.
void register_lm_train(CLI::App& lm);    // strata lm train
void register_lm_eval(CLI::App& lm);     // strata lm eval
void register_lm_score(CLI::App& lm);    // strata lm score
void register_lm_generate(CLI::App& lm); // strata lm generate
void register_lm_summarize(CLI::App& lm);  // strata lm summarize
// `eval` is one group shared by several files.
void register_eval_rouge(CLI::App& eval);  // strata eval rouge
void register_eval_bleu(CLI::App& eval);   // strata eval bleu
void register_eval_copy(CLI::App& eval);   // strata eval copy
void register_eval_hierarchy(CLI::App& eval);  // strata eval hierarchy
void register_eval_summarize(CLI::App& eval);  // strata eval summarize
// `bench` is one group; each benchmark is a file of its own.
void register_bench_attention(CLI::App& bench);  // strata bench attention
void register_bench_long(CLI::App& bench);       // strata bench long
void register_bench_bst(CLI::App& bench);        // strata bench bst
void register_bench_bst_long(CLI::App& bench);  // strata bench bst-long
void register_bench_ddp(CLI::App& bench);        // strata bench ddp
void register_bench_hibrids(CLI::App& bench);    // strata bench hibrids
void register_bench_linear(CLI::App& bench);     // strata bench linear
void register_bench_patterns(CLI::App& bench);   // strata bench patterns
void register_bench_prefix(CLI::App& bench);     // strata bench prefix

void register_all(CLI::App& app);
// Runs the action of the subcommand that was selected.
void run_selected(CLI::App& app);

// Thrown by an action that finished its work but must exit with this status (130 after
// Ctrl-C, as shells expect).
struct ExitCode {
  int code;
};

// Registers `action` to run when `sub` (a parsed subcommand) is the selected leaf.
void on_run(CLI::App* sub, std::function<void()> action);

}  // namespace strata::cli
