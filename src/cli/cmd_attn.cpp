// strata attn show: which keys each query may see under an attention spec, drawn per head on
// a real document's layout, with each head's sparsity and block-mask tile density.
#include <memory>

#include "commands.h"
#include "strata/analysis/mask_show.h"

namespace strata::cli {

void register_attn(CLI::App& app) {
  CLI::App* attn = app.add_subcommand("attn", "Inspect structured attention specifications");
  attn->require_subcommand(1);
  CLI::App* show_cmd = attn->add_subcommand(
      "show",
      "Draw which keys each query may see under an attention spec, on a document's own layout "
      "(sections, paragraphs, sentences, tokens): one picture per head, queries down and keys "
      "across (prefix slots first), visible pairs dark, section starts and the prefix marked "
      "by lines. Prints each head's mask, its sparsity (1 - visible pairs / (queries x keys)) "
      "and the density of the fused kernel's block mask (visited 64x64 tiles / all tiles), "
      "and writes the same to OUT/sparsity.json.");
  auto options = std::make_shared<analysis::MaskShowOptions>();
  show_cmd->add_option("--spec", options->spec,
                       "a layer spec in JSON, e.g. {\"heads\": [{\"mask\": \"window(128,128) | "
                       "global(1)\"}]} (see configs/attention/)")
      ->required();
  show_cmd->add_option("--doc", options->doc,
                       "the document: Markdown, a man page or plain text (format detected from the "
                       "name, then the content)")
      ->required();
  show_cmd->add_option("--tokenizer", options->tokenizer,
                       "a tokenizer directory or file (e.g. runs/demo/tokenizer); default: bytes, "
                       "one token per byte");
  show_cmd->add_option("--max-tokens", options->max_tokens, "keep the first N tokens; 0 = all")
      ->capture_default_str();
  show_cmd->add_option("--out", options->out, "output directory")->capture_default_str();
  show_cmd->add_option("--format", options->format, "picture format: svg (compact) or png (one pixel a pair)")
      ->check(CLI::IsMember({"svg", "png"}))
      ->capture_default_str();
  show_cmd->add_option("--segments", options->segments,
                       "K: the tokens split evenly into K segments (same_segment, prefix_block)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  show_cmd->add_option("--prefix", options->prefix,
                       "P: prefix slots before the keys, split evenly among the segments (prefix_block)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  on_run(show_cmd, [options] { analysis::run_mask_show(*options); });
}

}  // namespace strata::cli
