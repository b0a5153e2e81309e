#include "strata/data/description_corpus.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"
#include "strata/core/progress.h"
#include "strata/data/corpus_stats.h"
#include "strata/data/installed_tasks.h"
#include "strata/data/manpage_corpus.h"
#include "strata/doc/dataset.h"
#include "strata/doc/plain_text.h"

namespace strata {

namespace fs = std::filesystem;

namespace {


struct Example {
  const DebianPackage* package = nullptr;
  std::string split;
  Document document;
};

// The Table 2.1 columns beside the length percentiles: sources, mean words, compression.
template <class ExamplePointer>
void add_table_columns(nlohmann::json& entry, const std::vector<ExamplePointer>& examples) {
  std::set<std::string_view> sources;
  double document_words = 0, summary_words = 0;
  for (const Example* e : examples) {
    sources.insert(e->package->source);
    document_words += static_cast<double>(count_words(e->document.text));
    summary_words += static_cast<double>(count_words(e->document.summary));
  }
  const double n = static_cast<double>(examples.size());
  entry["sources"] = sources.size();
  entry["document_words_mean"] = examples.empty() ? 0.0 : document_words / n;
  entry["summary_words_mean"] = examples.empty() ? 0.0 : summary_words / n;
  entry["compression_ratio"] = summary_words == 0 ? 0.0 : document_words / summary_words;
}

// Groups of source names, each named by its first name (the smallest): a union-find whose
// roots are always the smaller name, so the result does not depend on the order of links.
class SourceGroups {
 public:
  void link(std::string_view a, std::string_view b) {
    a = first_of(a);
    b = first_of(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent_[b] = a;
  }
  std::string_view first_of(std::string_view name) {
    for (auto it = parent_.find(name); it != parent_.end(); it = parent_.find(name)) name = it->second;
    return name;
  }

 private:
  std::unordered_map<std::string_view, std::string_view> parent_;  // views into the packages
};

nlohmann::json native_line(const Example& example) {
  nlohmann::json line = to_native_json(example.document);
  line["package"] = example.package->name;
  line["source"] = example.package->source;
  line["section"] = example.package->section;
  line["description_md5"] = example.package->description_md5;
  return line;
}

}  // namespace

PageSources sources_of_pages(const std::vector<fs::path>& page_sets, const fs::path& root,
                             const std::vector<DebianPackage>& packages) {
  std::vector<std::string> paths;
  for (const fs::path& set : page_sets) {
    JsonlReader reader(set);
    for (nlohmann::json line; reader.next(line);) paths.push_back(reader.string_field(line, "source"));
  }
  std::unordered_map<std::string_view, std::string_view> source_of;
  for (const DebianPackage& p : packages) source_of.emplace(p.name, p.source);
  PageSources result;
  result.pages = paths.size();
  const std::map<std::string, std::string> owners = dpkg_owners(root, paths);
  for (const std::string& path : paths) {
    const auto owner = owners.find(path);
    if (owner == owners.end()) {
      ++result.unowned;
      continue;
    }
    const auto source = source_of.find(owner->second);
    result.sources.emplace(source == source_of.end() ? owner->second : source->second);
  }
  return result;
}

nlohmann::json build_description_corpus(const std::vector<DebianPackage>& packages,
                                        const DescriptionCorpusOptions& options, const fs::path& out_dir) {
  // By name (stable: two stanzas of one name keep their file order), so which of the packages
  // sharing a description gives the example does not depend on the index's order.
  std::vector<const DebianPackage*> by_name;
  by_name.reserve(packages.size());
  for (const DebianPackage& p : packages) by_name.push_back(&p);
  std::stable_sort(by_name.begin(), by_name.end(),
                   [](const DebianPackage* a, const DebianPackage* b) { return a->name < b->name; });

  std::map<std::string, std::size_t> skipped{{"no_description", 0},  {"duplicate_description", 0},
                                             {"duplicate_package", 0}, {"short_document", 0},
                                             {"short_summary", 0},  {"held_out", 0}};
  std::unordered_set<std::string> seen_descriptions, seen_names;
  std::vector<const DebianPackage*> kept;
  for (const DebianPackage* p : by_name) {
    if (p->short_description.empty() || p->long_description.empty()) {
      ++skipped["no_description"];
      continue;
    }
    // Without an md5 (an index carrying its own Description), the descriptions themselves.
    const std::string key = p->description_md5.empty()
                                ? "text:" + p->short_description + "\n" + p->long_description
                                : "md5:" + p->description_md5;
    if (!seen_descriptions.insert(key).second) {
      ++skipped["duplicate_description"];
      continue;
    }
    if (!seen_names.insert(p->name).second) {
      ++skipped["duplicate_package"];
      continue;
    }
    kept.push_back(p);
  }

  std::vector<Example> examples(kept.size());
  Progress progress("package descriptions", kept.size(), "packages", options.quiet);
#pragma omp parallel for schedule(dynamic, 64)
  for (std::size_t i = 0; i < kept.size(); ++i) {
    Example& e = examples[i];
    e.package = kept[i];
    e.document = parse_plain_text(kept[i]->long_description);
    e.document.id = kept[i]->name;
    e.document.title = kept[i]->name;
    e.document.summary = kept[i]->short_description;
    progress.add();
  }
  progress.finish();

  std::vector<Example*> all_examples;
  for (Example& e : examples) {
    if (count_words(e.document.text) < options.min_document_words) {
      ++skipped["short_document"];
      continue;
    }
    if (count_words(e.document.summary) < options.min_summary_words) {
      ++skipped["short_summary"];
      continue;
    }
    all_examples.push_back(&e);
  }

  // Sources whose packages share a document (gcc-12 and gcc-12-cross ship the same long
  // description under other short ones) are linked, and the split follows the first name of
  // their group: a document text lies in one split only.
  SourceGroups groups;
  std::unordered_map<std::string_view, std::string_view> source_of_text;
  for (const Example* e : all_examples) {
    const auto [hit, added] = source_of_text.emplace(e->document.text, e->package->source);
    if (!added) groups.link(hit->second, e->package->source);
  }
  std::set<std::string_view> held_out_groups;
  for (const std::string& source : options.held_out_sources) held_out_groups.insert(groups.first_of(source));
  std::map<std::string, std::vector<const Example*>> by_split;
  std::set<std::string_view> linked_sources;
  std::vector<Example*> kept_examples;
  for (Example* e : all_examples) {
    const std::string_view key = groups.first_of(e->package->source);
    if (held_out_groups.contains(key)) {
      ++skipped["held_out"];
      continue;
    }
    kept_examples.push_back(e);
    if (key != e->package->source) {
      linked_sources.insert(e->package->source);
      linked_sources.insert(key);
    }
    e->split = split_of(key, options.validation_percent, options.test_percent);
    by_split[e->split].push_back(e);
  }
  all_examples = std::move(kept_examples);
  if (all_examples.empty())
    throw Error("data descriptions: no package of " + std::to_string(packages.size()) +
                " has a long description of at least " + std::to_string(options.min_document_words) +
                " words and a short one of at least " + std::to_string(options.min_summary_words) +
                (options.held_out_sources.empty() ? std::string() : " outside the held-out sources") +
                (options.origin.empty() ? std::string() : " (read from " + options.origin + ")"));

  std::set<std::string_view> sources;
  for (const DebianPackage& p : packages) sources.insert(p.source);
  nlohmann::json stats;
  stats["command"] = "descriptions";
  stats["origin"] = options.origin;
  stats["packages"] = packages.size();
  stats["sources"] = sources.size();
  stats["skipped"] = skipped;
  stats["held_out_sources"] = options.held_out_sources.size();
  stats["sources_linked_by_shared_documents"] = linked_sources.size();
  stats["min_document_words"] = options.min_document_words;
  stats["min_summary_words"] = options.min_summary_words;
  stats["validation_percent"] = options.validation_percent;
  stats["test_percent"] = options.test_percent;

  fs::create_directories(out_dir);
  std::vector<std::unique_ptr<AtomicFile>> files;  // committed together, once all are written
  SplitLengths all;
  for (const char* split : kSplitNames) {
    files.push_back(std::make_unique<AtomicFile>(out_dir / (std::string(split) + ".jsonl")));
    std::vector<const Document*> documents;
    for (const Example* e : by_split[split]) {
      files.back()->stream() << native_line(*e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                             << '\n';
      documents.push_back(&e->document);
    }
    const SplitLengths lengths = measure_split(documents, nullptr);
    nlohmann::json entry = lengths.to_json();
    add_table_columns(entry, by_split[split]);
    stats["splits"][split] = std::move(entry);
    all.merge(lengths);
  }
  nlohmann::json entry = all.to_json();
  add_table_columns(entry, all_examples);
  stats["all"] = std::move(entry);
  for (auto& file : files) file->commit();
  write_file_atomic(out_dir / "stats.json", stats.dump(2) + "\n");
  return stats;
}

}  // namespace strata
