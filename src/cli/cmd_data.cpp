// strata data manpages | stats | code | markup | books | debian | descriptions | glue | ambig | qs-manpages.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/data/debian_archive.h"
#include "strata/data/debian_tasks.h"
#include "strata/data/description_corpus.h"
#include "strata/data/glue_tsv.h"
#include "strata/data/long_corpora.h"
#include "strata/data/manpage_corpus.h"
#include "strata/data/manpage_qs.h"
#include "strata/data/section_ambiguity.h"
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

// Where the Debian commands read the archive from: --packages and --translation, else the
// indexes under --lists (default OUT/apt-lists), fetched there once unless --no-fetch.
struct DebianIndexFlags {
  std::filesystem::path lists, packages, translation;
  bool no_fetch = false;
};

void add_debian_index_options(CLI::App* command, DebianIndexFlags& flags) {
  command->add_option("--lists", flags.lists, "apt lists directory to read or fetch into (default OUT/apt-lists)");
  command->add_flag("--no-fetch", flags.no_fetch, "never run apt-get: fail if the indexes are not under --lists");
  command->add_option("--packages", flags.packages, "a Packages file (plain or gzip) instead of --lists")
      ->check(CLI::ExistingFile);
  command->add_option("--translation", flags.translation, "its Translation-en file")->check(CLI::ExistingFile);
}

// The packages with their English descriptions; `files` gets the two index paths, named on
// stderr unless `quiet`.
std::vector<DebianPackage> read_debian_indexes(const DebianIndexFlags& flags, const std::filesystem::path& out_dir,
                                               const char* command, DebianIndexes& files, bool quiet = false) {
  files = {flags.packages, flags.translation};
  if (flags.packages.empty() != flags.translation.empty())
    throw Error(std::string("data ") + command + ": give both --packages and --translation, or neither");
  if (flags.packages.empty())
    files = debian_indexes(flags.lists.empty() ? out_dir / "apt-lists" : flags.lists, !flags.no_fetch);
  if (!quiet) std::fprintf(stderr, "reading %s and %s\n", files.packages.c_str(), files.translation.c_str());
  return read_debian_packages(files.packages, files.translation);
}

struct DebianFlags {
  DebianSuiteOptions suite;
  DebianIndexFlags index;
};

void run_debian(const DebianFlags& flags) {
  DebianIndexes indexes;
  const std::vector<DebianPackage> packages = read_debian_indexes(flags.index, flags.suite.out_dir, "debian", indexes);
  const nlohmann::json stats = build_debian_suite(packages, flags.suite);
  std::printf("%zu packages, %zu used (skipped: %s)\n", stats["packages"].get<std::size_t>(),
              stats["used"].get<std::size_t>(), stats["skipped"].dump().c_str());
  std::printf("%-22s %-14s %8s %8s %8s %8s\n", "task", "kind", "classes", "train", "valid", "test");
  for (const auto& [name, task] : stats["tasks"].items())
    std::printf("%-22s %-14s %8s %8zu %8zu %8zu\n", name.c_str(), task["kind"].get<std::string>().c_str(),
                task.contains("labels") ? std::to_string(task["labels"].size()).c_str() : "-",
                task["examples"]["train"].get<std::size_t>(), task["examples"]["validation"].get<std::size_t>(),
                task["examples"]["test"].get<std::size_t>());
  std::printf("summaries (long -> short description): %zu / %zu / %zu\nwrote %s/{tasks,summaries}, tasks.json, stats.json\n",
              stats["summaries"]["train"].get<std::size_t>(), stats["summaries"]["validation"].get<std::size_t>(),
              stats["summaries"]["test"].get<std::size_t>(), flags.suite.out_dir.c_str());
}

