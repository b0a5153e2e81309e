// strata pretrain: pretraining on raw text, a `strata train` run whose objective follows the
// config's model.architecture: BART's denoising for a seq2seq model (data.task = denoise),
// BERT's masked LM for an encoder (data.task = mlm).
#include "commands.h"
#include "train_command.h"

namespace strata::cli {

namespace {

constexpr const char* kObjectives = R"(The objective follows model.architecture.

seq2seq: BART's objectives (Lewis et al. 2020), data.task = denoise: the decoder rebuilds each
document from a noised copy.
  sentence permutation   the sentences of each section are shuffled; sections, section markers and
                         eos stay in place (pretrain.permute_sentences, default true)
  text infilling         spans with Poisson(pretrain.poisson_lambda = 3) lengths are masked until
                         pretrain.mask_ratio (0.3) of the text tokens are, each span replaced by one
                         <mask> token; a span of length 0 inserts one.
The documents are cut as data.max_source_tokens and data.truncation say: that clean text is the
target. train.eval_docs > 0 also scores greedy reconstructions with ROUGE (0 skips that).

encoder: BERT's masked LM (Devlin et al. 2019), data.task = mlm, with model.head = "token" (its
classes, model.num_labels, become the vocabulary). Each document is cut into chunks of at most
data.max_source_tokens tokens, [CLS] ... [SEP] included; pretrain.mlm_probability (0.15) of the
real tokens are chosen, of those 80% become <mask>, 10% a random token and 10% stay, and the loss
is the cross-entropy of the chosen tokens. Evaluations also report mlm_accuracy, the share of
chosen validation tokens predicted right (of the first train.eval_docs chunks).

Both read the bodies of the JSONL dataset data.train (summaries are not needed; the man-page
corpus of `strata data manpages` serves) and need a tokenizer with <mask>, which `strata
tokenizer train` reserves. Training noise and masks are drawn afresh every epoch from
train.seed; validation ones once, from a fixed seed, so valid_loss compares across steps and
runs. Every `strata train` flag and key applies. A summariser of the same tokenizer and sizes
then starts from a seq2seq run; one config serves both:
  strata pretrain --config C.toml --out runs/base
  strata train --config C.toml --base runs/base --out runs/summariser)";

}  // namespace

void register_pretrain(CLI::App& app) {
  CLI::App* sub = app.add_subcommand(
      "pretrain", "Pretrain on raw text: BART's denoising (seq2seq models) or BERT's masked LM (encoder models)");
  sub->footer(kObjectives);
  auto flags = add_train_flags(sub);
  on_run(sub, [flags] {
    TrainFlags pretrain = *flags;
    pretrain.fixed_by_architecture = {{"seq2seq", "data.task=denoise"}, {"encoder", "data.task=mlm"}};
    run_train(pretrain, "");
  });
}

}  // namespace strata::cli
