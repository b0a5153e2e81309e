#include "strata/data/installed_tasks.h"

#include <algorithm>
#include <set>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"
#include "strata/data/manpage_corpus.h"
#include "strata/doc/manpage.h"

namespace strata {

namespace fs = std::filesystem;

namespace {

// The first `count` whitespace-separated words of `text`, joined by single spaces.
std::string first_words(std::string_view text, std::size_t count) {
  const std::vector<std::string_view> words = split_words(text);
  std::string out;
  for (std::size_t i = 0; i < std::min(count, words.size()); ++i) {
    if (i > 0) out += ' ';
    out += words[i];
  }
  return out;
}

// C and C++ source without its /* */ and // comments (string literals are not special-cased:
// a header's comments are what matters here, its licence text above all).
std::string without_comments(std::string_view code) {
  std::string out;
  for (std::size_t i = 0; i < code.size();) {
    if (code.compare(i, 2, "/*") == 0) {
      const std::size_t end = code.find("*/", i + 2);
      i = end == std::string_view::npos ? code.size() : end + 2;
      out += ' ';
    } else if (code.compare(i, 2, "//") == 0) {
      i = std::min(code.find('\n', i), code.size());
    } else {
      out += code[i++];
    }
  }
  return out;
}

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> entries;
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  return entries;
}

// "var/lib/dpkg/info/libc6-dev:amd64.list" -> "libc6-dev"
std::string listed_package(const fs::path& list) {
  const std::string stem = list.stem().string();
  return stem.substr(0, stem.find(':'));
}

}  // namespace

std::vector<InstalledExample> man_section_examples(const fs::path& root, std::size_t words) {
  std::vector<InstalledExample> examples;
  std::set<std::string> seen;
  for (char section = '1'; section <= '8'; ++section) {
    for (const fs::path& path : sorted_entries(root / "usr/share/man" / (std::string("man") + section))) {
      if (!fs::is_regular_file(fs::symlink_status(path))) continue;
      ManPage page;
      try {
        page = read_manpage(path);
      } catch (const Error&) {
        continue;  // an unreadable page is not an example
      }
      if (!page.alias_of.empty()) continue;
      const std::string text = first_words(page.document.text, words);
      if (text.empty() || !seen.insert(text).second) continue;
      const std::string name = path.filename().string();
      examples.push_back({split_of(name, 5, 5), name, text, std::string(1, section)});
    }
  }
  return examples;
}

std::vector<InstalledExample> header_section_examples(const fs::path& root,
                                                      const std::map<std::string, std::string>& sections,
                                                      const std::map<std::string, std::string>& sources,
                                                      std::size_t words, std::size_t per_package) {
  std::vector<InstalledExample> examples;
  std::set<std::string> seen;
  for (const fs::path& list : sorted_entries(root / "var/lib/dpkg/info")) {
    if (list.extension() != ".list") continue;
    const std::string package = listed_package(list);
    const auto section = sections.find(package);
    if (section == sections.end() || section->second.empty()) continue;
    const auto source = sources.find(package);
    const std::string split = split_of(source == sources.end() ? package : source->second, 5, 5);
    std::size_t taken = 0;
    const std::string listed = read_file(list);
    for (std::string_view line : split_lines(listed)) {
      if (taken == per_package) break;
      if (!line.starts_with("/usr/include/") || !(line.ends_with(".h") || line.ends_with(".hpp"))) continue;
      const fs::path path = root / fs::path(line).relative_path();
      if (!fs::is_regular_file(fs::symlink_status(path))) continue;
      const std::string text = first_words(without_comments(read_file(path)), words);
      if (text.empty() || !seen.insert(text).second) continue;
      examples.push_back({split, std::string(line), text, section->second});
      ++taken;
    }
  }
  return examples;
}

std::map<std::string, std::string> dpkg_owners(const fs::path& root, const std::vector<std::string>& paths) {
  const std::set<std::string_view> wanted(paths.begin(), paths.end());
  std::map<std::string, std::string> owners;
  for (const fs::path& list : sorted_entries(root / "var/lib/dpkg/info")) {
    if (list.extension() != ".list") continue;
    const std::string listed = read_file(list);
    for (std::string_view line : split_lines(listed))
      if (wanted.contains(line)) owners.emplace(std::string(line), listed_package(list));
  }
  return owners;
}

}  // namespace strata
