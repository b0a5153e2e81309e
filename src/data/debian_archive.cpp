#include "strata/data/debian_archive.h"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"

extern char** environ;

namespace strata {

namespace {

// The first line of a value and the rest (continuation lines), split at the first '\n'.
std::pair<std::string, std::string> first_line_and_rest(const std::string& value) {
  const std::size_t cut = value.find('\n');
  if (cut == std::string::npos) return {value, ""};
  return {value.substr(0, cut), value.substr(cut + 1)};
}

}  // namespace

const std::string* Deb822Stanza::find(std::string_view name) const {
  for (const auto& [field, value] : fields)
    if (equals_ignoring_case(field, name)) return &value;
  return nullptr;
}

std::vector<Deb822Stanza> parse_deb822(std::string_view text, const std::filesystem::path& file) {
  std::vector<Deb822Stanza> stanzas;
  Deb822Stanza current;
  const auto finish = [&] {
    if (!current.fields.empty()) stanzas.push_back(std::move(current));
    current = Deb822Stanza{};
  };
  std::size_t number = 0;
  for (const std::string_view line : split_lines(text)) {
    ++number;
    if (trim(line).empty()) {
      finish();
      continue;
    }
    if (line.front() == '#') continue;  // a comment line
    if (line.front() == ' ' || line.front() == '\t') {
      if (current.fields.empty())
        throw error_at(file, number, "", "a continuation line (starting with a space) before any field");
      std::string& value = current.fields.back().second;
      const std::string_view rest = line.substr(1);
      value += '\n';
      value.append(rest.data(), rest.size());
      value.erase(value.find_last_not_of(kWhitespace) + 1);  // trailing whitespace, as on the first line
      continue;
    }
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      throw error_at(file, number, "", "expected 'Field: value' or a continuation line, got '" +
                                           std::string(line.substr(0, 60)) + "'");
    const std::string_view name = line.substr(0, colon);
    if (name.empty() || trim(name).size() != name.size())
      throw error_at(file, number, name, "a field name must be non-empty and without spaces");
    if (current.fields.empty()) current.line = number;
    if (current.find(name) != nullptr)
      throw error_at(file, number, name, "given twice in the stanza starting at line " + std::to_string(current.line));
    current.fields.emplace_back(std::string(name), std::string(trim(line.substr(colon + 1))));
  }
  finish();
  return stanzas;
}

std::string description_text(std::string_view long_lines) {
  std::string out, paragraph;
  const auto close_paragraph = [&] {
    if (paragraph.empty()) return;
    if (!out.empty()) out += "\n\n";
    out += paragraph;
    paragraph.clear();
  };
  for (const std::string_view line : split_lines(long_lines)) {
    if (trim(line) == ".") {
      close_paragraph();
    } else if (!line.empty() && line.front() == ' ') {  // verbatim: keep the line as it is
      if (!paragraph.empty()) paragraph += '\n';
      paragraph += std::string(line);
    } else if (!trim(line).empty()) {
      if (!paragraph.empty()) paragraph += ' ';
      paragraph += std::string(trim(line));
    }
  }
  close_paragraph();
  return out;
}

std::vector<DebianPackage> read_debian_packages(const std::filesystem::path& packages,
                                                const std::filesystem::path& translation) {
  struct Text {
    std::string short_description, long_description;
  };
  std::unordered_map<std::string, Text> by_md5, by_name;
  for (const Deb822Stanza& s : parse_deb822(read_maybe_gzip(translation), translation)) {
    const std::string* description = s.find("Description-en");
    if (description == nullptr) throw error_at(translation, s.line, "Description-en", "missing");
    const auto [first, rest] = first_line_and_rest(*description);
    const Text text{first, description_text(rest)};
    if (const std::string* md5 = s.find("Description-md5")) by_md5.emplace(*md5, text);
    if (const std::string* name = s.find("Package")) by_name.emplace(*name, text);
  }
  std::vector<DebianPackage> out;
  for (const Deb822Stanza& s : parse_deb822(read_maybe_gzip(packages), packages)) {
    const std::string* name = s.find("Package");
    if (name == nullptr || name->empty()) throw error_at(packages, s.line, "Package", "missing");
    DebianPackage p;
    p.name = *name;
    const std::string* source = s.find("Source");
    p.source = source ? std::string(trim(std::string_view(*source).substr(0, source->find('(')))) : p.name;
    if (const std::string* section = s.find("Section")) {
      const std::size_t slash = section->rfind('/');
      p.section = slash == std::string::npos ? *section : section->substr(slash + 1);
    }
    if (const std::string* priority = s.find("Priority")) p.priority = *priority;
    if (const std::string* tags = s.find("Tag")) {
      std::string_view rest = *tags;
      while (!rest.empty()) {
        const std::size_t comma = rest.find(',');
        const std::string_view tag = trim(rest.substr(0, comma));
        if (!tag.empty()) p.tags.emplace_back(tag);
        rest.remove_prefix(comma == std::string_view::npos ? rest.size() : comma + 1);
      }
    }
    if (const std::string* md5 = s.find("Description-md5")) p.description_md5 = *md5;
    const Text* text = nullptr;
    if (const auto hit = by_md5.find(p.description_md5); !p.description_md5.empty() && hit != by_md5.end())
      text = &hit->second;
    else if (const auto named = by_name.find(p.name); p.description_md5.empty() && named != by_name.end())
      text = &named->second;
    if (text != nullptr) {
      p.short_description = text->short_description;
      p.long_description = text->long_description;
    } else if (const std::string* own = s.find("Description")) {  // an index that carries its own
      const auto [first, rest] = first_line_and_rest(*own);
      p.short_description = first;
      p.long_description = description_text(rest);
    }
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// The largest file under `lists` whose name ends with `suffix` (the main suite's index).
std::filesystem::path largest_ending(const std::filesystem::path& lists, std::string_view suffix) {
  std::filesystem::path best;
  std::uintmax_t best_size = 0;
  if (!std::filesystem::is_directory(lists)) return best;
  for (const auto& entry : std::filesystem::directory_iterator(lists)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !name.ends_with(suffix)) continue;
    if (entry.file_size() > best_size) {
      best = entry.path();
      best_size = entry.file_size();
    }
  }
  return best;
}

DebianIndexes find_indexes(const std::filesystem::path& lists) {
  return {largest_ending(lists, "_Packages"), largest_ending(lists, "_i18n_Translation-en")};
}

void run_apt_get_update(const std::filesystem::path& lists) {
  namespace fs = std::filesystem;
  fs::create_directories(lists / "partial");
  fs::create_directories(lists / "cache" / "archives" / "partial");
  std::vector<std::string> words{"apt-get",
                                 "-q",
                                 "-o", "Dir::State::Lists=" + fs::absolute(lists).string(),
                                 "-o", "Dir::Cache=" + fs::absolute(lists / "cache").string(),
                                 "-o", "Acquire::Languages=en",
                                 "-o", "Acquire::GzipIndexes=false",
                                 "-o", "Debug::NoLocking=1",
                                 "update"};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (const int rc = ::posix_spawnp(&pid, "apt-get", nullptr, nullptr, argv.data(), environ); rc != 0)
    throw Error("cannot run apt-get to fetch Debian's package indexes: " + std::string(std::strerror(rc)));
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("apt-get update into " + lists.string() + " failed (status " + std::to_string(status) +
                "); its messages are above");
}

}  // namespace

DebianIndexes debian_indexes(const std::filesystem::path& lists, bool fetch) {
  DebianIndexes found = find_indexes(lists);
  if ((found.packages.empty() || found.translation.empty()) && fetch) {
    run_apt_get_update(lists);
    found = find_indexes(lists);
  }
  if (found.packages.empty())
    throw Error(lists.string() + ": no Packages index (apt's *_Packages file)" + (fetch ? " after apt-get update" : ""));
  if (found.translation.empty())
    throw Error(lists.string() + ": no English translations (apt's *_i18n_Translation-en file)" +
                (fetch ? " after apt-get update" : ""));
  return found;
}

}  // namespace strata