void register_debian(CLI::App* data) {
  auto flags = std::make_shared<DebianFlags>();
  CLI::App* debian = data->add_subcommand(
      "debian", "Build a multi-task suite (CA-MTL's GLUE in miniature) and a summarisation corpus from Debian's package archive");
  debian->footer(
      "Reads a Packages index and its Translation-en (about 64k packages on bookworm main). Without --packages, "
      "they are looked for under --lists, and fetched there once with apt-get (a private state directory: the "
      "system's apt state is not touched; the only step that needs the network). Tasks, one example a package "
      "(split by source package, about 90/5/5; a description used once): section and priority from the long "
      "description; tag-FACET (role, implemented-in, interface, use, works-with, scope) for packages with exactly "
      "one tag in the facet; match (short vs long description, negatives from the same section); jaccard "
      "(regression: the debtag Jaccard similarity of two packages' descriptions); acceptable (a first sentence, "
      "real or its words shuffled); from the installed files, man-section (a man page's first words -> its section "
      "1-8) and header-section (a header's code without comments -> the Section of the package that installed it; "
      "the held-out transfer task, marked \"transfer\" in tasks.json and left out of multi-task training unless "
      "named). Classes with fewer than --min-class-examples training examples are dropped.\n"
      "Output: OUT/tasks/TASK/{train,validation,test}.jsonl ({\"id\", \"task\", \"text\", [\"text_b\",] \"label\"}), "
      "OUT/tasks.json (each task's kind, labels and sizes), OUT/summaries/ (the long -> short description corpus "
      "that `strata data descriptions` writes, of the same packages), OUT/stats.json; each file written then renamed.");
  debian->add_option("--out", flags->suite.out_dir, "output directory")->required();
  add_debian_index_options(debian, flags->index);
  debian->add_option("--seed", flags->suite.seed, "negatives, pairs and shuffles")->capture_default_str();
  debian->add_option("--min-class-examples", flags->suite.min_class_examples, "drop rarer classes")
      ->capture_default_str();
  debian->add_option("--min-description-words", flags->suite.min_description_words,
                     "skip packages with shorter long descriptions")
      ->capture_default_str();
  flags->suite.installed_root = "/";
  debian->add_option("--installed-root", flags->suite.installed_root,
                     "where the installed man pages (usr/share/man) and dpkg's file lists (var/lib/dpkg/info) are "
                     "read from for man-section and header-section; \"\" = neither")
      ->capture_default_str();
  on_run(debian, [flags] { run_debian(*flags); });
}

struct DescriptionFlags {
  DescriptionCorpusOptions corpus;
  DebianIndexFlags index;
  std::filesystem::path out_dir;
  std::vector<std::filesystem::path> hold_out_pages;
  std::filesystem::path installed_root = "/";
};

void run_descriptions(const DescriptionFlags& flags) {
  DebianIndexes files;
  const std::vector<DebianPackage> packages = read_debian_indexes(flags.index, flags.out_dir, "descriptions", files, flags.corpus.quiet);
  DescriptionCorpusOptions options = flags.corpus;
  options.origin = files.packages.string() + " + " + files.translation.string();
  if (!flags.hold_out_pages.empty()) {
    const PageSources held = sources_of_pages(flags.hold_out_pages, flags.installed_root, packages);
    options.held_out_sources = held.sources;
    if (!options.quiet)
      std::fprintf(stderr, "held out: the %zu source packages that installed %zu of the %zu pages (%zu with no dpkg owner)\n",
                   held.sources.size(), held.pages - held.unowned, held.pages, held.unowned);
  }
  const nlohmann::json stats = build_description_corpus(packages, options, flags.out_dir);
  const nlohmann::json& all = stats["all"];
  std::printf("descriptions: %zu documents of %zu source packages from %zu packages (skipped: %s) -> %s\n",
              all["documents"].get<std::size_t>(), all["sources"].get<std::size_t>(),
              stats["packages"].get<std::size_t>(), stats["skipped"].dump().c_str(), flags.out_dir.c_str());
  std::printf("%-11s %8s %8s %8s %14s %15s\n", "split", "docs", "sources", "ratio", "summary words",
              "document words");
  for (const char* split : {"train", "validation", "test", "all"}) {
    const nlohmann::json& s = std::string(split) == "all" ? all : stats["splits"][split];
    std::printf("%-11s %8zu %8zu %8.1f %14.1f %15.1f\n", split, s["documents"].get<std::size_t>(),
                s["sources"].get<std::size_t>(), s["compression_ratio"].get<double>(),
                s["summary_words_mean"].get<double>(), s["document_words_mean"].get<double>());
  }
  std::printf("%s\n", stats.dump().c_str());
}

