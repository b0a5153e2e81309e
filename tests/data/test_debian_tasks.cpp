// The Debian multi-task suite built from hand-made packages: splits by source, deduplication,
// hard negatives, Jaccard labels, shuffled sentences, rare classes dropped.
#include "strata/data/debian_tasks.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "strata/core/files.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

std::vector<nlohmann::json> lines_of(const fs::path& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::multiset<std::string> words(const std::string& text) {
  std::multiset<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.insert(w);
  return out;
}

class DebianTasks : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() / ("strata_debian_tasks_" + std::to_string(::getpid()));
    const char* sections[] = {"utils", "libs", "games"};
    const char* roles[] = {"program", "shared-lib", "app-data"};
    for (int i = 0; i < 300; ++i) {
      DebianPackage p;
      p.name = "pkg" + std::to_string(i);
      p.source = "src" + std::to_string(i / 3);  // three packages a source
      p.section = sections[i % 3];
      // "required": one example, dropped as rare; "standard" and "optional" stay.
      p.priority = i == 7 ? "required" : i % 10 == 0 ? "standard" : "optional";
      p.tags = {std::string("role::") + roles[i % 3], "use::" + std::to_string(i % 5)};
      if (i % 4 == 0) p.tags.push_back("role::devel-lib");  // two roles: no tag-role example
      p.description_md5 = "md5-" + std::to_string(i);
      p.short_description = "short description number " + std::to_string(i);
      p.long_description = "Package " + std::to_string(i) + " does useful things for its users every day. It has more.";
      packages_.push_back(p);
    }
    packages_[299].description_md5 = packages_[0].description_md5;  // a duplicate description: skipped
    packages_[298].long_description = "too short";                  // under the word minimum: skipped
    options_.out_dir = out_;
    options_.min_class_examples = 5;
  }
  void TearDown() override { fs::remove_all(out_); }

  std::vector<nlohmann::json> all(const std::string& task) {
    std::vector<nlohmann::json> out;
    for (const char* split : {"train", "validation", "test"})
      for (nlohmann::json& j : lines_of(out_ / "tasks" / task / (std::string(split) + ".jsonl"))) {
        j["split"] = split;
        out.push_back(j);
      }
    return out;
  }

  fs::path out_;
  std::vector<DebianPackage> packages_;
  DebianSuiteOptions options_;
};

TEST_F(DebianTasks, WritesEveryTaskSplitBySourceWithDuplicatesSkipped) {
  const nlohmann::json stats = build_debian_suite(packages_, options_);
  EXPECT_EQ(stats["packages"], 300);
  EXPECT_EQ(stats["used"], 298);
  EXPECT_EQ(stats["skipped"]["duplicate_description"], 1);
  EXPECT_EQ(stats["skipped"]["description_under_min_words"], 1);
  const nlohmann::json tasks = nlohmann::json::parse(read_file(out_ / "tasks.json"));
  for (const char* name : {"section", "priority", "tag-role", "tag-use", "match", "jaccard", "acceptable"})
    EXPECT_TRUE(tasks.contains(name)) << name;
  EXPECT_EQ(tasks["section"]["labels"], (nlohmann::json{"games", "libs", "utils"}));
  EXPECT_EQ(tasks["priority"]["dropped_classes"], (nlohmann::json{"required"}));
  EXPECT_EQ(tasks["jaccard"]["kind"], "regression");
  EXPECT_EQ(tasks["priority"]["metric"], "macro_f1");
  EXPECT_EQ(tasks["jaccard"]["metric"], "pearson");
  EXPECT_EQ(tasks["section"]["metric"], "accuracy");
  EXPECT_TRUE(tasks["match"]["pair"].get<bool>());

  // Every package of a source in one split, in every task.
  std::map<std::string, std::string> split_of_source;
  const std::vector<nlohmann::json> sections = all("section");
  EXPECT_EQ(sections.size(), 298u);
  for (const nlohmann::json& e : sections) {
    const int i = std::stoi(e["id"].get<std::string>().substr(3));
    const std::string source = "src" + std::to_string(i / 3);
    const auto [it, fresh] = split_of_source.emplace(source, e["split"]);
    EXPECT_EQ(it->second, e["split"]) << source;
    EXPECT_EQ(e["task"], "section");
    EXPECT_EQ(e["label"], packages_[i].section);
  }
  std::set<std::string> splits;
  for (const auto& [source, split] : split_of_source) splits.insert(split);
  EXPECT_EQ(splits.size(), 3u);  // 100 sources spread over all three

  // tag-role: only packages with exactly one role tag.
  for (const nlohmann::json& e : all("tag-role")) EXPECT_NE(std::stoi(e["id"].get<std::string>().substr(3)) % 4, 0);

  // The summarisation corpus is the description corpus of the same packages.
  const std::vector<nlohmann::json> summaries = lines_of(out_ / "summaries" / "train.jsonl");
  ASSERT_FALSE(summaries.empty());
  EXPECT_TRUE(summaries[0].contains("paragraphs"));
  EXPECT_TRUE(summaries[0].contains("summary"));
  EXPECT_TRUE(std::filesystem::exists(out_ / "summaries" / "stats.json"));
}

