// Greedy decoding with and without the key/value cache: strata::decode::Seq2SeqStepper with
// use_cache = true against use_cache = false on the same model and the same encoder output.
//
// Model: Seq2Seq 6 + 6 layers, d_model 256, 4 heads, d_ff 1024, vocabulary 8000, random
// weights, eval mode, no grad. Source: 512 random tokens per row, batch 1 (and 4 unless
// --quick). Each run generates exactly N tokens (min_length = max_length = N, so eos is
// banned until the end) for N = 16, 64, 256.
//
// What is timed: greedy_search() only. The encoder output is computed once per batch size,
// outside the timing, and shared by both variants; the cached variant computes the encoder's
// cross-attention keys and values on its first step, inside the timing (the uncached one
// recomputes them at every step, as it re-runs the whole prefix). Runs of the two variants
// alternate, and the median time of each is reported as ms per generated token. A wrapper
// around the stepper also times every step(), which shows whether the per-step cost stays
// flat as the cached sequence grows (first step, steps 2..16, last 16 steps). A repeat during
// which other processes used more than 0.3 cores (/proc/stat minus this process's own CPU
// time) is set aside and run again, up to `repeats` extra times.
//
// Usage: bench_decoding [--quick] [--json FILE] [--threads T] [--batches 1,4]
//                       [--lengths 16,64,256] [--only cached|uncached] [--trace FILE]
//   --json defaults to $STRATA_BENCH_JSON_DIR/bench_decoding.json, else ./bench_decoding.json.
#include <sys/resource.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cpu_load.h"
#include "strata/core/files.h"
#include "strata/decode/generate.h"
#include "strata/decode/generation_options.h"
#include "strata/decode/model_steppers.h"
#include "strata/models/model_config.h"
#include "strata/models/seq2seq.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using strata::bench::CpuSample;
using strata::bench::cpu_sample;
using strata::bench::idle_probe;
using strata::bench::other_cores;
using nlohmann::json;

constexpr std::int64_t kSourceLen = 512;
constexpr std::int64_t kEos = 1;
constexpr double kBusyCores = 0.3;  // other processes' CPU use above which a repeat is set aside

struct Options {
  bool quick = false;
  int threads = 0;
  std::vector<std::int64_t> batches{1, 4};
  std::vector<std::int64_t> lengths{16, 64, 256};
  std::string only;   // "cached" or "uncached": that variant alone (for perf)
  std::string trace;  // libtorch profiler (chrome trace JSON) over the timed runs
  std::string json_path;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  to = std::min(to, v.size());
  if (from >= to) return 0;
  double s = 0;
  for (std::size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  std::string out = one;
  out += " ";
  out += five;
  out += " ";
  out += fifteen;
  return out;
}

// Times every step() of the stepper it wraps.
class TimedStepper : public strata::decode::StepModel {
 public:
  explicit TimedStepper(strata::decode::StepModel& inner) : inner_(inner) {}
  std::int64_t rows() const override { return inner_.rows(); }
  at::Tensor step(const at::Tensor& tokens) override {
    const auto start = Clock::now();
    at::Tensor out = inner_.step(tokens);
    step_seconds.push_back(seconds_since(start));
    return out;
  }
  void reorder(const at::Tensor& index) override { inner_.reorder(index); }
  std::vector<double> step_seconds;

