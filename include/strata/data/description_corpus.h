#pragma once
// A long -> short summarisation corpus from Debian's package descriptions (thesis ch. 2's
// Newsroom / BigPatent analogue whose documents fit in the model's context): the document is a
// package's long description (Description-en's body, its paragraphs kept), the summary its
// one-line short description.
//
// Two traps of the archive are avoided. The binaries of one source package (libfoo1,
// libfoo-dev, libfoo-doc) share boilerplate, so examples are split by a hash of the SOURCE
// package's name (split_of, as the man-page corpus splits by page name): all binaries of a
// source land in one split; so do sources whose packages ship the same long description (gcc-12
// and gcc-12-cross): they are linked, and the group is split by its first source name, so a
// document text never lies in two splits. And one description is often shipped by several
// packages (the same Description-md5), so each md5 gives one example: the first package by name.
#include <cstddef>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/data/debian_archive.h"

namespace strata {

struct DescriptionCorpusOptions {
  std::size_t min_document_words = 20;  // shorter long descriptions are skipped
  std::size_t min_summary_words = 2;    // shorter short descriptions are skipped
  int validation_percent = 5;
  int test_percent = 5;
  bool quiet = false;  // no progress output
  // Source packages whose documents are left out of every split, with every source linked to
  // them by a shared document: those that installed another corpus's held-out pages, so that a
  // model trained on both never reads, in training, the package text of a page it is tested on.
  std::set<std::string> held_out_sources;
  std::string origin;  // where the packages came from (the index files), kept in stats.json
};

// The source packages that installed the pages of `page_sets` (JSONL datasets of
// `strata data manpages`, whose "source" field is a page's installed path), for
// DescriptionCorpusOptions::held_out_sources: dpkg's lists under `root` give each page's
// package, `packages` (the archive's index) its source; a package the index does not know is
// its own source. Pages no dpkg list names (installed by hand) are counted in `unowned`.
// strata::Error naming the file and line for a line without a "source" string.
struct PageSources {
  std::set<std::string> sources;
  std::size_t pages = 0, unowned = 0;
};
PageSources sources_of_pages(const std::vector<std::filesystem::path>& page_sets, const std::filesystem::path& root,
                             const std::vector<DebianPackage>& packages);

// Keeps the packages with both a short and a long description; one a Description-md5 (the
// package's own descriptions where the index has no md5), and one a package name, the first
// by name; then those whose document and summary have enough words. Each becomes a native
// document line (include/strata/doc/dataset.h): id and title the package's name, the long
// description's paragraphs (sentences split by the DocumentBuilder), the short description as
// summary, and the extra fields "package", "source", "section" and "description_md5". Writes
// OUT/{train,validation,test}.jsonl in package-name order and OUT/stats.json, each written then
// renamed. The split: split_of(the first source name of the example's group of sources linked
// by a shared document). The stats (returned): "command", "origin", "packages", "sources",
// "skipped" (by reason: no_description, duplicate_description, duplicate_package,
// short_document, short_summary, held_out), "held_out_sources" (how many were named),
// "sources_linked_by_shared_documents", the options, and per split and for "all" the
// corpus_stats lengths (documents, input_words and target_words percentiles, ...) with
// "sources" (source packages), "document_words_mean", "summary_words_mean" and
// "compression_ratio" (mean document words / mean summary words).
// strata::Error when no package is left; nothing is written then.
nlohmann::json build_description_corpus(const std::vector<DebianPackage>& packages,
                                        const DescriptionCorpusOptions& options,
                                        const std::filesystem::path& out_dir);

}  // namespace strata
