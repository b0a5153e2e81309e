// `strata explore` as a user runs it: two tiny summarizers trained here (one with a window
// head, a same-section head and a HIBRIDS bias), served side by side; the JSON API checked
// against what the specs and the weights must satisfy, its errors, and then the page itself
// in headless Chromium (tests/explore/browser, installed by scripts/install-deps).
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/server_process.h"
#include "support/tiny_run.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::CliResult;
using test_support::ServerProcess;
using test_support::slurp;

const fs::path kBrowserDir = fs::path(STRATA_FIXTURES_DIR).parent_path() / "explore" / "browser";
const fs::path kPages = fs::path(STRATA_FIXTURES_DIR) / "doc";
constexpr int kWindow = 8;

class CliExplore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("strata_cli_explore_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ASSERT_EQ(test_support::write_tiny_run(dir_, {.seed = 9}).exit_code, 0);
    std::string config = slurp(dir_ / "tiny.toml");
    config.replace(config.find("max_positions = 128"), 19, "max_positions = 512");
    config.replace(config.find("[model]\n"), 8,
                   "[model]\nencoder_attention = '{\"heads\": [{\"mask\": \"window(" + std::to_string(kWindow) + "," +
                       std::to_string(kWindow) + ")\"}, {\"mask\": \"same_section\"}], \"bias\": {\"kind\": \"hibrids\", "
                       "\"max_path\": 4, \"max_level\": 2}}'\n");
    std::ofstream(dir_ / "structured.toml") << config;
    structured_ = run("train --quiet --config " + path("structured.toml") + " --out " + path("structured"));
    plain_ = run("train --quiet --config " + path("tiny.toml") + " --out " + path("plain"));
    heads_ = run("analyze heads --quiet --model " + path("structured") + " --data " + path("valid.jsonl"));
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static CliResult run(const std::string& args) { return test_support::run_strata(args, dir_); }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }

  static fs::path dir_;
  static CliResult structured_, plain_, heads_;
};
fs::path CliExplore::dir_;
CliResult CliExplore::structured_, CliExplore::plain_, CliExplore::heads_;

json get(httplib::Client& client, const std::string& target, int expected_status = 200) {
  const auto res = client.Get(target);
  EXPECT_TRUE(res) << target;
  if (!res) return json();
  EXPECT_EQ(res->status, expected_status) << target << ": " << res->body;
  return json::parse(res->body);
}

json post(httplib::Client& client, const json& body, int expected_status = 200) {
  const auto res = client.Post("/api/documents", body.dump(), "application/json");
  EXPECT_TRUE(res);
  if (!res) return json();
  EXPECT_EQ(res->status, expected_status) << res->body;
  return json::parse(res->body);
}

