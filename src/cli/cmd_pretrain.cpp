// strata pretrain: BART's denoising pretraining of a seq2seq model on raw text, a `strata train`
// run with data.task = denoise.
#include "commands.h"
#include "train_command.h"

namespace strata::cli {

namespace {

constexpr const char* kObjectives = R"(BART's objectives (Lewis et al. 2020): the decoder rebuilds each document from a noised copy.
  sentence permutation   the sentences of each section are shuffled; sections, section markers and
                         eos stay in place (pretrain.permute_sentences, default true)
  text infilling         spans with Poisson(pretrain.poisson_lambda = 3) lengths are masked until
                         pretrain.mask_ratio (0.3) of the text tokens are, each span replaced by one
                         <mask> token; a span of length 0 inserts one. The tokenizer needs <mask>,
                         which `strata tokenizer train` reserves.
The documents are the bodies of the JSONL dataset data.train (summaries are not needed; the
man-page corpus of `strata data manpages` serves), cut as data.max_source_tokens and
data.truncation say: that clean text is the target. Training noise is drawn afresh every epoch
from train.seed; validation noise once, from a fixed seed, so valid_loss compares across steps
and runs. train.eval_docs > 0 also scores greedy reconstructions with ROUGE (0 skips that).
Every `strata train` flag and key applies, with data.task = denoise. A summariser of the same
tokenizer and sizes then starts from the run; one config serves both:
  strata pretrain --config C.toml --out runs/base
  strata train --config C.toml --base runs/base --out runs/summariser)";

}  // namespace

void register_pretrain(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("pretrain", "Pretrain a seq2seq model on raw text with BART's denoising objectives");
  sub->footer(kObjectives);
  auto flags = add_train_flags(sub);
  on_run(sub, [flags] {
    TrainFlags pretrain = *flags;
    pretrain.fixed.push_back("data.task=denoise");
    run_train(pretrain, "seq2seq");
  });
}

}  // namespace strata::cli
