// `strata chain` as a user runs it: against an OpenAI-compatible server (a stand-in written
// here with cpp-httplib, which fails its first request so that the retry is exercised, and
// checks the API key), then again with the server gone, answered from the response cache;
// and against a tiny strata language model decoding in the process.
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "support/cli.h"
#include "support/tiny_run.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using test_support::CliResult;
using test_support::slurp;

// The last open field of a prompt: "...\nS: x\nA:" -> "x" for tag 'S'.
std::string field(const std::string& prompt, char tag) {
  const std::string marker = std::string("\n") + tag + ": ";
  const std::string text = "\n" + prompt;
  const std::size_t at = text.rfind(marker);
  if (at == std::string::npos) return "";
  const std::size_t start = at + marker.size();
  return text.substr(start, text.find('\n', start) - start);
}

// A model by rules: asked for Q, a question; for U, the context's last word; for A, the source
// with the answer (or the context's last word) in brackets.
std::string rule_completion(const std::string& prompt) {
  if (prompt.ends_with("Q:")) return " which one?";
  const std::string context = field(prompt, 'C');
  const std::string hint = prompt.ends_with("U:") ? "" : !field(prompt, 'U').empty() ? field(prompt, 'U') : context;
  if (prompt.ends_with("U:")) return " " + context.substr(context.rfind(' ') + 1);
  return " " + field(prompt, 'S') + (hint.empty() ? "" : " [" + hint.substr(hint.rfind(' ') + 1) + "]") + "\nmore";
}

class FakeOpenAi {
 public:
  FakeOpenAi() {
    server_.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) { answer(req, res, false); });
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) { answer(req, res, true); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // The socket listens from bind_to_any_port on; wait for the accept loop too, so that stop()
    // in the destructor never races its start (Debian 12's cpp-httplib has no wait_until_ready).
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~FakeOpenAi() {
    server_.stop();
    thread_.join();
  }
  int port() const { return port_; }
  std::atomic<int> requests{0}, refused{0}, unauthorised{0};

 private:
  void answer(const httplib::Request& req, httplib::Response& res, bool chat) {
    if (requests++ == 0) {  // the first request fails as an overloaded server's would
      ++refused;
      res.status = 503;
      res.set_content(R"({"error": {"message": "busy", "type": "server_error"}})", "application/json");
      return;
    }
    if (req.get_header_value("Authorization") != "Bearer sekret") ++unauthorised;
    const nlohmann::json body = nlohmann::json::parse(req.body);
    const std::string prompt =
        chat ? body["messages"][0]["content"].get<std::string>() : body["prompt"].get<std::string>();
    std::string text = rule_completion(prompt);
    if (body.contains("stop")) text = text.substr(0, text.find('\n'));  // the stop string ends it
    const nlohmann::json choice = chat ? nlohmann::json{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}}
                                       : nlohmann::json{{"index", 0}, {"text", text}};
    res.set_content(nlohmann::json{{"choices", {choice}}}.dump(), "application/json");
  }

  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

class CliChain : public test_support::ScratchTest {
 protected:
  CliChain() : ScratchTest("strata_cli_chain") {}

  void write_inputs() {
    std::string data;
    const char* senses[] = {"one", "two"};
    for (int i = 0; i < 12; ++i) {
      const std::string answer = senses[i % 2];
      const std::string source = "word" + std::to_string(i);
      data += nlohmann::json{{"id", "e" + std::to_string(i)},
                             {"source", source},
                             {"context", "here it means " + answer},
                             {"targets", {{"fr", source + " [" + answer + "]"}}},
                             {"answer", answer}}
                  .dump() +
              "\n";
    }
    write("data.jsonl", data);
    write("prompts.txt", "[ask]\nAsk which sense.\n[exemplars]\nS: bank\nC: by the river\nQ: which bank?\nU: river\nA: rive\n");
  }
  std::string config(const std::string& translator, const std::string& extra = "") {
    return "[chain]\nprompts = \"prompts.txt\"\nlanguage = \"fr\"\ncorrupt = [0.0, 0.5]\nconcurrency = 3\n"
           "cache = \"cache.jsonl\"\n" + extra + "[translator]\n" + translator;
  }
};

