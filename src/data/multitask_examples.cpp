#include "strata/data/multitask_examples.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"

namespace strata {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::vector<SuiteTask> read_suite_tasks(const fs::path& suite_dir, const std::vector<std::string>& names) {
  const fs::path file = suite_dir / "tasks.json";
  if (!fs::exists(file))
    throw Error(file.string() + ": no such file (a suite directory from `strata data debian` or `strata data glue`)");
  nlohmann::ordered_json json;  // the file's order is the tasks' order
  try {
    json = nlohmann::ordered_json::parse(read_file(file));
  } catch (const Json::exception& e) {
    throw error_at(file, 0, "", std::string("invalid JSON: ") + e.what());
  }
  if (!json.is_object() || json.empty()) throw error_at(file, 0, "", "expected an object of tasks");
  std::vector<SuiteTask> all;
  for (const auto& [name, entry] : json.items()) {
    // Named captures: clang before 16 cannot capture structured bindings (make fuzz builds with it).
    const auto field = [&, &name = name, &entry = entry](const char* key) -> const nlohmann::ordered_json& {
      if (!entry.is_object() || !entry.contains(key)) throw error_at(file, 0, name + "." + key, "missing");
      return entry.at(key);
    };
    SuiteTask task;
    task.name = name;
    const auto& kind = field("kind");
    if (kind != "classification" && kind != "regression")
      throw error_at(file, 0, name + ".kind", "expected classification or regression, got " + kind.dump());
    task.regression = kind == "regression";
    if (!field("pair").is_boolean()) throw error_at(file, 0, name + ".pair", "expected true or false");
    task.pair = entry.at("pair").get<bool>();
    if (!task.regression) {
      const auto& labels = field("labels");
      if (!labels.is_array() || labels.size() < 2)
        throw error_at(file, 0, name + ".labels", "expected a list of at least 2 classes");
      for (const auto& label : labels) {
        if (!label.is_string()) throw error_at(file, 0, name + ".labels", "expected strings");
        task.labels.push_back(label.get<std::string>());
      }
    }
    task.metric = task.regression ? "pearson" : "accuracy";
    if (entry.contains("metric")) {
      const auto& metric = entry.at("metric");
      const bool known = metric.is_string() && (task.regression ? (metric == "pearson" || metric == "spearman")
                                                                : (metric == "accuracy" || metric == "macro_f1" ||
                                                                   metric == "f1" || metric == "mcc"));
      if (!known)
        throw error_at(file, 0, name + ".metric",
                       metric.dump() + (task.regression ? " is not a regression metric (pearson, spearman)"
                                                        : " is not a classification metric (accuracy, macro_f1, f1, mcc)"));
      task.metric = metric.get<std::string>();
    }
    if (entry.contains("transfer")) {
      if (!entry.at("transfer").is_boolean()) throw error_at(file, 0, name + ".transfer", "expected true or false");
      task.transfer = entry.at("transfer").get<bool>();
    }
    all.push_back(std::move(task));
  }
  if (names.empty()) {
    std::erase_if(all, [](const SuiteTask& t) { return t.transfer; });
    return all;
  }
  std::vector<SuiteTask> chosen;
  for (const std::string& name : names) {
    const auto found = std::find_if(all.begin(), all.end(), [&](const SuiteTask& t) { return t.name == name; });
    if (found == all.end()) {
      std::string known;
      for (const SuiteTask& t : all) known += (known.empty() ? "" : ", ") + t.name;
      throw Error(file.string() + ": no task '" + name + "' (known: " + known + ")");
    }
    chosen.push_back(*found);
  }
  return chosen;
}

namespace {

// [CLS] a [SEP] (b [SEP]) within max_tokens: the longer text loses its last token until it fits.
std::vector<std::int32_t> frame(std::vector<std::int32_t> a, std::vector<std::int32_t> b, bool pair,
                                std::int32_t cls, std::int32_t sep, std::size_t max_tokens) {
  const std::size_t specials = pair ? 3 : 2;
  const std::size_t room = max_tokens > specials ? max_tokens - specials : 0;
  while (a.size() + b.size() > room) (a.size() >= b.size() ? a : b).pop_back();
  std::vector<std::int32_t> ids{cls};
  ids.insert(ids.end(), a.begin(), a.end());
  ids.push_back(sep);
  if (pair) {
    ids.insert(ids.end(), b.begin(), b.end());
    ids.push_back(sep);
  }
  return ids;
}

}  // namespace

std::vector<MultitaskExample> load_multitask_examples(const fs::path& suite_dir, const std::string& split,
                                                      const std::vector<SuiteTask>& tasks, const Tokenizer& tokenizer,
                                                      std::size_t max_tokens) {
  const auto cls = tokenizer.bos_id();
  const auto sep = tokenizer.sep_id() ? tokenizer.sep_id() : tokenizer.eos_id();
  if (!cls || !sep)
    throw Error("multi-task examples: [CLS] is the tokenizer's bos token and [SEP] its sep (or eos); this " +
                std::string(tokenizer.kind()) + " tokenizer lacks one");
  if (max_tokens < 4) throw Error("multi-task examples: max_tokens must be at least 4");
  std::vector<MultitaskExample> examples;
  for (std::size_t t = 0; t < tasks.size(); ++t) {
    const SuiteTask& task = tasks[t];
    const fs::path file = suite_dir / "tasks" / task.name / (split + ".jsonl");
    if (!fs::exists(file)) continue;
    JsonlReader reader(file);
    Json line;
    while (reader.next(line)) {
      MultitaskExample example;
      example.task = t;
      const std::string text = reader.string_field(line, "text");
      const std::string text_b = task.pair ? reader.string_field(line, "text_b") : std::string();
      example.ids = frame(tokenizer.encode(text), tokenizer.encode(text_b), task.pair, *cls, *sep, max_tokens);
      if (!line.contains("label")) throw reader.error("label", "missing");
      const Json& label = line.at("label");
      if (task.regression) {
        if (!label.is_number()) throw reader.error("label", "expected a number (a regression task), got " + label.dump());
        example.value = label.get<double>();
      } else {
        const auto found = label.is_string()
                               ? std::find(task.labels.begin(), task.labels.end(), label.get<std::string>())
                               : task.labels.end();
        if (found == task.labels.end())
          throw reader.error("label", label.dump() + " is not one of task " + task.name + "'s " +
                                          std::to_string(task.labels.size()) + " labels in tasks.json");
        example.label = found - task.labels.begin();
      }
      examples.push_back(std::move(example));
    }
  }
  return examples;
}

}  // namespace strata
