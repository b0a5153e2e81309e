// strata analyze attention: a seq2seq model's encoder self-attention per layer, averaged over
// heads (seed 000 §4 Figure 1, A.4 Figure 6).
// strata analyze spectrum: the normalised cumulative singular values of the attention on the
// prefix keys (§6.3, A.7 Figure 7), one curve per model.
#include <cstddef>
#include <memory>

#include "commands.h"
#include "strata/analysis/attention_analysis.h"
#include "strata/analysis/spectrum_analysis.h"

namespace strata::cli {

void register_analyze_attention(CLI::App& analyze) {
  CLI::App* attention = analyze.add_subcommand(
      "attention",
      "Draw a seq2seq model's encoder self-attention, averaged over heads, for the first N examples of a "
      "dataset (seed 000 Figure 1, A.4 Figure 6): per encoder layer L (from 0), OUT/layerL.svg and layerL.png "
      "with the examples side by side, queries down and keys across, the layer's P prefix keys first and an "
      "orange line after them. The matrices go to attention.safetensors (layer{L}.example{E}, [tokens, P + "
      "tokens] float32, E from 0); attention.json holds per layer P, the mean attention mass on the prefix "
      "keys and the mean row entropy, printed as a table. With prefixes, spectrum.json holds the prefix "
      "spectrum of every layer and of the lower and upper layers (see `strata analyze spectrum`).");
  auto a = std::make_shared<analysis::AttentionAnalysisOptions>();
  attention->add_option("--model", a->model, "a seq2seq run directory or checkpoint of `strata train`")->required();
  attention->add_option("--data", a->data, "JSONL dataset; its first N usable documents are drawn")->required();
  attention->add_option("--examples", a->examples, "how many examples (N, at most 16: they sit side by side)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{16}))
      ->capture_default_str();
  attention->add_option("--out", a->out, "output directory (default: MODEL/attention)");
  attention->add_option("--adapter", a->adapter,
                        "an adapter file (RUN/adapter.safetensors of a prefix-tuned run, say) to load onto --model, its base");
  attention->add_flag("--quiet", a->quiet, "no progress output");
  on_run(attention, [a] { analysis::run_attention_analysis(*a); });

  CLI::App* spectrum = analyze.add_subcommand(
      "spectrum",
      "Compare prefix-tuned seq2seq models by the spectrum of their encoder attention on the prefix keys "
      "(seed 000 §6.3, A.7 Figure 7): per example and encoder layer, the singular values s1 >= s2 >= ... of "
      "the head-averaged attention of the real queries on the P prefix keys, as the normalised cumulative "
      "curve c_k = (s1 + ... + sk) / (s1 + ... + sP), averaged over examples and over the lower and the upper "
      "encoder layers with prefixes (lower: below the model's model.hierarchy_split, by default the first "
      "half, rounded up). A curve that rises fast means the prefix attention is nearly low-rank. Writes OUT/spectrum.svg (two panels, a curve per model) and spectrum.json, and prints per "
      "model the area under each curve and the index where it reaches 0.9. Models without prefixes are an "
      "error.");
  auto s = std::make_shared<analysis::SpectrumAnalysisOptions>();
  spectrum->add_option("--model", s->models, "a seq2seq run directory or checkpoint; repeat to compare models")
      ->required();
  spectrum->add_option("--label", s->labels, "a name per --model, in the same order (default: the paths)");
  spectrum->add_option("--data", s->data, "JSONL dataset; its first N usable documents are analysed")->required();
  spectrum->add_option("--examples", s->examples, "how many examples (N)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100000}))
      ->capture_default_str();
  spectrum->add_option("--out", s->out, "output directory (default: FIRST_MODEL/spectrum)");
  spectrum->add_flag("--per-head", s->per_head,
                     "a curve for each head's own map, averaged over heads, instead of the head-averaged map's");
  spectrum->add_flag("--quiet", s->quiet, "no progress output");
  on_run(spectrum, [s] { analysis::run_spectrum_analysis(*s); });
}

}  // namespace strata::cli
