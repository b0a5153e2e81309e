// strata data manpages | stats | code | markup | books.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/data/long_corpora.h"
#include "strata/data/manpage_corpus.h"
#include "strata/text/tokenizer.h"

namespace strata::cli {

namespace {

void print_stats_table(const nlohmann::json& stats) {
  std::printf("%-11s %8s %22s %22s %22s\n", "split", "docs", "input words p50/p90",
              "target words p50/p90", "input tokens p50/p90");
  for (const char* split : {"train", "validation", "test"}) {
    const auto& s = stats["splits"][split];
    const auto pair = [](const nlohmann::json& p) {
      if (p.is_null() || p.empty()) return std::string("-");
      return fmt::format("{}/{}", p["p50"].get<std::size_t>(), p["p90"].get<std::size_t>());
    };
    std::printf("%-11s %8zu %22s %22s %22s\n", split, s["documents"].get<std::size_t>(),
                pair(s["input_words"]).c_str(), pair(s["target_words"]).c_str(),
                pair(s["input_tokens"]).c_str());
  }
  if (stats.contains("skipped")) std::printf("skipped: %s\n", stats["skipped"].dump().c_str());
  std::printf("sections by depth: %s\n", stats["all"]["sections_by_depth"].dump().c_str());
}

constexpr const char* kLongCorpusOutput =
    "\nOutput: OUT/{train,validation,test}.jsonl, one {\"id\", \"text\"} line per document with "
    "the text byte for byte (newlines and indentation kept), as `strata lm train` and `strata lm "
    "eval` read it; a document's split follows a hash of its id (about 90/5/5). OUT/stats.json "
    "holds the command, the root, documents and bytes per split and what was skipped, by reason. "
    "Each file is written then renamed: a failed run leaves the old files as they were.";

// A long-corpus command: a one-line description, the details and the output in its --help.
CLI::App* add_long_corpus_command(CLI::App* data, const char* name, const char* summary,
                                  const std::string& details, LongCorpusOptions& options) {
  CLI::App* command = data->add_subcommand(name, summary);
  command->footer(details + "\n" + kLongCorpusOutput);
  command->add_option("--out", options.out_dir, "output directory")->required();
  command->add_option("--max-documents", options.max_documents,
                      "stop after this many documents, in path order (0: no limit)")
      ->capture_default_str();
  command->add_flag("--quiet", options.quiet, "no progress output");
  return command;
}

// One line: what was written, where from, where to.
void print_long_corpus_summary(const nlohmann::json& stats, const LongCorpusOptions& options) {
  const nlohmann::json& splits = stats["splits"];
  std::printf("%s: %zu documents, %.1f MB (train %zu, validation %zu, test %zu) from %s -> %s\n",
              stats["command"].get<std::string>().c_str(), stats["all"]["documents"].get<std::size_t>(),
              static_cast<double>(stats["all"]["bytes"].get<std::size_t>()) / 1e6,
              splits["train"]["documents"].get<std::size_t>(),
              splits["validation"]["documents"].get<std::size_t>(),
              splits["test"]["documents"].get<std::size_t>(), stats["root"].get<std::string>().c_str(),
              options.out_dir.c_str());
}

void register_long_corpora(CLI::App* data) {
  auto code_options = std::make_shared<CodeCorpusOptions>();
  auto* code = add_long_corpus_command(
      data, "code", "Build a code corpus for language models (GitHub in miniature) from a source tree",
      "One document per top-level entry of ROOT: a directory's regular files, recursively, "
      "concatenated in path order, each after a line '==> PATH <==' naming it relative to ROOT; "
      "a top-level file is a document of its own, id its name. Skipped: files holding a NUL "
      "byte, and symlinks (one leaving ROOT is not read; one inside it is read where its target "
      "lies, so no text appears twice).",
      *code_options);
  code->add_option("--root", code_options->root, "the tree to read")->capture_default_str();
  on_run(code, [=] { print_long_corpus_summary(build_code_corpus(*code_options), *code_options); });

  auto markup_options = std::make_shared<MarkupCorpusOptions>();
  auto* markup = add_long_corpus_command(
      data, "markup", "Build a markup corpus for language models (arXiv in miniature) from man pages",
      "One document per man page under ROOT/man*/ (the English pages): its raw roff source, "
      ".gz inflated, id 'man1/ls.1'. Skipped: pages that are only a '.so' redirect and symlinked "
      "pages (aliases of a page read where it lies).",
      *markup_options);
  markup->add_option("--root", markup_options->root, "man page root holding man1..man9")
      ->capture_default_str();
  on_run(markup, [=] { print_long_corpus_summary(build_markup_corpus(*markup_options), *markup_options); });

  auto books_options = std::make_shared<BooksCorpusOptions>();
  auto* books = add_long_corpus_command(
      data, "books", "Build a books corpus for language models (PG19 in miniature), a book per installed package",
      "One document per installed package, id its name, from its file list DPKG_INFO/PKG.list "
      "(or PKG:ARCH.list): its man pages under /usr/share/man/man*/ rendered to plain text by "
      "strata's man-page parser (title and headings on lines of their own), then its "
      "/usr/share/doc/PKG/ files named README*, NEWS*, changelog* or *.txt (.gz inflated; "
      "copyright is not among them), joined by blank lines. Listed files that are absent or "
      "symlinks are passed over; packages with less than --min-bytes of text are skipped.",
      *books_options);
  books->add_option("--dpkg-info", books_options->dpkg_info, "dpkg's directory of PKG.list files")
      ->capture_default_str();
  books->add_option("--root", books_options->root, "the listed paths are read under this directory")
      ->capture_default_str();
  books->add_option("--min-bytes", books_options->min_bytes, "skip packages with less text")
      ->capture_default_str();
  on_run(books, [=] { print_long_corpus_summary(build_books_corpus(*books_options), *books_options); });
}

}  // namespace

void register_data(CLI::App& app) {
  CLI::App* data = app.add_subcommand("data", "Build and inspect datasets");
  data->require_subcommand(1);

  auto* manpages = data->add_subcommand(
      "manpages",
      "Build the man-page summarisation corpus from the installed English man pages: input = "
      "the sections after NAME, target = the NAME description. Writes OUT/{train,validation,"
      "test}.jsonl (native form) and OUT/stats.json.");
  auto options = std::make_shared<ManpageCorpusOptions>();
  auto out = std::make_shared<std::string>();
  auto tokenizer_path = std::make_shared<std::string>();
  manpages->add_option("--out", *out, "output directory")->required();
  manpages->add_option("--man-root", options->man_root, "man page root holding man1..man9")
      ->capture_default_str();
  manpages->add_option("--min-body-words", options->min_body_words, "skip pages with shorter bodies")
      ->capture_default_str();
  manpages->add_option("--exclude", options->exclude,
                       "skip pages whose name matches this shell glob (repeatable), e.g. 'gcloud*'");
  manpages->add_option("--validation-percent", options->validation_percent)->capture_default_str();
  manpages->add_option("--test-percent", options->test_percent)->capture_default_str();
  manpages->add_option("--tokenizer", *tokenizer_path, "also report token lengths with this tokenizer");
  manpages->add_flag("--quiet", options->quiet, "no progress output");
  on_run(manpages, [=] {
    std::unique_ptr<Tokenizer> tokenizer;
    if (!tokenizer_path->empty()) tokenizer = load_tokenizer(*tokenizer_path);
    ManpageCorpusOptions o = *options;
    o.tokenizer = tokenizer.get();
    print_stats_table(build_manpage_corpus(o, *out));
    std::printf("wrote %s/{train,validation,test}.jsonl and stats.json\n", out->c_str());
  });

  auto* stats = data->add_subcommand(
      "stats", "Recompute a corpus directory's stats.json, with token lengths from a tokenizer");
  auto corpus = std::make_shared<std::string>();
  auto stats_tokenizer = std::make_shared<std::string>();
  stats->add_option("--data", *corpus, "corpus directory (from `strata data manpages`)")->required();
  stats->add_option("--tokenizer", *stats_tokenizer, "tokenizer for token lengths");
  auto json = std::make_shared<bool>(false);
  stats->add_flag("--json", *json, "print stats.json instead of the table");
  on_run(stats, [=] {
    std::unique_ptr<Tokenizer> tokenizer;
    if (!stats_tokenizer->empty()) tokenizer = load_tokenizer(*stats_tokenizer);
    const nlohmann::json result = corpus_stats(*corpus, tokenizer.get());
    if (*json) std::cout << result.dump(2) << '\n';
    else print_stats_table(result);
  });

  register_long_corpora(data);
}

}  // namespace strata::cli