void register_descriptions(CLI::App* data) {
  auto flags = std::make_shared<DescriptionFlags>();
  CLI::App* descriptions = data->add_subcommand(
      "descriptions",
      "Build a long -> short summarisation corpus (Newsroom / BigPatent in miniature) from Debian's package descriptions");
  descriptions->footer(
      "Reads a Packages index and its Translation-en, found and fetched as `strata data debian` does. A document a "
      "package: its long description (paragraphs kept, sentences split) -> its one-line short description. One "
      "example a Description-md5 (the first package by name: a description shipped by several packages is used "
      "once); packages without both descriptions, or with fewer than --min-document-words or --min-summary-words "
      "words, are skipped. Split by a hash of the SOURCE package's name (about 90/5/5): libfoo1, libfoo-dev and "
      "libfoo-doc, whose descriptions share boilerplate, land in one split; sources whose packages ship the same "
      "long description (gcc-12 and gcc-12-cross) are linked and split by their group's first name, so a document "
      "lies in one split only. --hold-out-pages leaves out (skipped as \"held_out\") the packages of the source "
      "packages that installed a man-page corpus's evaluation pages, found through dpkg's file lists, so the two "
      "corpora can be trained on together.\n"
      "Output: OUT/{train,validation,test}.jsonl in the native form (id and title the package, \"paragraphs\", "
      "\"summary\", and \"package\", \"source\", \"section\", \"description_md5\"), read as every summarisation "
      "dataset is; OUT/stats.json: what was skipped, by reason, and per split the documents, source packages, "
      "length percentiles, mean words of document and summary and the compression ratio (mean document words / "
      "mean summary words). Printed: a line, a table of those columns and the stats as one JSON line. Each file is "
      "written then renamed.");
  descriptions->add_option("--out", flags->out_dir, "output directory")->required();
  add_debian_index_options(descriptions, flags->index);
  descriptions->add_option("--min-document-words", flags->corpus.min_document_words,
                           "skip packages with shorter long descriptions")
      ->capture_default_str();
  descriptions->add_option("--min-summary-words", flags->corpus.min_summary_words,
                           "skip packages with shorter short descriptions")
      ->capture_default_str();
  descriptions->add_option("--validation-percent", flags->corpus.validation_percent)->capture_default_str();
  descriptions->add_option("--test-percent", flags->corpus.test_percent)->capture_default_str();
  descriptions->add_option("--hold-out-pages", flags->hold_out_pages,
                           "man-page datasets (`strata data manpages`' validation.jsonl, test.jsonl) whose pages' "
                           "packages, by source, are left out of every split: a model trained on both then never "
                           "reads the package text of a page it is tested on")
      ->check(CLI::ExistingFile);
  descriptions->add_option("--installed-root", flags->installed_root,
                           "where dpkg's file lists (var/lib/dpkg/info) are read for --hold-out-pages")
      ->capture_default_str();
  descriptions->add_flag("--quiet", flags->corpus.quiet, "no progress output");
  on_run(descriptions, [flags] { run_descriptions(*flags); });
}