TEST_F(CliChain, RunsAgainstAnOpenAiCompatibleServerThenFromItsCache) {
  write_inputs();
  ::setenv("STRATA_TEST_KEY", "sekret", 1);
  nlohmann::json first;
  {
    FakeOpenAi server;
    write("chain.toml", config("url = \"http://127.0.0.1:" + std::to_string(server.port()) +
                               "/v1\"\nmodel = \"fake\"\napi_key_env = \"STRATA_TEST_KEY\"\nchat = true\n"));
    const CliResult result = run("chain --config " + (dir_ / "chain.toml").string() + " --data " +
                                 (dir_ / "data.jsonl").string() + " --out " + (dir_ / "out").string());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(server.refused, 1);       // the 503 was retried
    EXPECT_EQ(server.unauthorised, 0);  // every request carried the key
    // The refused one, then no_extra 12, with_context 12 and the chain's ask, user and translate
    // 12 each; at 50 % corruption only the corrupted examples' translations are new calls.
    EXPECT_GT(server.requests, 1 + 60);
    EXPECT_LT(server.requests, 1 + 60 + 12);
    EXPECT_NE(result.out.find("chain-corrupt50"), std::string::npos) << result.out;
    first = nlohmann::json::parse(slurp(dir_ / "out" / "scores.json"));
  }
  const auto& systems = first["systems"];
  // The rules resolve the sense from the context: with_context and the chain are right, the
  // baseline without context never is, and corrupting half the answers costs the chain.
  EXPECT_DOUBLE_EQ(systems["with_context"]["exact_match"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(systems["chain"]["exact_match"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(systems["chain"]["answer_accuracy"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(systems["no_extra"]["exact_match"].get<double>(), 0.0);
  EXPECT_LT(systems["chain-corrupt50"]["answer_accuracy"].get<double>(), 100.0);
  EXPECT_LT(first["comparisons"]["chain vs no_extra"]["exact_match"]["p_value"].get<double>(), 0.01);
  const std::string outputs = slurp(dir_ / "out" / "outputs" / "chain.jsonl");
  EXPECT_NE(outputs.find("\"question\":\"which one?\""), std::string::npos) << outputs;

  // The server is gone: a re-run is answered from the cache, with the same scores.
  const CliResult again = run("chain --quiet --config " + (dir_ / "chain.toml").string() + " --data " +
                              (dir_ / "data.jsonl").string() + " --out " + (dir_ / "again").string());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const nlohmann::json second = nlohmann::json::parse(slurp(dir_ / "again" / "scores.json"));
  EXPECT_EQ(second["systems"], first["systems"]);
  EXPECT_EQ(second["cache"]["misses"], 0);
}

TEST_F(CliChain, AnUnreachableServerFailsClearly) {
  write_inputs();
  write("chain.toml", config("url = \"http://127.0.0.1:9/v1\"\nretries = 1\ntimeout_s = 2.0\n"));
  const CliResult result = run("chain --quiet --config " + (dir_ / "chain.toml").string() + " --data " +
                               (dir_ / "data.jsonl").string() + " --out " + (dir_ / "out").string());
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("127.0.0.1:9/v1/completions"), std::string::npos) << result.err;
  EXPECT_FALSE(fs::exists(dir_ / "out" / "scores.json"));
}

TEST_F(CliChain, RunsAStrataModelInProcessWithAPerfectUser) {
  ASSERT_EQ(test_support::write_tiny_run(dir_, {.seed = 3, .train = "max_steps = 4\nwarmup_steps = 1\neval_every = 4\neval_docs = 2\n"}).exit_code, 0);
  const CliResult lm = run("lm train --quiet --config " + (dir_ / "tiny.toml").string() + " --out " + (dir_ / "lm").string() +
                           " model.architecture=causal_lm model.pre_norm=true data.block_size=32 train.eval_docs=0");
  ASSERT_EQ(lm.exit_code, 0) << lm.err;
  write_inputs();
  write("chain.toml", config("run = \"lm\"\n", "max_tokens = 4\n") + "[user]\ngold = true\n");
  const CliResult result = run("chain --quiet --config " + (dir_ / "chain.toml").string() + " --data " +
                               (dir_ / "data.jsonl").string() + " --out " + (dir_ / "out").string() + " --limit 4");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json scores = nlohmann::json::parse(slurp(dir_ / "out" / "scores.json"));
  EXPECT_EQ(scores["examples"], 4);
  EXPECT_EQ(scores["user"], "gold");
  // A perfect user's answers are right unless corrupted.
  EXPECT_DOUBLE_EQ(scores["systems"]["chain"]["answer_accuracy"].get<double>(), 100.0);
  EXPECT_TRUE(scores["comparisons"].contains("chain vs with_context"));
}

}  // namespace
}  // namespace strata