TEST_F(CliExplore, TheApiGivesEachHeadsWeightsMaskTilesAndBiasesOnAManPage) {
  ASSERT_EQ(structured_.exit_code, 0) << structured_.err;
  ASSERT_EQ(plain_.exit_code, 0) << plain_.err;
  fs::create_directories(dir_ / "api");
  ServerProcess server("--model " + path("structured") + " --compare " + path("plain") + " --port 0 --threads 1 --root " +
                           kPages.string() + " --max-tokens 300 --max-body-bytes 100000",
                       dir_ / "api", "explore");
  const int port = server.port();
  ASSERT_GT(port, 0) << server.err();
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);

  const json runs = get(client, "/api/runs");
  ASSERT_EQ(runs["runs"].size(), 2u) << runs.dump();
  EXPECT_EQ(runs["runs"][0]["id"], "a");
  EXPECT_EQ(runs["runs"][0]["layers"][0]["heads"], 2);
  EXPECT_EQ(runs["runs"][0]["layers"][0]["relation"], "hibrids(max_path=4, max_level=2)");
  EXPECT_TRUE(runs["runs"][1]["layers"][0]["relation"].is_null());

  // The page by path: its sections, and the tokens each run reads.
  const json doc = post(client, {{"path", "widget.7"}});
  ASSERT_TRUE(doc.contains("id")) << doc.dump();
  std::vector<std::string> headings;
  for (const json& section : doc["sections"]) headings.push_back(section["heading"]);
  EXPECT_NE(std::find(headings.begin(), headings.end(), "NAME"), headings.end()) << doc["sections"].dump();
  const json& a = doc["runs"]["a"];
  const std::int64_t n = a["tokens"].size();
  EXPECT_LE(n, 300);
  EXPECT_EQ(a["truncated"], a["document_tokens"].get<std::int64_t>() > n);
  EXPECT_EQ(a["section_ranges"][0], json({0, n}));
  EXPECT_EQ(doc["runs"]["b"]["tokens"].size(), 128u) << "run b's positions stop at 128";
  EXPECT_EQ(post(client, {{"path", (kPages / "widget.7").string()}})["id"], doc["id"]) << "the same document, the same id";

  // Exact weights of each head: rows are distributions over the keys the head may see, and
  // what it may see is its mask: window(8, 8) for head 0, the same section for head 1.
  const std::string id = doc["id"];
  for (int head = 0; head < 2; ++head) {
    const json view = get(client, "/api/attention?run=a&doc=" + id + "&layer=0&head=" + std::to_string(head) + "&max=1024");
    ASSERT_TRUE(view["exact"].get<bool>()) << view.dump().substr(0, 300);
    ASSERT_EQ(view["values"].size(), static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      double row = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const bool expected = head == 0 ? std::abs(i - j) <= kWindow
                                        : a["token_sections"][i] == a["token_sections"][j];
        ASSERT_EQ(view["visible"][i][j].get<double>(), expected ? 1.0 : 0.0) << "head " << head << " (" << i << ", " << j << ")";
        const double w = view["values"][i][j];
        if (!expected) {
          ASSERT_EQ(w, 0.0);
        }
        row += w;
      }
      ASSERT_NEAR(row, 1.0, 1e-4) << "head " << head << " row " << i;
    }
    // The block mask: the window visits the tiles that meet its band and no others. Head 1's
    // same_section cuts the layer's tiles where the section changes: a tile lies inside one
    // section, or holds the end of one and whole short ones packed after it (key tiles join a
    // long section's pieces, so they need not be the query tiles).
    if (head == 0) {
      const json& section = a["token_sections"];
      const auto starts_section = [&](std::int64_t i) { return i == 0 || i == n || section[i - 1] != section[i]; };
      std::set<std::pair<std::int64_t, std::int64_t>> rows, cols;
      for (const char* kind : {"full", "partial"})
        for (const json& t : view["tiles"][kind]) {
          rows.insert({t[0].get<std::int64_t>(), t[1].get<std::int64_t>()});
          cols.insert({t[2].get<std::int64_t>(), t[3].get<std::int64_t>()});
          for (int side = 0; side < 4; side += 2) {
            const std::int64_t begin = t[side], end = t[side + 1];
            EXPECT_TRUE(section[begin] == section[end - 1] || starts_section(end)) << t.dump();
          }
        }
      // Every query tile and every key tile meets the band, so the visited ones tile the page.
      for (const auto* tiling : {&rows, &cols}) {
        std::int64_t next = 0;
        for (const auto& [begin, end] : *tiling) {
          EXPECT_EQ(begin, next);
          next = end;
        }
        EXPECT_EQ(next, n);
      }
      EXPECT_GE(static_cast<std::int64_t>(rows.size()), (n + 63) / 64);
      std::int64_t band = 0;
      for (const auto& [q0, q1] : rows)
        for (const auto& [k0, k1] : cols) band += k0 <= q1 - 1 + kWindow && k1 - 1 >= q0 - kWindow;
      EXPECT_EQ(view["stats"]["tiles_visited"], band) << view["tiles"].dump();
      EXPECT_NEAR(view["stats"]["sparsity"].get<double>(), 1.0 - (n * (2.0 * kWindow + 1) - kWindow * (kWindow + 1.0)) / (n * n), 1e-9);
    }
  }
  // A binned view: each cell is the mean of its block of exact weights.
  const json exact = get(client, "/api/attention?run=a&doc=" + id + "&layer=0&head=mean&max=1024");
  const json binned = get(client, "/api/attention?run=a&doc=" + id + "&layer=0&head=mean&max=7&q0=10&q1=50&k0=5");
  ASSERT_EQ(binned["row_edges"].size(), 8u);
  EXPECT_FALSE(binned["exact"].get<bool>());
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 7; ++c) {
      double sum = 0;
      const std::int64_t q0 = binned["row_edges"][r], q1 = binned["row_edges"][r + 1];
      const std::int64_t k0 = binned["col_edges"][c], k1 = binned["col_edges"][c + 1];
      for (std::int64_t i = q0; i < q1; ++i)
        for (std::int64_t j = k0; j < k1; ++j) sum += exact["values"][i][j].get<double>();
      EXPECT_NEAR(binned["values"][r][c].get<double>(), sum / ((q1 - q0) * (k1 - k0)), 1e-6) << r << ", " << c;
    }

  // HIBRIDS: the learned bias between the page's sections, per head and averaged.
  const json biases = get(client, "/api/biases?run=a&doc=" + id);
  ASSERT_EQ(biases["layers"].size(), 1u) << biases.dump();
  EXPECT_EQ(biases["layers"][0]["heads"].size(), 2u);
  EXPECT_EQ(biases["layers"][0]["mean"]["sections"].size(), doc["sections"].size() - 1);
  EXPECT_TRUE(get(client, "/api/biases?run=b&doc=" + id)["layers"].empty());
  // What `strata analyze heads` saved beside run a; nothing beside run b.
  ASSERT_EQ(heads_.exit_code, 0) << heads_.err;
  EXPECT_TRUE(runs["runs"][0]["analyses"]["importance"].get<bool>());
  const json saved = get(client, "/api/analyses?run=a");
  EXPECT_EQ(saved["importance"]["layers"][0], "encoder.layers.0.self_attn") << saved.dump();
  EXPECT_EQ(saved["importance"]["scores"][0].size(), 2u) << saved.dump();
  EXPECT_TRUE(get(client, "/api/analyses?run=b")["importance"].is_null());

  // Errors: a status, and a message that names what is wrong.
  EXPECT_NE(post(client, {{"path", "/etc/passwd"}}, 403).dump().find("outside the allowed roots"), std::string::npos);
  EXPECT_NE(post(client, {{"path", "../../CMakeLists.txt"}}, 403).dump().find("outside the allowed roots"), std::string::npos);
  EXPECT_NE(get(client, "/api/attention?run=a&doc=" + id + "&layer=0&head=9", 400).dump().find("head = 9"), std::string::npos);
  EXPECT_NE(get(client, "/api/attention?run=a&doc=" + id + "&layer=x", 400).dump().find("layer = 'x'"), std::string::npos);
  EXPECT_NE(get(client, "/api/attention?run=a&doc=" + id + "&q1=100000", 400).dump().find("q1 = 100000"), std::string::npos);
  get(client, "/api/attention?run=c&doc=" + id, 404);
  get(client, "/api/documents/dnothere", 404);
  post(client, {{"text", std::string(200000, 'x')}}, 413);
  EXPECT_NE(post(client, {{"text", "some words"}, {"format", "latex"}}, 400).dump().find("latex"), std::string::npos);
  // A pasted Markdown document.
  const json pasted = post(client, {{"text", "# Title\n\nSome words here.\n\n## Part\n\nMore words there.\n"}, {"name", "p.md"}});
  EXPECT_EQ(pasted["format"], "markdown");
  EXPECT_EQ(get(client, "/api/documents/" + pasted["id"].get<std::string>())["id"], pasted["id"]);
  const auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("explore.js"), std::string::npos);

  EXPECT_EQ(server.terminate(), 0) << server.err();
  EXPECT_NE(server.err().find("shut down cleanly"), std::string::npos) << server.err();
}