void register_glue(CLI::App* data) {
  auto options = std::make_shared<GlueTsvOptions>();
  auto dir = std::make_shared<std::filesystem::path>();
  auto out = std::make_shared<std::filesystem::path>();
  CLI::App* glue = data->add_subcommand(
      "glue", "Add a GLUE / SuperGLUE-style task (a directory of TSV files) to a multi-task suite");
  glue->footer(
      "Reads DIR/train.tsv, DIR/dev.tsv (as validation) and DIR/test.tsv where present, and writes "
      "OUT/tasks/TASK/{train,validation,test}.jsonl in the format of `strata data debian`, adding TASK to "
      "OUT/tasks.json beside the tasks already there. Columns by header name or 0-based index. Examples: "
      "SST-2: --text sentence --label label; MRPC: --text '#1 String' --text-b '#2 String' --label Quality; "
      "STS-B: --text sentence1 --text-b sentence2 --label score --regression; CoLA (no header): --no-header "
      "--text 3 --label 1. A test file whose header lacks the label column is written unlabelled.");
  glue->add_option("--dir", *dir, "the task's directory of TSV files")->required()->check(CLI::ExistingDirectory);
  glue->add_option("--out", *out, "the suite's directory (holding tasks.json)")->required();
  glue->add_option("--task", options->task, "the task's name in the suite")->required();
  glue->add_option("--text", options->text, "the text column")->required();
  glue->add_option("--text-b", options->text_b, "the second text column of a pair task");
  glue->add_option("--label", options->label, "the label column")->required();
  glue->add_flag("--regression", options->regression, "labels are numbers");
  glue->add_flag("!--no-header", options->header, "the files have no header line");
  on_run(glue, [=] {
    const nlohmann::ordered_json entry = import_glue_task(*dir, *options, *out);
    std::printf("%s: %s\n", options->task.c_str(), entry.dump().c_str());
  });
}

void register_ambig(CLI::App* data) {
  auto options = std::make_shared<SectionAmbiguityOptions>();
  auto out = std::make_shared<std::filesystem::path>();
  CLI::App* ambig = data->add_subcommand(
      "ambig", "Build ambiguous-translation data from man-page names that live in several sections (thesis ch. 4)");
  ambig->footer(
      "A man-page name with pages in two or more sections (printf 1/3, kill 1/2, crontab 1/5) is a sense ambiguity. "
      "Every sentence of another page that cites \"name(k)\" becomes an example once its \"(k)\" is stripped: "
      "source = the sentence, context = its paragraph (stripped the same way), question = which section is meant "
      "(Is \"kill\" the user command (1) or the system call (2)?), answer = k, targets = the NAME line of "
      "name(k) in English and in each installed translation (manpages-fr, -de, -es put them in MAN_ROOT/<lang>/). "
      "Mentions in NAME and SEE ALSO, self-mentions, sentences citing two senses of a name, sentences of fewer "
      "than 4 words of their own and sentences longer than --max-context-words are skipped; repeated paragraphs count once; at most --max-per-sense mentions per "
      "name and section in each split. Split by a hash of the citing page's name; a name needs two senses in train, "
      "and an answer must be seen in train.\n"
      "Output: OUT/{train,validation,test}.jsonl (the JSONL `strata chain` reads) and OUT/stats.json (what was "
      "skipped and dropped, per split the examples, answers and targets, and two trivial baselines on test: the "
      "majority section and each name's majority section in train). Each file is written then renamed.");
  ambig->add_option("--out", *out, "output directory")->required();
  ambig->add_option("--man-root", options->man_root, "man page root holding man1..man9 and <lang>/man*")
      ->capture_default_str();
  ambig->add_option("--languages", options->languages, "translated page trees under MAN_ROOT, comma-separated")
      ->delimiter(',')
      ->capture_default_str();
  ambig->add_option("--max-per-sense", options->max_per_sense, "mentions kept per name and section in a split (0: all)")
      ->capture_default_str();
  ambig->add_option("--max-context-words", options->max_context_words,
                    "cut longer contexts to the sentences nearest the mention and skip longer sentences (0: no limit)")
      ->capture_default_str();
  ambig->add_option("--validation-percent", options->validation_percent)->capture_default_str();
  ambig->add_option("--test-percent", options->test_percent)->capture_default_str();
  ambig->add_flag("--quiet", options->quiet, "no progress output");
  on_run(ambig, [=] {
    const nlohmann::json stats = build_section_ambiguity(*options, *out);
    std::printf("ambig: %zu ambiguous names (%zu senses) from %zu pages; %zu mentions found\n",
                stats["ambiguous_names"].get<std::size_t>(), stats["senses"].get<std::size_t>(),
                stats["pages_scanned"].get<std::size_t>(), stats["mentions_found"].get<std::size_t>());
    std::printf("%-11s %9s %6s  %s\n", "split", "examples", "names", "with target");
    for (const char* split : {"train", "validation", "test"}) {
      const nlohmann::json& s = stats["splits"][split];
      std::printf("%-11s %9zu %6zu  %s\n", split, s["examples"].get<std::size_t>(), s["names"].get<std::size_t>(),
                  s["with_target"].dump().c_str());
    }
    std::printf("test baselines: majority section %s %.3f, each name's majority in train %.3f\n",
                stats["test_majority_answer"].get<std::string>().c_str(), stats["test_majority_share"].get<double>(),
                stats["test_name_majority_accuracy"].get<double>());
    std::printf("wrote %s/{train,validation,test}.jsonl and stats.json\n", out->c_str());
  });
}

}  // namespace

