#include "strata/data/long_corpora.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/core/strings.h"
#include "strata/core/utf8.h"
#include "strata/data/manpage_corpus.h"
#include "strata/doc/manpage.h"

namespace strata {

namespace fs = std::filesystem;

namespace {

constexpr int kValidationPercent = 5;
constexpr int kTestPercent = 5;

// The documents of one run: written to their split as they come, counted, and committed with
// stats.json only when the run finishes, so a failed run leaves every old file as it was.
class CorpusWriter {
 public:
  CorpusWriter(const LongCorpusOptions& options, std::string command, fs::path root)
      : options_(options), command_(std::move(command)), root_(std::move(root)) {
    for (const char* name : {"train", "validation", "test"})
      splits_.push_back({name, std::make_unique<AtomicFile>(options.out_dir / (std::string(name) + ".jsonl"))});
  }

  // Calls read(candidate) for each candidate, with progress, until max_documents are written.
  template <class Read>
  void read_each(const std::vector<fs::path>& candidates, const char* unit, Read&& read) {
    Progress progress(command_, candidates.size(), unit, options_.quiet);
    for (const fs::path& candidate : candidates) {
      if (options_.max_documents > 0 && documents_ == options_.max_documents) break;
      read(candidate);
      progress.add();
    }
    progress.finish();
  }

  // Invalid UTF-8 is replaced by U+FFFD here, as DatasetReader would on reading, so that what
  // is written reads back exactly.
  void add(const std::string& id, std::string_view text) {
    const std::string clean = sanitize_utf8(text, &invalid_utf8_bytes_);
    Split& split = find(split_of(id, kValidationPercent, kTestPercent));
    split.file->stream() << nlohmann::json{{"id", id}, {"text", clean}}.dump() << '\n';
    ++split.documents;
    split.bytes += clean.size();
    ++documents_;
  }

  void skip(const std::string& reason) { ++skipped_[reason]; }

  // Commits the splits, then writes stats.json: `stats` (further inputs) with the command, the
  // root and the counts added.
  nlohmann::json commit(nlohmann::json stats = nlohmann::json::object()) {
    stats["command"] = command_;
    stats["root"] = root_.string();
    std::size_t documents = 0, bytes = 0;
    for (Split& split : splits_) {
      split.file->commit();
      stats["splits"][split.name] = {{"documents", split.documents}, {"bytes", split.bytes}};
      documents += split.documents;
      bytes += split.bytes;
    }
    stats["all"] = {{"documents", documents}, {"bytes", bytes}};
    stats["skipped"] = nlohmann::json(skipped_);
    stats["invalid_utf8_bytes"] = invalid_utf8_bytes_;  // replaced by U+FFFD in what was written
    report_invalid_utf8(root_, invalid_utf8_bytes_);
    write_file_atomic(options_.out_dir / "stats.json", stats.dump(2) + "\n");
    return stats;
  }

 private:
  struct Split {
    std::string name;
    std::unique_ptr<AtomicFile> file;
    std::size_t documents = 0;
    std::size_t bytes = 0;
  };

  Split& find(std::string_view name) {
    return *std::find_if(splits_.begin(), splits_.end(), [&](const Split& s) { return s.name == name; });
  }

  const LongCorpusOptions& options_;
  std::string command_;
  fs::path root_;
  std::vector<Split> splits_;
  std::size_t documents_ = 0;
  std::size_t invalid_utf8_bytes_ = 0;
  std::map<std::string, std::size_t> skipped_;
};

void require_directory(const fs::path& dir, std::string_view what) {
  if (!fs::is_directory(dir)) throw Error(fmt::format("{}: no such {} directory", dir.string(), what));
}

// Converts the std::filesystem errors of listing into a strata::Error naming the path.
template <class List>
std::vector<fs::path> sorted_listing(List&& list) {
  try {
    std::vector<fs::path> paths = list();
    std::sort(paths.begin(), paths.end());  // the output must not depend on readdir's order
    return paths;
  } catch (const fs::filesystem_error& e) {
    throw Error(fmt::format("{}: cannot list: {}", e.path1().string(), e.code().message()));
  }
}

// Regular files and symlinks (directory symlinks are not followed): what a corpus may read.
bool is_file_or_link(const fs::directory_entry& entry) {
  return entry.is_symlink() || entry.is_regular_file();
}

std::vector<fs::path> entries_of(const fs::path& dir) {
  return sorted_listing([&] {
    std::vector<fs::path> paths;
    for (const fs::directory_entry& entry : fs::directory_iterator(dir))
      if (is_file_or_link(entry) || entry.is_directory()) paths.push_back(entry.path());
    return paths;
  });
}

std::vector<fs::path> files_below(const fs::path& dir) {
  return sorted_listing([&] {
    std::vector<fs::path> paths;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir))
      if (is_file_or_link(entry)) paths.push_back(entry.path());
    return paths;
  });
}