TEST_F(CliExplore, ThePageWorksInHeadlessChromium) {
  ASSERT_EQ(structured_.exit_code, 0) << structured_.err;
  ASSERT_EQ(plain_.exit_code, 0) << plain_.err;
  if (!fs::exists("/usr/bin/chromium")) GTEST_SKIP() << "/usr/bin/chromium is missing: run scripts/install-deps";
  ASSERT_TRUE(fs::exists(kBrowserDir / "node_modules" / "playwright-core"))
      << "playwright-core is missing from " << kBrowserDir << ": run scripts/install-deps";
  fs::create_directories(dir_ / "page");
  ServerProcess server("--model " + path("structured") + " --compare " + path("plain") + " --port 0 --threads 1 --root " +
                           kPages.string() + " --max-tokens 300",
                       dir_ / "page", "explore");
  const int port = server.port();
  ASSERT_GT(port, 0) << server.err();
  const std::string command = "cd " + kBrowserDir.string() + " && HOME=" + dir_.string() + " node explore.test.mjs http://127.0.0.1:" +
                              std::to_string(port) + " " + (kPages / "widget.7").string() + " >" + path("page.out") + " 2>&1";
  const int status = std::system(command.c_str());
  const std::string report = slurp(dir_ / "page.out");
  if (WIFEXITED(status) && WEXITSTATUS(status) == 77) GTEST_SKIP() << report;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << report << "\nserver log:\n" << server.err();
  EXPECT_EQ(report.find("not ok"), std::string::npos) << report;
  EXPECT_NE(report.find("ok - "), std::string::npos) << report;
  EXPECT_EQ(server.terminate(), 0) << server.err();
}

}  // namespace
}  // namespace strata