TEST_F(DebianTasks, PairsAndShufflesAreWhatTheirLabelsSay) {
  (void)build_debian_suite(packages_, options_);
  std::map<std::string, const DebianPackage*> by_name;
  std::map<std::string, const DebianPackage*> by_long;
  for (const DebianPackage& p : packages_) {
    by_name[p.name] = &p;
    by_long[p.long_description] = &p;
  }
  std::size_t mismatches = 0;
  for (const nlohmann::json& e : all("match")) {
    const DebianPackage& own = *by_name[e["id"]];
    const DebianPackage& other = *by_long[e["text_b"]];
    EXPECT_EQ(e["text"], own.short_description);
    if (e["label"] == "match") {
      EXPECT_EQ(other.name, own.name);
    } else {
      ++mismatches;
      EXPECT_NE(other.name, own.name);
      EXPECT_EQ(other.section, own.section);  // a hard negative
    }
  }
  EXPECT_GT(mismatches, 50u);
  for (const nlohmann::json& e : all("jaccard")) {
    const std::string id = e["id"];
    const DebianPackage& a = *by_name[id.substr(0, id.find('/'))];
    const DebianPackage& b = *by_name[id.substr(id.find('/') + 1)];
    const std::set<std::string> x(a.tags.begin(), a.tags.end()), y(b.tags.begin(), b.tags.end());
    std::size_t both = 0;
    for (const std::string& t : x) both += y.count(t);
    EXPECT_NEAR(e["label"].get<double>(), static_cast<double>(both) / (x.size() + y.size() - both), 1e-4) << id;
    EXPECT_NE(a.name, b.name);
  }
  std::size_t shuffled = 0;
  for (const nlohmann::json& e : all("acceptable")) {
    const std::string real = "Package " + e["id"].get<std::string>().substr(3) + " does useful things for its users every day.";
    EXPECT_EQ(words(e["text"]), words(real));
    if (e["label"] == "shuffled") {
      ++shuffled;
      EXPECT_NE(e["text"], real);
    } else {
      EXPECT_EQ(e["text"], real);
    }
  }
  EXPECT_GT(shuffled, 50u);
}

TEST_F(DebianTasks, TheSameSeedGivesTheSameFiles) {
  (void)build_debian_suite(packages_, options_);
  const std::string first = read_file(out_ / "tasks" / "match" / "train.jsonl");
  (void)build_debian_suite(packages_, options_);
  EXPECT_EQ(read_file(out_ / "tasks" / "match" / "train.jsonl"), first);
  options_.seed = 2;
  (void)build_debian_suite(packages_, options_);
  EXPECT_NE(read_file(out_ / "tasks" / "match" / "train.jsonl"), first);
}

}  // namespace
}  // namespace strata
