#include "strata/data/manpage_corpus.h"

#include <fnmatch.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "strata/core/diagnostics.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/progress.h"
#include "strata/data/corpus_stats.h"
#include "strata/doc/dataset.h"
#include "strata/doc/manpage.h"

namespace strata {

namespace fs = std::filesystem;

namespace {



// The page's document without its NAME section, rebuilt so text and spans stay consistent.
Document without_name_section(const Document& page) {
  DocumentBuilder builder(page.title);
  const auto copy = [&](const Section& section, const auto& self) -> void {
    if (section.level > 0) builder.open_section(section.heading, section.level);
    for (const Paragraph& p : section.paragraphs) builder.add_paragraph(page.slice(p.span));
    for (const Section& child : section.children) {
      if (child.level == 1 && child.heading == "NAME") continue;
      self(child, self);
    }
  };
  copy(page.root, copy);
  return builder.finish();
}

struct Entry {
  std::string skip;  // reason, empty when kept
  std::size_t invalid_utf8_bytes = 0;
  std::string name, section, source;
  Document document;
};

Entry read_entry(const fs::path& path, const ManpageCorpusOptions& options) {
  Entry entry;
  entry.source = path.string();
  if (fs::is_symlink(path)) {
    entry.skip = "alias";
    return entry;
  }
  ManPage page;
  try {
    page = read_manpage(path);
  } catch (const Error&) {
    entry.skip = "unreadable";
    return entry;
  }
  entry.invalid_utf8_bytes = page.invalid_utf8_bytes;
  if (!page.alias_of.empty()) {
    entry.skip = "alias";
    return entry;
  }
  if (page.description.empty()) {
    entry.skip = "no_name";
    return entry;
  }
  for (const std::string& pattern : options.exclude)
    if (::fnmatch(pattern.c_str(), page.name.c_str(), 0) == 0) {
      entry.skip = "excluded";
      return entry;
    }
  entry.name = page.name;
  entry.section = page.section;
  entry.document = without_name_section(page.document);
  entry.document.id = fmt::format("{}({})", page.name, page.section);
  entry.document.summary = page.description;
  if (count_words(entry.document.text) < options.min_body_words) entry.skip = "short_body";
  else if (count_words(page.description) < options.min_summary_words) entry.skip = "short_summary";
  return entry;
}

std::vector<fs::path> list_pages(const fs::path& root) {
  if (!fs::is_directory(root)) throw Error(root.string() + ": no such man directory");
  std::vector<fs::path> pages;
  for (const auto& dir : fs::directory_iterator(root)) {
    const std::string name = dir.path().filename().string();
    if (!dir.is_directory() || name.rfind("man", 0) != 0) continue;
    for (const auto& file : fs::directory_iterator(dir.path()))
      if (file.is_regular_file() || file.is_symlink()) pages.push_back(file.path());
  }
  std::sort(pages.begin(), pages.end());  // deterministic order: output does not depend on readdir
  return pages;
}

// Two pages can share a title: libtirpc's getrpcent.3t and glibc's getrpcent.3 are both
// getrpcent(3), and tc-cbq.8 and tc-cbq-details.8 are both CBQ(8). Their ids name the file too,
// so that whatever joins by id (a TLM's extracts, a system's pairs) finds one document:
// getrpcent(3)[man3/getrpcent.3t].
void give_unique_ids(std::vector<Entry>& entries) {
  std::map<std::string, int> uses;
  for (const Entry& entry : entries)
    if (entry.skip.empty()) ++uses[entry.document.id];
  for (Entry& entry : entries) {
    if (!entry.skip.empty() || uses[entry.document.id] == 1) continue;
    const fs::path path(entry.source);  // root/manN/FILE: the last two parts tell pages apart
    std::string file = (path.parent_path().filename() / path.filename()).string();
    if (file.ends_with(".gz")) file.resize(file.size() - 3);  // as read_manpage names a page
    entry.document.id += "[" + file + "]";
  }
}

nlohmann::json native_line(const Entry& entry) {
  nlohmann::json line = to_native_json(entry.document);
  line["name"] = entry.name;
  line["section"] = entry.section;
  line["source"] = entry.source;
  return line;
}

}  // namespace

std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string split_of(std::string_view page_name, int validation_percent, int test_percent) {
  const int bucket = static_cast<int>(stable_hash(page_name) % 100);
  if (bucket < test_percent) return "test";
  if (bucket < test_percent + validation_percent) return "validation";
  return "train";
}

nlohmann::json build_manpage_corpus(const ManpageCorpusOptions& options, const fs::path& out_dir) {
  const std::vector<fs::path> pages = list_pages(options.man_root);
  if (pages.empty()) throw Error(options.man_root.string() + ": no man pages found (scripts/install-deps installs some; container images may exclude /usr/share/man in /etc/dpkg/dpkg.cfg.d/)");

  std::vector<Entry> entries(pages.size());
  Progress progress("parsing man pages", pages.size(), "pages", options.quiet);
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t i = 0; i < pages.size(); ++i) {
    entries[i] = read_entry(pages[i], options);
    progress.add();
  }
  progress.finish();

