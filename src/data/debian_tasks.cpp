#include "strata/data/debian_tasks.h"

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_set>

#include "strata/core/files.h"
#include "strata/core/split_mix64.h"
#include "strata/core/strings.h"
#include "strata/data/corpus_stats.h"
#include "strata/data/description_corpus.h"
#include "strata/data/installed_tasks.h"
#include "strata/data/manpage_corpus.h"
#include "strata/doc/sentence_splitter.h"

namespace strata {

namespace {

using OrderedJson = nlohmann::ordered_json;
const char* const kFacets[] = {"role", "implemented-in", "interface", "use", "works-with", "scope"};

struct Usable {
  const DebianPackage* package;
  std::string split;
};

struct Example {
  std::string split;
  std::string label;  // classification only: for counting and dropping rare classes
  OrderedJson line;
};

struct Task {
  Task(std::string task_name, std::string task_kind, bool pair_task)
      : name(std::move(task_name)), kind(std::move(task_kind)), pair(pair_task) {}
  std::string name, kind;  // kind: "classification" or "regression"
  bool pair;               // examples have text_b
  bool transfer = false;   // held out from multi-task training (tasks.json "transfer")
  std::vector<Example> examples;
};

// How a task is scored, as GLUE scores its analogues: the match pairs by the F1 of "match"
// (MRPC), acceptability by MCC (CoLA), the skewed priorities and man sections by macro-F1
// (accuracy would reward always saying "optional", or "1": 82 % of man pages), the Jaccard
// regression by Pearson (STS-B), the rest by accuracy.
std::string metric_of(const Task& task) {
  if (task.name == "match") return "f1";
  if (task.name == "acceptable") return "mcc";
  if (task.name == "priority" || task.name == "man-section") return "macro_f1";
  return task.kind == "regression" ? "pearson" : "accuracy";
}

OrderedJson example_line(const std::string& id, const std::string& task, const std::string& text) {
  return OrderedJson{{"id", id}, {"task", task}, {"text", text}};
}

// One classification example a package, from its long description.
Task single_label_task(const std::string& name, const std::vector<Usable>& usable,
                       const std::function<std::string(const DebianPackage&)>& label_of) {
  Task task(name, "classification", false);
  for (const Usable& u : usable) {
    const std::string label = label_of(*u.package);
    if (label.empty()) continue;
    OrderedJson line = example_line(u.package->name, name, u.package->long_description);
    line["label"] = label;
    task.examples.push_back({u.split, label, std::move(line)});
  }
  return task;
}

// The package's one tag in `facet` ("" when it has none or several).
std::string only_tag(const DebianPackage& p, const std::string& facet) {
  std::string found;
  for (const std::string& tag : p.tags) {
    if (tag.rfind(facet + "::", 0) != 0) continue;
    if (!found.empty()) return "";
    found = tag.substr(facet.size() + 2);
  }
  return found;
}

// Another member of `group` than `self`, or null when it has no other.
const Usable* other_in(const std::vector<const Usable*>& group, const Usable* self, SplitMix64& rng) {
  if (group.size() < 2) return nullptr;
  for (;;) {
    const Usable* pick = group[rng.below(group.size())];
    if (pick != self) return pick;
  }
}

Task match_task(const std::vector<Usable>& usable, std::uint64_t seed) {
  std::map<std::pair<std::string, std::string>, std::vector<const Usable*>> by_section;
  for (const Usable& u : usable) by_section[{u.split, u.package->section}].push_back(&u);
  Task task("match", "classification", true);
  for (const Usable& u : usable) {
    if (u.package->short_description.empty()) continue;
    SplitMix64 rng({seed, stable_hash(u.package->name), 1});
    const Usable* negative = rng.below(2) == 0 ? other_in(by_section[{u.split, u.package->section}], &u, rng) : nullptr;
    OrderedJson line = example_line(u.package->name, task.name, u.package->short_description);
    line["text_b"] = negative ? negative->package->long_description : u.package->long_description;
    const std::string label = negative ? "mismatch" : "match";
    line["label"] = label;
    task.examples.push_back({u.split, label, std::move(line)});
  }
  return task;
}

double jaccard(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const std::set<std::string> x(a.begin(), a.end()), y(b.begin(), b.end());
  std::size_t both = 0;
  for (const std::string& t : x) both += y.count(t);
  return static_cast<double>(both) / static_cast<double>(x.size() + y.size() - both);
}

Task jaccard_task(const std::vector<Usable>& usable, std::uint64_t seed) {
  std::map<std::string, std::vector<const Usable*>> by_split;
  std::map<std::pair<std::string, std::string>, std::vector<const Usable*>> by_section;
  for (const Usable& u : usable) {
    if (u.package->tags.empty()) continue;
    by_split[u.split].push_back(&u);
    by_section[{u.split, u.package->section}].push_back(&u);
  }
  Task task("jaccard", "regression", true);
  for (const Usable& u : usable) {
    if (u.package->tags.empty()) continue;
    SplitMix64 rng({seed, stable_hash(u.package->name), 2});
    const Usable* partner = rng.below(2) == 0 ? other_in(by_section[{u.split, u.package->section}], &u, rng) : nullptr;
    if (partner == nullptr) partner = other_in(by_split[u.split], &u, rng);
    if (partner == nullptr) continue;
    OrderedJson line = example_line(u.package->name + "/" + partner->package->name, task.name, u.package->long_description);
    line["text_b"] = partner->package->long_description;
    line["label"] = std::round(jaccard(u.package->tags, partner->package->tags) * 1e4) / 1e4;
    task.examples.push_back({u.split, "", std::move(line)});
  }
  return task;
}

Task acceptable_task(const std::vector<Usable>& usable, std::uint64_t seed) {
  Task task("acceptable", "classification", false);
  for (const Usable& u : usable) {
    const std::string& text = u.package->long_description;
    const std::vector<Span> sentences = split_sentences(text);
    if (sentences.empty()) continue;
    std::vector<std::string_view> words = split_words(std::string_view(text).substr(sentences[0].begin, sentences[0].size()));
    if (words.size() < 6) continue;
    SplitMix64 rng({seed, stable_hash(u.package->name), 3});
    const bool shuffle = rng.below(2) == 0;
    if (shuffle) {
      const std::vector<std::string_view> original = words;
      for (std::size_t i = words.size() - 1; i > 0; --i) std::swap(words[i], words[rng.below(i + 1)]);
      if (words == original) std::swap(words[0], words[1]);  // a shuffle that changed nothing
    }
    std::string sentence;
    for (std::string_view w : words) {
      if (!sentence.empty()) sentence += ' ';
      sentence += w;
    }
    OrderedJson line = example_line(u.package->name, task.name, sentence);
    const std::string label = shuffle ? "shuffled" : "real";
    line["label"] = label;
    task.examples.push_back({u.split, label, std::move(line)});
  }
  return task;
}

// A task of examples made from the installed files.
Task installed_task(const std::string& name, const std::vector<InstalledExample>& examples) {
  Task task(name, "classification", false);
  for (const InstalledExample& e : examples) {
    OrderedJson line = example_line(e.id, name, e.text);
    line["label"] = e.label;
    task.examples.push_back({e.split, e.label, std::move(line)});
  }
  return task;
}

// Drops the classes with fewer than `minimum` training examples; returns them, rarest first.
std::vector<std::string> drop_rare_classes(Task& task, std::size_t minimum) {
  std::map<std::string, std::size_t> train_counts;
  for (const Example& e : task.examples)
    if (e.split == "train") ++train_counts[e.label];
  std::set<std::string> rare;
  for (const Example& e : task.examples)
    if (train_counts[e.label] < minimum) rare.insert(e.label);
  std::erase_if(task.examples, [&](const Example& e) { return rare.count(e.label) > 0; });
  return {rare.begin(), rare.end()};
}

}  // namespace

nlohmann::json build_debian_suite(const std::vector<DebianPackage>& packages, const DebianSuiteOptions& options) {
  namespace fs = std::filesystem;
  // The packages whose long description is long enough and not seen before.
  std::vector<Usable> usable;
  std::unordered_set<std::string> seen;
  std::size_t too_short = 0, duplicates = 0;
  for (const DebianPackage& p : packages) {
    if (count_words(p.long_description) < options.min_description_words) {
      ++too_short;
      continue;
    }
    if (!seen.insert(p.description_md5.empty() ? p.long_description : p.description_md5).second) {
      ++duplicates;
      continue;
    }
    usable.push_back({&p, split_of(p.source, 5, 5)});
  }

  std::vector<Task> tasks;
  tasks.push_back(single_label_task("section", usable, [](const DebianPackage& p) { return p.section; }));
  tasks.push_back(single_label_task("priority", usable, [](const DebianPackage& p) { return p.priority; }));
  for (const char* facet : kFacets)
    tasks.push_back(single_label_task(std::string("tag-") + facet, usable,
                                      [facet](const DebianPackage& p) { return only_tag(p, facet); }));
  tasks.push_back(match_task(usable, options.seed));
  tasks.push_back(jaccard_task(usable, options.seed));
  tasks.push_back(acceptable_task(usable, options.seed));
  if (!options.installed_root.empty()) {
    std::map<std::string, std::string> sections, sources;
    for (const DebianPackage& p : packages) {
      sections[p.name] = p.section;
      sources[p.name] = p.source;
    }
    tasks.push_back(installed_task("man-section", man_section_examples(options.installed_root, options.installed_words)));
    tasks.push_back(installed_task("header-section",
                                   header_section_examples(options.installed_root, sections, sources,
                                                           options.installed_words, options.headers_per_package)));
    tasks.back().transfer = true;
  }

  OrderedJson described = OrderedJson::object();
  for (Task& task : tasks) {
    const std::vector<std::string> dropped =
        task.kind == "classification" ? drop_rare_classes(task, options.min_class_examples) : std::vector<std::string>{};
    std::map<std::string, std::string> text;
    std::map<std::string, std::size_t> counts;
    std::set<std::string> labels;
    for (const Example& e : task.examples) {
      text[e.split] += e.line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
      ++counts[e.split];
      if (task.kind == "classification") labels.insert(e.label);
    }
    // A machine with few man pages or headers may leave an installed task without two classes.
    if (task.kind == "classification" && labels.size() < 2) continue;
    for (const char* split : kSplitNames) write_file_atomic(options.out_dir / "tasks" / task.name / (std::string(split) + ".jsonl"), text[split]);
    OrderedJson entry{{"kind", task.kind}, {"pair", task.pair}, {"metric", metric_of(task)}};
    if (task.kind == "classification") entry["labels"] = std::vector<std::string>(labels.begin(), labels.end());
    entry["examples"] = OrderedJson{{"train", counts["train"]}, {"validation", counts["validation"]}, {"test", counts["test"]}};
    if (!dropped.empty()) entry["dropped_classes"] = dropped;
    if (task.transfer) entry["transfer"] = true;
    described[task.name] = entry;
  }
  write_file_atomic(options.out_dir / "tasks.json", described.dump(2) + "\n");

  // The summarisation corpus of the same packages (data/description_corpus.h).
  DescriptionCorpusOptions corpus;
  corpus.min_document_words = options.min_description_words;
  corpus.quiet = true;
  const OrderedJson summaries = build_description_corpus(packages, corpus, options.out_dir / "summaries");

  OrderedJson stats{{"command", "debian"},
             {"packages", packages.size()},
             {"used", usable.size()},
             {"skipped", OrderedJson{{"description_under_min_words", too_short}, {"duplicate_description", duplicates}}},
             {"tasks", described},
             {"summaries", OrderedJson{{"train", summaries["splits"]["train"]["documents"]},
                                {"validation", summaries["splits"]["validation"]["documents"]},
                                {"test", summaries["splits"]["test"]["documents"]}}}};
  write_file_atomic(options.out_dir / "stats.json", stats.dump(2) + "\n");
  return stats;
}

}  // namespace strata
