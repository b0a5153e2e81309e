// Runs the built `strata doc show` on fixture files and checks its output and exit codes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace {

const std::filesystem::path kDocData = std::filesystem::path(STRATA_FIXTURES_DIR) / "doc";

// Appended piecewise: GCC 12 gives a false -Wrestrict on "'" + string + "'".
std::string shell_quoted(const std::filesystem::path& path) {
  std::string out;
  out += '\'';
  out += path.string();
  out += '\'';
  return out;
}

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Result run(const std::string& args, bool with_stderr = true) {
  std::string command = shell_quoted(STRATA_BINARY);
  command += ' ';
  command += args;
  command += with_stderr ? " 2>&1" : " 2>/dev/null";
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(CliDocShow, PrintsTheSectionTree) {
  const Result r = run("doc show " + shell_quoted(kDocData / "guide.md"));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(r.output.rfind("Guide Title\nid: guide.md\n", 0), 0u) << r.output;
  EXPECT_NE(r.output.find("\n  Guide Title  [level 1]  1 paragraph, 2 sentences\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n    Install  [level 2]  1 paragraph, 2 sentences\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n      Deep Note  [level 3]  1 paragraph, 1 sentence\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\n    Sub Setext  [level 2]  8 paragraphs, "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\ntotal: 5 sections, 12 paragraphs, "), std::string::npos) << r.output;
}

TEST(CliDocShow, JsonStructure) {
  const Result r = run("doc show --json " + shell_quoted(kDocData / "widget.7"), false);
  ASSERT_EQ(r.status, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["title"], "widget(7)");
  EXPECT_EQ(j["id"], "widget.7");
  EXPECT_EQ(j["counts"]["sections"], 12);
  ASSERT_EQ(j["sections"].size(), 10u);
  const nlohmann::json& name = j["sections"][0];
  EXPECT_EQ(name["heading"], "NAME");
  EXPECT_EQ(name["level"], 1);
  // The NAME paragraph is the first text of the document.
  const std::string line = "widget - exercise the roff parser";
  EXPECT_EQ(name["paragraphs"][0]["span"], nlohmann::json::array({0, line.size()}));
  EXPECT_EQ(name["paragraphs"][0]["sentences"], nlohmann::json::parse("[[0, " + std::to_string(line.size()) + "]]"));
  const nlohmann::json& description = j["sections"][2];
  EXPECT_EQ(description["children"][0]["heading"], "Options");
  EXPECT_EQ(description["children"][0]["level"], 2);
  EXPECT_EQ(description["paragraphs"][0]["sentences"].size(), 2u);
}

TEST(CliDocShow, FormatAndIndexOptions) {
  const Result plain = run("doc show --format plain --json " + shell_quoted(kDocData / "guide.md"), false);
  ASSERT_EQ(plain.status, 0) << plain.output;
  EXPECT_EQ(nlohmann::json::parse(plain.output)["counts"]["sections"], 0);

  const Result second = run("doc show --index 1 --json " + shell_quoted(kDocData / "tiny.jsonl"), false);
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_EQ(nlohmann::json::parse(second.output)["counts"]["paragraphs"], 2);

  const Result out_of_range = run("doc show --index 5 " + shell_quoted(kDocData / "tiny.jsonl"));
  EXPECT_EQ(out_of_range.status, 1);
  EXPECT_NE(out_of_range.output.find("out of range"), std::string::npos) << out_of_range.output;

  const Result bad_format = run("doc show --format pdf " + shell_quoted(kDocData / "guide.md"));
  EXPECT_NE(bad_format.status, 0);
  EXPECT_NE(bad_format.output.find("auto, markdown, man, plain, jsonl"), std::string::npos) << bad_format.output;
}

TEST(CliDocShow, MissingFileFailsNamingIt) {
  const Result r = run("doc show " + shell_quoted(kDocData / "does-not-exist.md"));
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.output.find("does-not-exist.md"), std::string::npos) << r.output;
}

TEST(CliDocShow, HelpExplainsTheCommand) {
  const Result doc = run("doc --help");
  EXPECT_EQ(doc.status, 0);
  EXPECT_NE(doc.output.find("show"), std::string::npos) << doc.output;
  const Result show = run("doc show --help");
  EXPECT_EQ(show.status, 0);
  for (const char* word : {"--format", "--index", "--json", "section tree", "FILE"})
    EXPECT_NE(show.output.find(word), std::string::npos) << word << "\n" << show.output;
}

}  // namespace