  // Duplicates: the same body text installed under two names (or twice under one).
  std::unordered_set<std::uint64_t> seen_bodies;
  std::map<std::string, std::size_t> skipped;
  std::map<std::string, std::vector<const Entry*>> by_split;
  std::size_t invalid_utf8_bytes = 0;
  for (Entry& entry : entries) {
    invalid_utf8_bytes += entry.invalid_utf8_bytes;
    if (entry.skip.empty() && !seen_bodies.insert(stable_hash(entry.document.text)).second)
      entry.skip = "duplicate";
    if (!entry.skip.empty()) {
      ++skipped[entry.skip];
      continue;
    }
    by_split[split_of(entry.name, options.validation_percent, options.test_percent)].push_back(&entry);
  }
  give_unique_ids(entries);

  fs::create_directories(out_dir);
  nlohmann::json stats;
  stats["source"] = options.man_root.string();
  stats["pages_found"] = pages.size();
  stats["skipped"] = skipped;
  stats["invalid_utf8_bytes"] = invalid_utf8_bytes;  // replaced by U+FFFD, over all pages read
  report_invalid_utf8(options.man_root, invalid_utf8_bytes);
  SplitLengths all;
  for (const char* split : kSplitNames) {
    AtomicFile file(out_dir / (std::string(split) + ".jsonl"));
    std::vector<const Document*> documents;
    for (const Entry* entry : by_split[split]) {
      file.stream() << native_line(*entry).dump() << '\n';
      documents.push_back(&entry->document);
    }
    file.commit();
    const SplitLengths lengths = measure_split(documents, options.tokenizer);
    stats["splits"][split] = lengths.to_json();
    all.merge(lengths);
  }
  stats["all"] = all.to_json();
  write_file_atomic(out_dir / "stats.json", stats.dump(2) + "\n");
  return stats;
}

nlohmann::json corpus_stats(const fs::path& corpus_dir, const Tokenizer* tokenizer) {
  const fs::path stats_path = corpus_dir / "stats.json";
  nlohmann::json stats = nlohmann::json::object();
  if (fs::exists(stats_path)) {
    // Kept fields (source, skipped, ...) survive; a damaged file is rebuilt from scratch.
    stats = nlohmann::json::parse(read_file(stats_path), nullptr, /*allow_exceptions=*/false);
    if (!stats.is_object()) {
      warn(stats_path.string() + ": not a JSON object; rewriting it");
      stats = nlohmann::json::object();
    }
  }
  SplitLengths all;
  for (const char* split : kSplitNames) {
    const fs::path path = corpus_dir / (std::string(split) + ".jsonl");
    if (!fs::exists(path)) throw Error(path.string() + ": missing (is this a corpus directory?)");
    DatasetReader reader(path);
    std::vector<Document> documents;
    Document document;
    while (reader.next(document)) documents.push_back(std::move(document));
    std::vector<const Document*> pointers;
    for (const Document& d : documents) pointers.push_back(&d);
    const SplitLengths lengths = measure_split(pointers, tokenizer);
    stats["splits"][split] = lengths.to_json();
    all.merge(lengths);
  }
  stats["all"] = all.to_json();
  write_file_atomic(stats_path, stats.dump(2) + "\n");
  return stats;
}

}  // namespace strata