bool has_nul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

bool is_inside(const fs::path& path, const fs::path& dir) {
  return std::mismatch(dir.begin(), dir.end(), path.begin(), path.end()).first == dir.end();
}

std::string link_skip_reason(const fs::path& link, const fs::path& canonical_root) {
  std::error_code error;
  const fs::path target = fs::canonical(link, error);
  if (error) return "broken_link";
  return is_inside(target, canonical_root) ? "link_inside_root" : "link_outside_root";
}

std::string without_gz(std::string name) {
  if (name.ends_with(".gz")) name.resize(name.size() - 3);
  return name;
}

// Parts of a document joined by one blank line.
void append_part(std::string& text, std::string_view part) {
  if (!text.empty()) text += text.back() == '\n' ? "\n" : "\n\n";
  text += part;
}

// ---- code ----

// One top-level entry of the tree: its text files, each after a line naming it.
void read_code_entry(CorpusWriter& corpus, const fs::path& root, const fs::path& canonical_root,
                     const fs::path& entry) {
  const bool directory = fs::is_directory(fs::symlink_status(entry));
  std::string text;
  for (const fs::path& file : directory ? files_below(entry) : std::vector<fs::path>{entry}) {
    if (fs::is_symlink(file)) {
      corpus.skip(link_skip_reason(file, canonical_root));
      continue;
    }
    const std::string contents = read_file(file);
    if (has_nul(contents)) {
      corpus.skip("binary");
      continue;
    }
    text += code_file_header(file.lexically_relative(root));
    text += '\n';
    text += contents;
    if (!contents.empty() && contents.back() != '\n') text += '\n';  // the next header starts a line
  }
  if (!text.empty()) corpus.add(entry.filename().string(), text);
  else if (directory) corpus.skip("no_text");  // a loose file was counted as it was skipped
}

// ---- markup ----

// True when the page's only request is ".so other/page" (comments and blank lines aside): it
// includes another page and has no text of its own.
bool is_so_redirect(std::string_view roff) {
  bool redirect = false;
  for (std::string_view line : split_lines(roff)) {
    line = trim(line);
    if (line.empty() || line == "." || line.starts_with(".\\\"") || line.starts_with("'\\\"")) continue;
    if (redirect || !line.starts_with(".so ")) return false;
    redirect = true;
  }
  return redirect;
}

std::vector<fs::path> man_pages(const fs::path& root) {
  std::vector<fs::path> pages;
  for (const fs::path& dir : entries_of(root)) {
    if (!fs::is_directory(dir) || !dir.filename().string().starts_with("man")) continue;
    for (const fs::path& page : entries_of(dir))
      if (!fs::is_directory(fs::symlink_status(page))) pages.push_back(page);
  }
  return pages;  // sorted: sorted pages of sorted directories
}

void read_markup_page(CorpusWriter& corpus, const fs::path& root, const fs::path& page) {
  if (fs::is_symlink(page)) return corpus.skip("link");
  const std::string roff = read_maybe_gzip(page);
  if (is_so_redirect(roff)) return corpus.skip("redirect");
  corpus.add(without_gz(page.lexically_relative(root).generic_string()), roff);
}

// ---- books ----

struct PackageFiles {
  std::vector<fs::path> man_pages;  // as listed: absolute paths on the installed system
  std::vector<fs::path> docs;
};

// "bash.list" → "bash", "libc6:amd64.list" → "libc6".
std::string package_name(const fs::path& list) {
  const std::string stem = list.stem().string();
  return stem.substr(0, stem.find(':'));
}

bool is_english_man_page(const fs::path& path) {
  return path.parent_path().parent_path() == "/usr/share/man" &&
         path.parent_path().filename().string().starts_with("man");
}

bool is_book_doc(const fs::path& path) {
  const std::string name = without_gz(path.filename().string());
  return name.starts_with("README") || name.starts_with("NEWS") || name.starts_with("changelog") ||
         name.ends_with(".txt");
}

