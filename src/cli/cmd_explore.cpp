// strata explore: a web page to see a model's attention on your own documents (docs/explore.md).
#include <ATen/Parallel.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "strata/analysis/explorer.h"
#include "strata/serve/explore_server.h"

namespace strata::cli {

namespace {

struct ExploreFlags {
  std::string model, compare;
  std::vector<std::string> roots;
  int threads = 0;
  analysis::ExplorerOptions explorer;
  serve::ExploreServerOptions server;
};

void run_explore(ExploreFlags flags) {
  if (flags.threads > 0) at::set_num_threads(flags.threads);
  flags.explorer.runs = {flags.model};
  if (!flags.compare.empty()) flags.explorer.runs.push_back(flags.compare);
  for (const std::string& root : flags.roots) flags.server.roots.emplace_back(root);
  std::fprintf(stderr, "strata explore: loading %zu run%s\n", flags.explorer.runs.size(),
               flags.explorer.runs.size() == 1 ? "" : "s");
  analysis::Explorer explorer(flags.explorer);
  serve::explore(explorer, flags.server);
}

}  // namespace

void register_explore(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("explore", "A web page to see a model's attention on your own documents");
  sub->footer(
      "Open the printed address in a browser. Load a document (paste, upload, or a file under a --root), then per "
      "layer and head see the model's attention weights as a heatmap (hover, click a row, drag to zoom), the spec's "
      "mask and the block-mask tiles the fused kernel visits, learned HIBRIDS biases over the document's sections, "
      "and the head analyses `strata analyze heads|patterns` saved beside the run. --compare shows a second run side "
      "by side. Export PNG or SVG; the URL keeps the view. JSON API: docs/explore.md.\n"
      "Seq2seq and encoder models show their encoder's self-attention, language models every layer's. Loopback only "
      "unless --host says otherwise; the server has no authentication.");
  auto flags = std::make_shared<ExploreFlags>();
  sub->add_option("--model", flags->model, "run directory (its best checkpoint), checkpoint or transformers directory")
      ->required();
  sub->add_option("--compare", flags->compare, "a second run, shown beside the first");
  sub->add_option("--host", flags->server.host, "address to listen on")->capture_default_str();
  sub->add_option("--port", flags->server.port, "port to listen on; 0 picks a free one and prints it")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  sub->add_option("--root", flags->roots, "a directory whose files the page may load by path (repeatable; none: no "
                                          "server-side file is read)")
      ->check(CLI::ExistingDirectory);
  sub->add_option("--max-tokens", flags->explorer.max_tokens,
                  "tokens of a document read (never past the model's positions)")
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 20));
  sub->add_option("--documents", flags->explorer.documents, "documents kept in memory; the oldest is forgotten")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  sub->add_option("--max-body-bytes", flags->server.max_body_bytes, "largest request body or file read; larger gets 413")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--threads", flags->threads, "libtorch threads (0: as configured)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--quiet", [flags](std::int64_t) { flags->server.access_log = false; }, "no access log on stderr");
  on_run(sub, [flags] { run_explore(*flags); });
}

}  // namespace strata::cli