 private:
  strata::decode::StepModel& inner_;
};

struct RunResult {
  double seconds = 0;
  std::vector<double> step_seconds;
};

RunResult generate_once(strata::models::Seq2Seq& model, const strata::models::EncoderOutput& encoded,
                        bool use_cache, std::int64_t n) {
  strata::decode::GenerationOptions options;
  options.max_length = n;
  options.min_length = n;
  options.start_id = 0;
  options.eos_id = kEos;
  options.pad_id = 2;
  torch::NoGradGuard no_grad;
  const auto start = Clock::now();
  strata::decode::Seq2SeqStepper stepper(model, encoded, use_cache);
  TimedStepper timed(stepper);
  const strata::decode::Sequences out = strata::decode::greedy_search(timed, options);
  RunResult r{seconds_since(start), std::move(timed.step_seconds)};
  for (const auto& seq : out)
    if (static_cast<std::int64_t>(seq.size()) != n) {
      std::fprintf(stderr, "bench_decoding: generated %zu tokens, expected %ld\n", seq.size(), long(n));
      std::exit(1);
    }
  return r;
}

// Repeats per (batch, N): more for the short runs, fewer for the long uncached ones.
int repeats(std::int64_t n, std::int64_t batch, bool quick) {
  if (quick) return 1;
  if (n <= 16) return 5;
  if (n <= 64) return 3;
  return batch > 1 ? 1 : 2;
}

std::vector<std::int64_t> parse_list(const std::string& text) {
  std::vector<std::int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(std::stoll(item));
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  bool batches_set = false, lengths_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_decoding: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") o.quick = true;
    else if (a == "--json") o.json_path = value();
    else if (a == "--threads") o.threads = std::stoi(value());
    else if (a == "--batches") o.batches = parse_list(value()), batches_set = true;
    else if (a == "--lengths") o.lengths = parse_list(value()), lengths_set = true;
    else if (a == "--only") o.only = value();
    else if (a == "--trace") o.trace = value();
    else if (a == "--help" || a == "-h") {
      std::printf("usage: bench_decoding [--quick] [--json FILE] [--threads T] [--batches 1,4] [--lengths 16,64,256]\n"
                  "                      [--only cached|uncached]   (one variant alone, e.g. under perf record)\n"
                  "                      [--trace FILE]   (libtorch profiler over the timed runs: per-op chrome trace)\n");
      std::exit(0);
    } else {
      std::fprintf(stderr, "bench_decoding: unknown argument '%s'\n", a.c_str());
      std::exit(2);
    }
  }
  if (!o.only.empty() && o.only != "cached" && o.only != "uncached") {
    std::fprintf(stderr, "bench_decoding: --only takes cached or uncached, got '%s'\n", o.only.c_str());
    std::exit(2);
  }
  if (o.quick) {
    if (!batches_set) o.batches = {1};
    if (!lengths_set) o.lengths = {16, 64};
  }
  if (o.threads <= 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (o.json_path.empty()) {
    const char* dir = std::getenv("STRATA_BENCH_JSON_DIR");
    o.json_path = (dir ? fs::path(dir) : fs::current_path()) / "bench_decoding.json";
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  torch::set_num_threads(options.threads);

  strata::models::ModelConfig config;
  config.architecture = strata::models::Architecture::Seq2Seq;
  config.vocab_size = 8000;
  config.d_model = 256;
  config.heads = 4;
  config.d_ff = 1024;
  config.encoder_layers = 6;
  config.decoder_layers = 6;
  config.max_positions = 1024;
  config.activation = "gelu";
  torch::manual_seed(1234);
  strata::models::Seq2Seq model(config);
  model->eval();

  const std::string load_start = load_average();
  const double others_start = idle_probe(1.0);
  std::printf("decoding: Seq2Seq 6+6 layers, d_model 256, 4 heads, d_ff 1024, vocab 8000, random weights, "
              "eval, no grad; source %ld tokens; greedy, exactly N tokens; %d threads%s\n",
              long(kSourceLen), options.threads, options.quick ? " (--quick)" : "");
  std::printf("timed: greedy_search only (encoder output computed once, outside the timing; "
              "the cache's cross-attention K/V are computed inside it, on step 1)\n");
  std::printf("other processes' CPU use before the start: %.2f cores (load average %s)%s\n", others_start,
              load_start.c_str(), others_start > kBusyCores ? "  -- machine busy: timings may be noisy" : "");
  std::fflush(stdout);

  json result{{"benchmark", "decoding"},
              {"model", config.to_json()},
              {"source_length", kSourceLen},
              {"threads", options.threads},
              {"quick", options.quick},
              {"load_average_start", load_start},
              {"other_processes_cores_before", others_start},
              {"timed", "greedy_search only; encoder output computed once outside; cached cross K/V on step 1 inside"},
              {"runs", json::array()}};
  std::vector<std::string> summary;

  const bool run_cached = options.only != "uncached", run_uncached = options.only != "cached";
  const bool both = run_cached && run_uncached;
  double others_max = 0;
  for (const std::int64_t batch : options.batches) {
    torch::NoGradGuard no_grad;
    const at::Tensor source = torch::randint(4, config.vocab_size, {batch, kSourceLen}, torch::kInt64);
    const at::Tensor padding = torch::ones({batch, kSourceLen}, torch::kBool);
    const strata::models::EncoderOutput encoded = model->encode(source, padding);
    // Warm-up: a short run of each variant.
    if (run_cached) generate_once(model, encoded, true, 8);
    if (run_uncached) generate_once(model, encoded, false, 8);

    std::printf("\nbatch %ld\n%6s %20s %20s %9s   %s\n", long(batch), "N", "cached ms/token",
                "uncached ms/token", "ratio", "cached per-step ms: step 1 | steps 2-16 | last 16");
    std::map<std::int64_t, double> cached_ms, uncached_ms;
    std::map<std::int64_t, std::vector<double>> cached_steps;
    for (const std::int64_t n : options.lengths) {
      std::vector<double> cached, uncached;
      std::vector<RunResult> cached_runs;
      std::unique_ptr<torch::autograd::profiler::RecordProfile> trace;
      if (!options.trace.empty()) {
        // One file per (batch, N): FILE.bB.nN.json.
        std::string path = options.trace;
        path += ".b" + std::to_string(batch);
        path += ".n" + std::to_string(n);
        path += ".json";
        trace = std::make_unique<torch::autograd::profiler::RecordProfile>(path);
      }
      // A repeat during which other processes used more than kBusyCores is set aside and run
      // again (at most `repeats` extra times).
      const int wanted = repeats(n, batch, options.quick);
      int set_aside = 0;
      double others = 0;
      for (int r = 0, done = 0; done < wanted; ++r) {
        const CpuSample repeat_start = cpu_sample();
        std::vector<RunResult> pair(2);
        for (int k = 0; k < 2; ++k) {  // alternate which variant goes first
          const bool use_cache = (k + r) % 2 == 0;
          if (use_cache ? !run_cached : !run_uncached) continue;
          pair[use_cache] = generate_once(model, encoded, use_cache, n);
        }
        const double busy = other_cores(repeat_start, cpu_sample());
        if (busy > kBusyCores && set_aside < wanted) {
          ++set_aside;
          std::printf("  (N=%ld: a repeat set aside, other processes used %.2f cores)\n", long(n), busy);
          continue;
        }
        others = std::max(others, busy);
        ++done;
        if (run_uncached) uncached.push_back(pair[0].seconds);
        if (run_cached) {
          cached.push_back(pair[1].seconds);
          cached_runs.push_back(std::move(pair[1]));
        }
      }
      trace.reset();
      others_max = std::max(others_max, others);
      std::vector<double> steps;  // per-step seconds of the median cached run
      if (!cached_runs.empty()) {
        std::sort(cached_runs.begin(), cached_runs.end(),
                  [](const RunResult& a, const RunResult& b) { return a.seconds < b.seconds; });
        steps = cached_runs[cached_runs.size() / 2].step_seconds;
      }
      const double c = cached.empty() ? 0 : median(cached) * 1e3 / n;
      const double u = uncached.empty() ? 0 : median(uncached) * 1e3 / n;
      cached_ms[n] = c;
      uncached_ms[n] = u;
      const double first = steps.empty() ? 0 : steps[0] * 1e3;
      const double early = mean(steps, 1, 16) * 1e3;
      const double late = mean(steps, steps.size() >= 16 ? steps.size() - 16 : 0, steps.size()) * 1e3;
      std::printf("%6ld %20.2f %20.2f %8.1fx   %.1f | %.2f | %.2f   (other processes: %.2f cores)\n", long(n), c,
                  u, both ? u / c : 0.0, first, early, late, others);
      std::fflush(stdout);
      json row{{"batch", batch},
               {"n", n},
               {"cached_seconds", cached},
               {"uncached_seconds", uncached},
               {"other_processes_cores", others},
               {"repeats_set_aside", set_aside}};
      if (run_cached) {
        row["cached_ms_per_token"] = c;
        row["cached_first_step_ms"] = first;
        row["cached_steps_2_16_ms"] = early;
        row["cached_last_16_steps_ms"] = late;
      }
      if (run_uncached) row["uncached_ms_per_token"] = u;
      if (both) row["ratio_uncached_over_cached"] = u / c;
      result["runs"].push_back(row);
      cached_steps[n] = steps;
    }
    if (!both) continue;
    const std::int64_t lo = options.lengths.front(), hi = options.lengths.back();
    const double ratio_hi = uncached_ms[hi] / cached_ms[hi];
    const double flat = cached_ms[hi] / cached_ms[lo];
    const auto& long_steps = cached_steps[hi];
    const double late = mean(long_steps, long_steps.size() >= 16 ? long_steps.size() - 16 : 0, long_steps.size());
    const double early = mean(long_steps, 1, 16);
    const double step_growth = early > 0 ? late / early : 0;
    std::printf("batch %ld: uncached/cached at N=%ld: %.1fx (target >= 5x); cached ms/token N=%ld vs N=%ld: %.2f; "
                "cached per-step ms, last 16 steps vs steps 2-16 of the N=%ld run: %.2f\n",
                long(batch), long(hi), ratio_hi, long(hi), long(lo), flat, long(hi), step_growth);
    result["batch_" + std::to_string(batch)] = json{{"max_n", hi},
                                                    {"min_n", lo},
                                                    {"ratio_uncached_over_cached_at_max_n", ratio_hi},
                                                    {"cached_ms_per_token_max_n_over_min_n", flat},
                                                    {"cached_step_ms_last16_over_steps2_16", step_growth}};
    char line[512];
    std::snprintf(line, sizeof line,
                  "decoding, batch %ld: N=%ld cached %.2f ms/token, uncached %.2f ms/token, ratio %.1fx; "
                  "cached ms/token N=%ld/N=%ld %.2f (per step late/early %.2f)",
                  long(batch), long(hi), cached_ms[hi], uncached_ms[hi], ratio_hi, long(hi), long(lo), flat,
                  step_growth);
    summary.push_back(line);
  }

  result["other_processes_cores_max"] = others_max;
  const std::string load_end = load_average();
  result["load_average_end"] = load_end;
  std::printf("\nother processes' CPU use during the runs: up to %.2f cores%s; load average at end: %s\n\n",
              others_max, others_max > kBusyCores ? " -- noisy, rerun when the machine is quiet" : "", load_end.c_str());
  for (const auto& line : summary) std::printf("%s\n", line.c_str());
  strata::write_file_atomic(options.json_path, result.dump(2) + "\n");
  std::printf("results: %s\n", options.json_path.c_str());
  return 0;
}