PackageFiles package_files(const fs::path& list, const std::string& package) {
  const std::string doc_dir = "/usr/share/doc/" + package + "/";
  PackageFiles files;
  const std::string list_text = read_file(list);
  for (std::string_view line : split_lines(list_text)) {
    const fs::path path(line);
    if (is_english_man_page(path)) files.man_pages.push_back(path);
    else if (line.starts_with(doc_dir) && is_book_doc(path)) files.docs.push_back(path);
  }
  std::sort(files.man_pages.begin(), files.man_pages.end());
  std::sort(files.docs.begin(), files.docs.end());
  return files;
}

// A rendered page as a reader sees it: the title and each heading on a line of its own before
// its paragraphs (Document::text alone has no headings).
std::string rendered_page(const Document& page) {
  std::string text;
  for_each_section(page.root, [&](const Section& section) {
    if (!section.heading.empty()) append_part(text, section.heading);
    for (const Paragraph& paragraph : section.paragraphs) append_part(text, page.slice(paragraph.span));
  });
  return text;
}

// The listed path on the system under `root`, or empty when it is absent or not a regular file
// (a symlinked page is an alias; a symlinked doc belongs to another package).
fs::path installed_file(const fs::path& root, const fs::path& listed_path) {
  const fs::path path = root / listed_path.relative_path();
  return fs::is_regular_file(fs::symlink_status(path)) ? path : fs::path();
}

std::string book_text(const BooksCorpusOptions& options, const PackageFiles& files) {
  std::string text;
  for (const fs::path& listed_page : files.man_pages) {
    const fs::path path = installed_file(options.root, listed_page);
    if (path.empty()) continue;
    const ManPage page = read_manpage(path);
    if (page.alias_of.empty()) append_part(text, rendered_page(page.document));
  }
  for (const fs::path& listed_doc : files.docs) {
    const fs::path path = installed_file(options.root, listed_doc);
    if (path.empty()) continue;
    const std::string contents = read_maybe_gzip(path);
    if (!has_nul(contents)) append_part(text, contents);
  }
  return text;
}

std::vector<fs::path> package_lists(const fs::path& dpkg_info) {
  std::vector<fs::path> lists;
  for (const fs::path& path : entries_of(dpkg_info))
    if (path.extension() == ".list") lists.push_back(path);
  return lists;
}

void require_some(const std::vector<fs::path>& candidates, const fs::path& root, std::string_view what) {
  if (candidates.empty()) throw Error(fmt::format("{}: no {} found", root.string(), what));
}

}  // namespace

std::string code_file_header(const fs::path& relative) {
  return fmt::format("==> {} <==", relative.generic_string());
}

nlohmann::json build_code_corpus(const CodeCorpusOptions& options) {
  require_directory(options.root, "source");
  const std::vector<fs::path> entries = entries_of(options.root);
  require_some(entries, options.root, "files");
  const fs::path canonical_root = fs::canonical(options.root);
  CorpusWriter corpus(options, "code", options.root);
  corpus.read_each(entries, "entries", [&](const fs::path& entry) {
    read_code_entry(corpus, options.root, canonical_root, entry);
  });
  return corpus.commit();
}

nlohmann::json build_markup_corpus(const MarkupCorpusOptions& options) {
  require_directory(options.root, "man");
  const std::vector<fs::path> pages = man_pages(options.root);
  require_some(pages, options.root, "man pages under man*/");
  CorpusWriter corpus(options, "markup", options.root);
  corpus.read_each(pages, "pages", [&](const fs::path& page) { read_markup_page(corpus, options.root, page); });
  return corpus.commit();
}

nlohmann::json build_books_corpus(const BooksCorpusOptions& options) {
  require_directory(options.dpkg_info, "dpkg info");
  const std::vector<fs::path> lists = package_lists(options.dpkg_info);
  require_some(lists, options.dpkg_info, "package file lists (*.list)");
  CorpusWriter corpus(options, "books", options.root);
  std::unordered_set<std::string> packages_seen;
  corpus.read_each(lists, "packages", [&](const fs::path& list) {
    const std::string package = package_name(list);
    if (!packages_seen.insert(package).second) return corpus.skip("duplicate");
    const std::string text = book_text(options, package_files(list, package));
    if (text.size() < options.min_bytes) return corpus.skip("short");
    corpus.add(package, text);
  });
  return corpus.commit({{"dpkg_info", options.dpkg_info.string()},
                        {"min_bytes", options.min_bytes}});
}

}  // namespace strata
