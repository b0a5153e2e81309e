#pragma once
// Question-summary hierarchies built from man pages (seed 001's GovReport-QS analogue,
// `strata data qs-manpages`): a page's section tree gives the hierarchy.
//
// - The root pair asks "What is NAME?" and its summary is the page's NAME line (the corpus's
//   summary).
// - Each kept top-level section is a child of the root, each of its subsections a child of
//   the section. The question comes from the heading: a fixed question for the common
//   headings (DESCRIPTION → "What does NAME do?", OPTIONS → "Which options does NAME take?",
//   …; kQuestionTemplates in the .cpp), else "What about <heading in lower case> in NAME?";
//   a subsection asks "What about <heading>?".
// - The summary of a section is the first sentence of its own paragraphs with at least
//   `min_sentence_words` words, cut to `max_summary_words`. A section without one keeps an
//   empty summary when it has kept subsections, else it is dropped.
// - Dropped headings: NAME, SYNOPSIS and the boilerplate sections (SEE ALSO, AUTHOR(S),
//   COPYRIGHT, REPORTING BUGS, …; kDroppedHeadings in the .cpp).
// - The document is the kept sections with their headings as each section's first
//   paragraph: the seed's input is the aligned sections "along with the titles of their
//   ancestor sections", and a model sees no heading otherwise (headings are not text).
// A page yields no example when fewer than `min_sections` sections are kept.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/doc/document.h"
#include "strata/eval/qs_hierarchy.h"

namespace strata {

struct ManpageQsOptions {
  std::size_t max_sections = 4;       // top-level sections kept, in page order
  std::size_t max_subsections = 3;    // subsections kept under each section
  std::size_t min_sections = 2;       // fewer: the page yields no example
  std::size_t min_sentence_words = 4;
  std::size_t max_summary_words = 16;
};

// `page`: a man page as `strata data manpages` writes it (summary = its NAME line). `name`:
// the page's name for the questions ("ls"). nullopt when the page yields no example.
std::optional<QsExample> manpage_qs_example(const Document& page, const std::string& name,
                                            const ManpageQsOptions& options = {});

// Every page of a man-page corpus directory (`strata data manpages`: train, validation and
// test.jsonl) through manpage_qs_example(), written as OUT/<split>.jsonl (QS JSONL, one file
// per split, so pages stay in their corpus split) and OUT/stats.json; nothing is written until
// every split has been read, and each file is written then renamed. Returns the stats: per split, pages read, examples, and the mean pairs, edges,
// depth-2 pairs and words of document and target per example.
nlohmann::ordered_json build_manpage_qs(const std::filesystem::path& corpus_dir, const std::filesystem::path& out_dir,
                                        const ManpageQsOptions& options = {});

// The page's name from a corpus id "ls(1)" → "ls" (the id itself when it has no "(").
std::string manpage_name(const std::string& id);

}  // namespace strata