void register_qs_manpages(CLI::App* data) {
  auto options = std::make_shared<ManpageQsOptions>();
  auto corpus = std::make_shared<std::filesystem::path>();
  auto out = std::make_shared<std::filesystem::path>();
  CLI::App* qs = data->add_subcommand(
      "qs-manpages", "Question-summary hierarchies (seed 001 §4) from a man-page corpus's section trees");
  qs->footer(
      "Reads CORPUS/{train,validation,test}.jsonl (from `strata data manpages`) and writes OUT/<split>.jsonl in "
      "the QS hierarchy format (docs/formats.md) and OUT/stats.json. Per page: the root pair asks \"What is "
      "NAME?\" and answers with the NAME line; each kept section is its child (a question from the heading, the "
      "section's first sentence as summary), each subsection a grandchild. The document is the kept sections, "
      "each with its heading as its first paragraph. Train with data.task = qs_hierarchy.");
  qs->add_option("--corpus", *corpus, "man-page corpus directory")->required()->check(CLI::ExistingDirectory);
  qs->add_option("--out", *out, "output directory")->required();
  qs->add_option("--max-sections", options->max_sections, "top-level sections kept per page")->capture_default_str();
  qs->add_option("--max-subsections", options->max_subsections, "subsections kept per section")->capture_default_str();
  qs->add_option("--min-sections", options->min_sections, "pages keeping fewer sections are skipped")
      ->capture_default_str();
  qs->add_option("--max-summary-words", options->max_summary_words, "a summary's words at most")->capture_default_str();
  on_run(qs, [=] {
    const nlohmann::ordered_json stats = build_manpage_qs(*corpus, *out, *options);
    std::printf("%-11s %7s %9s %7s %7s %12s %10s %10s\n", "split", "pages", "examples", "pairs", "edges",
                "subsections", "doc words", "tgt words");
    for (const char* split : {"train", "validation", "test"}) {
      const auto& s = stats[split];
      std::printf("%-11s %7zu %9zu %7.2f %7.2f %12.2f %10.1f %10.1f\n", split, s["pages"].get<std::size_t>(),
                  s["examples"].get<std::size_t>(), s["pairs_mean"].get<double>(), s["edges_mean"].get<double>(),
                  s["subsection_pairs_mean"].get<double>(), s["document_words_mean"].get<double>(),
                  s["target_words_mean"].get<double>());
    }
    std::printf("wrote %s/{train,validation,test}.jsonl and stats.json\n", out->c_str());
  });
}

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
  register_debian(data);
  register_descriptions(data);
  register_glue(data);
  register_ambig(data);
  register_qs_manpages(data);
}

}  // namespace strata::cli
