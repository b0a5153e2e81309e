#pragma once
// A multi-task suite from Debian's package archive (thesis ch. 3's GLUE analogue), skewed in
// size and classes as GLUE is. From each package's descriptions, section, priority and debtags:
//   section      long description -> Section (about 50 classes)
//   priority     long description -> Priority (5 classes, nearly all "optional")
//   tag-FACET    long description -> the package's one tag in FACET (role, implemented-in,
//                interface, use, works-with, scope), for packages with exactly one
//   match        (short, long) description -> "match" or "mismatch"; the mismatches are long
//                descriptions of other packages of the same Section (hard negatives)
//   jaccard      (long, long) descriptions of two tagged packages -> the Jaccard similarity of
//                their debtags (regression; half the pairs share a Section)
//   acceptable   a description's first sentence, as written or with its words shuffled
// and, from what is installed under installed_root (data/installed_tasks.h), man-section (a
// man page's chunk -> its section) and header-section (a header's code -> its package's
// Section), the held-out transfer task: tasks.json marks it "transfer": true, and a
// multi-task run leaves it out unless it names it,
// and a summarisation corpus, long -> short description. Packages are split by source package
// (a hash of its name: about 90/5/5), so no source's packages straddle splits, and a
// description seen once (by Description-md5, else by text) is not used again.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/data/debian_archive.h"

namespace strata {

struct DebianSuiteOptions {
  std::filesystem::path out_dir;
  std::uint64_t seed = 1;                   // negatives, pairs and shuffles
  std::size_t min_class_examples = 20;      // classes with fewer training examples are dropped
  std::size_t min_description_words = 8;    // shorter long descriptions are not used
  std::filesystem::path installed_root;     // "/" = this machine; empty = no man-section, header-section
  std::size_t installed_words = 100;        // words of a man-page chunk or a header
  std::size_t headers_per_package = 20;     // header-section: at most this many headers a package
};

// Writes OUT/tasks/TASK/{train,validation,test}.jsonl, one example a line:
//   {"id", "task", "text", ["text_b",] "label"}  (label: a string, or a number for regression)
// OUT/tasks.json (per task: kind "classification" or "regression", pair, metric, labels,
// examples per split, dropped classes), OUT/summaries/ (the description corpus of the same
// packages, data/description_corpus.h, its documents of at least min_description_words) and
// OUT/stats.json; every file written then renamed. Returns the stats.
nlohmann::json build_debian_suite(const std::vector<DebianPackage>& packages, const DebianSuiteOptions& options);

}  // namespace strata
