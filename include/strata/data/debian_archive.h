#pragma once
// Debian's package archive as text (thesis ch. 3's multi-task suite is built from it): the
// `Packages` index (Package, Source, Section, Priority, Tag, Description-md5) and
// `Translation-en` (Package, Description-md5, Description-en: the one-line short description,
// then the long one). Both are deb822 files: stanzas of "Field: value" lines separated by blank
// lines, a value continued on lines that start with a space or tab, " ." a blank line inside
// it. Bad input is a strata::Error naming the file, line and field.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata {

struct Deb822Stanza {
  std::size_t line = 0;  // where the stanza starts (1-based)
  // Fields in file order; a value keeps its continuation lines joined by '\n', each without
  // its one leading space.
  std::vector<std::pair<std::string, std::string>> fields;

  // The field's value (field names compare case-insensitively, as deb822 says); null if absent.
  const std::string* find(std::string_view name) const;
};

// Every stanza of a deb822 text; `file` names it in errors. Errors: a line that is neither
// "Field: value" nor a continuation, a continuation before any field, an empty field name, a
// field given twice in one stanza.
std::vector<Deb822Stanza> parse_deb822(std::string_view text, const std::filesystem::path& file);

// One package as the suite reads it.
struct DebianPackage {
  std::string name, source;       // source: the Source field's name (no version), else the name
  std::string section, priority;  // section without its area ("contrib/utils" -> "utils")
  std::vector<std::string> tags;  // debtags, "facet::value", in file order
  std::string description_md5;
  std::string short_description;  // the first line of Description-en
  std::string long_description;   // the rest: paragraphs separated by a blank line
};

// A long description as text, from its lines as parse_deb822 keeps them (the continuation
// space dropped): "." lines become paragraph breaks, the others are joined into their
// paragraph by single spaces, except lines that start with a further space (deb822's verbatim
// lines), which stay lines of their own, spaces kept.
std::string description_text(std::string_view long_lines);

// The packages of a Packages index with their English descriptions from Translation-en,
// matched by Description-md5 (by package name where the index has no md5). Packages without
// a translation keep empty descriptions. Errors name the file, line and field: a Packages
// stanza without Package, a Translation-en stanza without Description-en.
std::vector<DebianPackage> read_debian_packages(const std::filesystem::path& packages,
                                                const std::filesystem::path& translation);

// The indexes of the largest suite under an apt lists directory: its main Packages and
// Translation-en files (uncompressed or gzip).
struct DebianIndexes {
  std::filesystem::path packages, translation;
};

// Finds the indexes under `lists`; when they are missing and `fetch` is set, first runs
// `apt-get update` with `lists` as a private state directory (its own lists and cache, English
// translations, uncompressed indexes: the system's apt state is not touched). strata::Error
// when apt-get fails or the files are still missing.
DebianIndexes debian_indexes(const std::filesystem::path& lists, bool fetch);

}  // namespace strata
