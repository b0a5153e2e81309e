#pragma once
// The section-ambiguity dataset (thesis ch. 4 in miniature, with real ambiguity from Debian):
// man-page names that live in several sections (printf 1/3, kill 1/2, stat 1/2/3) are a sense
// ambiguity. A sentence of another page that mentions "printf(3)" becomes ambiguous once its
// "(3)" is stripped, and the paragraph around it usually says which printf is meant. Each
// mention is one record: the stripped sentence, the stripped paragraph, a question naming the
// name's sections, the section as answer, and the NAME lines of the meant page in English and
// in the installed translations as targets. docs/chain.md describes the fields.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

struct SectionAmbiguityOptions {
  // English pages in man_root/man*/, translated pages in man_root/<lang>/man*/.
  std::filesystem::path man_root = "/usr/share/man";
  std::vector<std::string> languages = {"fr", "de", "es"};
  // Mentions kept per (name, section) in each split, the ones of smallest stable_hash(id):
  // a few much-cited names (printf(3), stat(2)) would otherwise be most of the data. 0: all.
  std::size_t max_per_sense = 80;
  // A context longer than this many words is cut to the sentences nearest the mention (one
  // before, one after, in turn, while they fit); a mention in a sentence longer than this is
  // skipped. 0: whole paragraphs, any sentence.
  std::size_t max_context_words = 120;
  int validation_percent = 10;
  int test_percent = 20;
  bool quiet = false;  // no progress output
};

// `text` with every reference "name(k...)" to this `name` (k a digit, then letters or digits:
// "printf(3)", "printf(3p)") written as the bare name, so it no longer gives the answer away.
// References to other names ("fprintf(3)") stay: they are honest clues. A reference is a
// whole name: "fprintf(3)" is not a reference to printf.
std::string strip_section_references(std::string_view text, std::string_view name);

// `Is "kill" the user command (1) or the system call (2)?`: the sections (digits, ascending)
// with the role man(7) gives each, the last joined by "or".
std::string section_question(std::string_view name, const std::vector<std::string>& sections);

// Scans the English pages (symlinks and .so aliases are not scanned, their text is their
// target's, but they count as the name existing in their section) and writes
// OUT/{train,validation,test}.jsonl and OUT/stats.json, each written then renamed into place.
// Returns the stats. A record (fields in this order):
//   id            "<page file>:<name>:<paragraph>.<sentence>", e.g. "man3/printf.3:kill:40.1"
//   name, section the mentioned name and the section meant (its digit: "3p" counts as "3")
//   sections      every section the name has among the English pages, ascending
//   source        the sentence, stripped (strip_section_references)
//   context       its paragraph (with its neighbours when it is the sentence alone; cut to
//                 max_context_words around the sentence), stripped the same way
//   question      section_question(name, sections)
//   answer        = section
//   targets       {"en": the English page's NAME line, "<lang>": the translated page's} for
//                 the pages that exist and whose NAME line parses, whitespace normalised
//   mentioned_in  the scanned page, "vfprintf(3)"
// The split is split_of(mentioned-in page's name), so a page's paragraphs stay in one split.
// strata::Error for a missing man root, bad percentages, or no ambiguous name at all; nothing
// is written then.
nlohmann::json build_section_ambiguity(const SectionAmbiguityOptions& options,
                                       const std::filesystem::path& out_dir);

}  // namespace strata
