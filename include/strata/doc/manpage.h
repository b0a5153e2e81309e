#pragma once
// man pages in roff (plain or gzip) parsed into a structured Document.
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "strata/doc/document.h"

namespace strata {

struct ManPage {
  std::string name;         // from .TH, else from the file name ("ls")
  std::string section;      // from .TH, else from the file name ("1", "3p")
  std::string alias_of;     // for a `.so` page: the page it includes ("man3/foo.3"); else empty
  std::string name_line;    // the NAME section as text: "ls - list directory contents"
  std::string description;  // NAME after the "\-" separator: "list directory contents"
  Document document;        // every section, NAME included; title "ls(1)"; .SH → level 1, .SS → level 2
  std::size_t unknown_macros = 0;  // macros not understood, kept as text
  std::size_t invalid_utf8_bytes = 0;  // bytes replaced by U+FFFD before parsing
};

// `source_name` is used in error messages and to infer name/section when .TH is missing.
// Never throws on odd roff: unknown macros and unbalanced escapes are kept as text.
ManPage parse_manpage(std::string_view roff, std::string_view source_name);

// Reads a plain or gzip-compressed page; strata::Error if the file cannot be read.
ManPage read_manpage(const std::filesystem::path& path);

}  // namespace strata
