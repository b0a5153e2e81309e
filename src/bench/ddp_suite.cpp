#include "strata/bench/ddp_suite.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/bench/blas_info.h"
#include "strata/bench/cpu_load.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/jsonl.h"

namespace strata::bench {

namespace {

namespace fs = std::filesystem;

// Runs this program again with `args`, its output into `log`; strata::Error with the log's
// end when it fails.
void run_strata(const std::vector<std::string>& args, const fs::path& log, const std::string& what) {
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid < 0) throw Error("bench ddp: cannot start " + what);
  if (pid == 0) {
    const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out >= 0) {
      ::dup2(out, STDOUT_FILENO);
      ::dup2(out, STDERR_FILENO);
    }
    std::vector<char*> argv{const_cast<char*>("strata")};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return;
  std::string text = read_file(log);
  if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
  throw Error(fmt::format("bench ddp: {} failed (log {}):\n{}", what, log.string(), text));
}

// Documents of 12-20 sentences over 600 made-up words, from a fixed linear congruential
// sequence; each summary is one of its document's sentences.
void write_documents(const fs::path& dir) {
  std::uint64_t state = 12345;
  auto next = [&](std::uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  };
  const char* syllables[] = {"ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "ba", "po", "zu"};
  std::vector<std::string> words;
  for (int i = 0; i < 600; ++i) {
    std::string word;
    for (std::uint64_t s = 0, n = 1 + next(3); s <= n; ++s) word += syllables[next(12)];
    words.push_back(word);
  }
  for (const auto& [split, count] : {std::pair{"train", 400}, std::pair{"valid", 16}}) {
    std::string lines;
    for (int d = 0; d < count; ++d) {
      std::vector<std::string> sentences;
      for (std::uint64_t s = 0, n = 12 + next(9); s < n; ++s) {
        std::string sentence;
        for (std::uint64_t w = 0, m = 10 + next(7); w < m; ++w) sentence += (w ? " " : "") + words[next(words.size())];
        sentences.push_back(sentence + ".");
      }
      std::string document;
      for (const std::string& s : sentences) document += (document.empty() ? "" : " ") + s;
      lines += nlohmann::json{{"document", document}, {"summary", sentences[next(sentences.size())]}}.dump() + "\n";
    }
    write_file_atomic(dir / (std::string(split) + ".jsonl"), lines);
  }
}

struct DdpCase {
  std::string name;
  int processes, threads;
  std::vector<double> tokens_per_s, comm_wait_share, step_ms;  // per round
  double allreduce_bytes = 0;
};

// A run's train lines after the first window (thread pools, first allocations).
void read_run(const fs::path& metrics, DdpCase& c) {
  JsonlReader reader(metrics);
  nlohmann::json line;
  std::vector<double> speed, share, step_ms;
  for (bool first = true; reader.next(line);) {
    if (line.value("split", "") != "train") continue;
    if (first) {
      first = false;
      continue;
    }
    speed.push_back(line.at("tokens_per_s").get<double>());
    if (line.contains("comm_wait_share")) {
      share.push_back(line.at("comm_wait_share").get<double>());
      step_ms.push_back(line.at("step_ms").get<double>());
      c.allreduce_bytes = line.at("allreduce_bytes_per_step").get<double>();
    }
  }
  if (speed.empty()) throw Error("bench ddp: " + metrics.string() + " logged no training window after the first");
  c.tokens_per_s.push_back(median_of(speed));
  if (!share.empty()) {
    c.comm_wait_share.push_back(median_of(share));
    c.step_ms.push_back(median_of(step_ms));
  }
}

}  // namespace

void run_ddp_bench(const DdpBenchOptions& given) {
  DdpBenchOptions options = given;
  options.run.resolve(3, 1);
  if (options.steps <= 0) options.steps = options.run.quick ? 10 : 40;
  const int cores = options.run.threads;
  const int log_every = options.run.quick ? 2 : 5;
  if (options.steps < 2 * log_every)
    throw Error(fmt::format("--steps: at least {} (two logged windows; the first is not counted)", 2 * log_every));

  fs::path dir = options.work_dir;
  if (dir.empty()) {
    std::string pattern = (fs::temp_directory_path() / "strata-bench-ddp-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw Error("bench ddp: cannot make a temporary directory");
    dir = pattern;
  }
  fs::create_directories(dir);
  std::printf("bench ddp: %d cores, %d steps a run, %d rounds; work in %s\n", cores, options.steps, options.run.rounds,
              dir.string().c_str());
  std::printf("other processes' CPU use before the start: %.2f cores; load %s\n", idle_probe(1.0),
              load_average().c_str());

  write_documents(dir);
  run_strata({"tokenizer", "train", "--input", (dir / "train.jsonl").string(), "--out", (dir / "tok").string(),
              "--vocab-size", "1000", "--type", "byte-bpe"},
             dir / "tokenizer.log", "the tokenizer");
  write_file_atomic(dir / "model.toml",
                    fmt::format("[model]\nd_model = 256\nheads = 4\nd_ff = 1024\nencoder_layers = 3\ndecoder_layers = 3\n"
                                "max_positions = 512\n[data]\ntrain = \"{0}/train.jsonl\"\nvalid = \"{0}/valid.jsonl\"\n"
                                "tokenizer = \"{0}/tok\"\nmax_source_tokens = 384\n[train]\nmax_steps = {1}\n"
                                "warmup_steps = 2\neval_every = 1000000\neval_docs = 0\nlog_every = {2}\n"
                                "max_tokens = 4096\n",
                                dir.string(), options.steps, log_every));

  std::vector<DdpCase> cases{{.name = "1x1", .processes = 1, .threads = 1},
                          {.name = fmt::format("1x{}", cores), .processes = 1, .threads = cores}};
  if (cores > 1) cases.push_back({.name = fmt::format("{}x1", cores), .processes = cores, .threads = 1});
  for (int round = 0; round < options.run.rounds; ++round) {
    for (std::size_t k = 0; k < cases.size(); ++k) {
      DdpCase& c = cases[(k + static_cast<std::size_t>(round)) % cases.size()];  // each round another order
      const fs::path run = dir / fmt::format("run-{}-{}", c.name, round);
      fs::remove_all(run);
      std::vector<std::string> args{"train", "--quiet", "--config", (dir / "model.toml").string(), "--out", run.string(),
                                    fmt::format("train.threads={}", c.threads)};
      if (c.processes > 1) args.insert(args.begin() + 2, {"--nproc", std::to_string(c.processes)});
      if (!options.run.quiet)
        std::fprintf(stderr, "bench ddp: round %d, %d process(es) x %d thread(s)\n", round + 1, c.processes, c.threads);
      run_strata(args, dir / fmt::format("run-{}-{}.log", c.name, round), "the run " + c.name);
      read_run(run / "metrics.jsonl", c);
    }
  }

  const DdpCase& one = cases[1];
  const double reference = median_of(one.tokens_per_s);
  Table table({{"processes x threads", -19}, {"tokens/s", 9}, {"ratio", 6}, {"comm wait", 9}, {"MB/step", 8},
               {"ms/step", 8}});
  nlohmann::ordered_json json_cases = nlohmann::ordered_json::object();
  for (const DdpCase& c : cases) {
    const double speed = median_of(c.tokens_per_s);
    table.row({fmt::format("{} x {}", c.processes, c.threads), fixed(speed, 0), fixed(speed / reference, 3),
               c.comm_wait_share.empty() ? "-" : fixed(100 * median_of(c.comm_wait_share), 1) + " %",
               c.allreduce_bytes > 0 ? fixed(c.allreduce_bytes / 1e6, 1) : "-",
               c.step_ms.empty() ? "-" : fixed(median_of(c.step_ms), 0)});
    nlohmann::ordered_json entry = {{"processes", c.processes},          {"threads", c.threads},
                                    {"tokens_per_s", speed},              {"round_tokens_per_s", c.tokens_per_s},
                                    {"ratio", speed / reference},         {"ratio_of", one.name}};
    if (!c.comm_wait_share.empty()) {
      entry["comm_wait_share"] = median_of(c.comm_wait_share);
      entry["allreduce_bytes_per_step"] = c.allreduce_bytes;
      entry["step_ms"] = median_of(c.step_ms);
    }
    json_cases[c.name] = entry;
  }
  std::printf("BLAS: %s\n", blas_description().c_str());
  table.print();
  std::printf("ratio: tokens/s over the one process with %d threads, the same global batches; comm wait: the share of "
              "rank 0's step blocked on its peers (loss sums and what the gradient buckets did not hide behind "
              "backward); MB/step: what each rank all-reduces a step; ms/step: rank 0's step\n",
              cores);
  if (!options.run.json.empty()) {
    nlohmann::ordered_json result = {{"benchmark", "ddp"},          {"cores", cores},
                                     {"steps", options.steps},      {"rounds", options.run.rounds},
                                     {"quick", options.run.quick},  {"blas", blas_description()},
                                     {"model", "seq2seq d_model 256, 3+3 layers, max_tokens 4096"},
                                     {"cases", json_cases}};
    write_file_atomic(options.run.json, result.dump(2) + "\n");
    std::printf("results: %s\n", options.run.json.c_str());
  }
}

}  // namespace strata::bench
