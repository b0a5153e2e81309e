#pragma once
// Long real-text corpora for language-model experiments, built from what a Debian machine has
// installed: the Block-State Transformer's GitHub, arXiv and PG19 sets in miniature.
//   code    one document per top-level entry of an include tree: its text files in path order
//   markup  one document per man page: the raw roff source
//   books   one document per installed package: its man pages rendered, then its README, NEWS,
//           changelog and *.txt files
// Each writes OUT/{train,validation,test}.jsonl as {"id", "text"} lines (the text shape of
// docs/formats.md, which DatasetReader reads back byte for byte) and OUT/stats.json, every file
// written then renamed. Documents go to a split by a hash of their id (split_of(id, 5, 5) of
// manpage_corpus.h), so a document keeps its split whatever else the tree holds.
#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace strata {

struct LongCorpusOptions {
  std::filesystem::path out_dir;
  std::size_t max_documents = 0;  // stop after this many documents; 0: no limit
  bool quiet = false;             // no progress on stderr
};

struct CodeCorpusOptions : LongCorpusOptions {
  std::filesystem::path root = "/usr/include";
};

struct MarkupCorpusOptions : LongCorpusOptions {
  std::filesystem::path root = "/usr/share/man";  // pages under root/man*/
};

struct BooksCorpusOptions : LongCorpusOptions {
  std::filesystem::path dpkg_info = "/var/lib/dpkg/info";  // PKG.list or PKG:ARCH.list files
  std::filesystem::path root = "/";  // the paths of the lists are read under it (as dpkg --root)
  std::size_t min_bytes = 4096;      // packages with less text are skipped
};

// The first line of each file in a code document: "==> linux/types.h <==" (as `head` names
// the files it concatenates), the path relative to the root.
std::string code_file_header(const std::filesystem::path& relative);

// Each returns the stats it wrote to OUT/stats.json: "command", "root", documents and bytes
// per split ("splits") and in all ("all"), and "skipped" counts by reason. A missing root or
// an input that exists but cannot be read (a corrupt .gz, a permission error) is a
// strata::Error naming the file; outputs written before keep their old contents.

// code: a top-level directory is one document of its regular files (recursively, sorted by
// relative path), each preceded by code_file_header; a top-level file is a document of its
// own. Skipped: files holding a NUL byte ("binary"), symlinks that leave the root
// ("link_outside_root") and those that stay in it ("link_inside_root": their target is read
// where it lies, so no text appears twice and none crosses splits).
nlohmann::json build_code_corpus(const CodeCorpusOptions& options);

// markup: every page under root/man*/ (plain or .gz) as its raw roff, id "man1/ls.1".
// Skipped: pages that are only a ".so" redirect ("redirect") and symlinks ("link"), both
// aliases of a page read where it lies.
nlohmann::json build_markup_corpus(const MarkupCorpusOptions& options);

// books: for each package (by name; a second architecture of one is "duplicate"), its
// /usr/share/man/man*/ pages rendered by the man-page parser (title and headings on lines of
// their own) followed by /usr/share/doc/PKG/ files named README*, NEWS*, changelog* or *.txt
// (.gz inflated; copyright is never among them), joined by blank lines. Listed files that are
// absent or symlinks are passed over; packages under min_bytes of text are "short".
nlohmann::json build_books_corpus(const BooksCorpusOptions& options);

}  // namespace strata
