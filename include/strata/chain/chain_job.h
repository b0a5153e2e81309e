#pragma once
// `strata chain`: one TOML file says which prompts, which backends and which systems; the job
// runs every system on the data, writes each system's outputs and the scores with paired
// bootstrap comparisons, and prints a table. The file (paths are relative to it):
//
//   [chain]
//   prompts = "generalist-fr.txt"     # Appendix C's layout (chain/chain_prompts.h)
//   language = "fr"                   # picks "targets" in JSONL data; formality rules
//   systems = ["no_extra", "with_context", "chain"]
//   corrupt = [0.0]                   # the chain once per share of corrupted user answers
//   max_tokens = 64
//   temperature = 0.0
//   seed = 1
//   concurrency = 1                   # examples in flight at once
//   cache = "responses.jsonl"         # "" for none
//
//   [translator]                      # one of url or run
//   url = "http://127.0.0.1:8080/v1"  # any OpenAI-compatible API
//   model = "my-model"                # the request's "model"
//   api_key_env = "OPENAI_API_KEY"    # read from the environment when set there
//   chat = false                      # /chat/completions instead of /completions
//   timeout_s = 60.0
//   retries = 3
//   run = ""                          # or a strata run directory, decoded in this process
//   threads = 0                       # its intra-op threads (0: the library's default)
//
//   [user]                            # the same keys, or gold = true for a perfect user
//   gold = false                      # answers with the example's known answer
//
//   [no_extra]                        # optional, the same keys: this system's own translator
//   [with_context]                    # (models trained for one step each)
//
// A [user] with neither url, run nor gold asks the translator's backend; so do the systems
// without a section of their own.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/chain/chain_runner.h"

namespace strata::chain {

struct BackendSettings {
  std::string url, model, api_key_env = "OPENAI_API_KEY";
  bool chat = false;
  double timeout_seconds = 60;
  int retries = 3;
  std::filesystem::path run;
  int threads = 0;
  bool gold = false;  // user only
};

struct ChainJob {
  std::filesystem::path prompts;
  std::string language;
  std::vector<ChainSystem> systems;
  std::vector<double> corrupt = {0.0};
  ChainRunOptions run;
  std::filesystem::path cache;
  BackendSettings translator, user;
  BackendSettings no_extra, with_context;  // empty: the translator's
};

// The file with `key=value` overrides applied ("chain.seed=2"); strata::Error naming the file,
// line and key for an unknown key, a wrong type, a bad system name, a share outside [0, 1), a
// backend with both or neither of url and run.
ChainJob read_chain_job(const std::filesystem::path& config, const std::vector<std::string>& overrides);

// The TOML a new user starts from (`strata chain --example-config`).
std::string example_chain_config();

// Runs every system (the chain once per corruption share) on the first `limit` examples of
// `data` (0: all), writes OUT/outputs/<system>.jsonl and OUT/scores.json atomically, prints
// the table unless quiet, and returns scores.json's content.
nlohmann::json run_chain_job(const ChainJob& job, const std::filesystem::path& data, const std::filesystem::path& out,
                             std::size_t limit, bool quiet);

}  // namespace strata::chain
