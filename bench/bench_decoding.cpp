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
// alternate (strata/bench/timing.h: interleave), and the median time of each is reported as ms
// per generated token. A wrapper around the stepper also times every step(), which shows
// whether the per-step cost stays flat as the cached sequence grows (first step, steps 2..16,
// last 16 steps). A repeat during which other processes used more than 0.3 cores is set aside
// and run again, up to `repeats` extra times.
//
// Usage: bench_decoding [--quick] [--json FILE] [--threads T] [--rounds R] [--batches 1,4]
//                       [--lengths 16,64,256] [--only cached|uncached] [--trace FILE]
//   --json defaults to $STRATA_BENCH_JSON_DIR/bench_decoding.json, else ./bench_decoding.json.
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "strata/bench/cpu_load.h"
#include "strata/bench/flags.h"
#include "strata/bench/session.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/decode/generate.h"
#include "strata/decode/generation_options.h"
#include "strata/decode/model_steppers.h"
#include "strata/models/model_config.h"
#include "strata/models/seq2seq.h"

namespace {

using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

constexpr std::int64_t kSourceLen = 512;
constexpr std::int64_t kEos = 1;
using strata::bench::kBusyCores;

struct Options {
  strata::bench::RunOptions run;  // rounds: 0 = by N (repeats())
  std::vector<std::int64_t> batches{1, 4};
  std::vector<std::int64_t> lengths{16, 64, 256};
  std::string only;   // "cached" or "uncached": that variant alone (for perf)
  std::string trace;  // libtorch profiler (chrome trace JSON) over the timed runs
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  to = std::min(to, v.size());
  if (from >= to) return 0;
  double s = 0;
  for (std::size_t i = from; i < to; ++i) s += v[i];
  return s / static_cast<double>(to - from);
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

// The per-step seconds of one greedy run of exactly n tokens.
std::vector<double> generate_once(strata::models::Seq2Seq& model, const strata::models::EncoderOutput& encoded,
                                  bool use_cache, std::int64_t n) {
  strata::decode::GenerationOptions options;
  options.max_length = n;
  options.min_length = n;
  options.start_id = 0;
  options.eos_id = kEos;
  options.pad_id = 2;
  torch::NoGradGuard no_grad;
  strata::decode::Seq2SeqStepper stepper(model, encoded, use_cache);
  TimedStepper timed(stepper);
  const strata::decode::Sequences out = strata::decode::greedy_search(timed, options);
  for (const auto& seq : out)
    if (static_cast<std::int64_t>(seq.size()) != n) {
      std::fprintf(stderr, "bench_decoding: generated %zu tokens, expected %ld\n", seq.size(), long(n));
      std::exit(1);
    }
  return std::move(timed.step_seconds);
}

// Repeats per (batch, N): more for the short runs, fewer for the long uncached ones.
int repeats(std::int64_t n, std::int64_t batch, bool quick) {
  if (quick) return 1;
  if (n <= 16) return 5;
  if (n <= 64) return 3;
  return batch > 1 ? 1 : 2;
}

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app("Greedy decoding with and without the key/value cache", "bench_decoding");
  strata::bench::add_run_flags(app, o.run, {"small and short: batch 1, N = 16 and 64, 1 repeat (a smoke test)",
                                            "timed repeats of every (batch, N) (default: 5 at N <= 16, 3 at N <= 64, "
                                            "then 2, or 1 for batches > 1)"});
  app.add_option("--batches", o.batches, "batch sizes (default 1,4; 1 with --quick)")->delimiter(',');
  app.add_option("--lengths", o.lengths, "tokens generated N (default 16,64,256; 16,64 with --quick)")->delimiter(',');
  app.add_option("--only", o.only, "one variant alone, e.g. under perf record")->check(CLI::IsMember({"cached", "uncached"}));
  app.add_option("--trace", o.trace, "libtorch profiler over the timed runs: per-op chrome trace JSON, FILE.bB.nN.json");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  if (o.run.quick) {
    if (app.count("--batches") == 0) o.batches = {1};
    if (app.count("--lengths") == 0) o.lengths = {16, 64};
  }
  o.run.resolve(0, 0);
  if (o.run.json.empty()) o.run.json = strata::bench::default_json_path("bench_decoding");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  strata::bench::Session session("decoding", {"bench_decoding"}, options.run, kBusyCores);
  torch::set_num_threads(options.run.threads);

  strata::models::ModelConfig config;
  config.architecture = "seq2seq";
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

  const std::string load_start = strata::bench::load_average();
  std::printf("decoding: Seq2Seq 6+6 layers, d_model 256, 4 heads, d_ff 1024, vocab 8000, random weights, "
              "eval, no grad; source %ld tokens; greedy, exactly N tokens; %d threads%s\n",
              long(kSourceLen), options.run.threads, options.run.quick ? " (--quick)" : "");
  std::printf("timed: greedy_search only (encoder output computed once, outside the timing; "
              "the cache's cross-attention K/V are computed inside it, on step 1)\n");
  session.print_load();

  Json cases = Json::object(), findings{{"load_average_start", load_start}};
  std::vector<std::string> summary;
  std::vector<bool> variants;  // use_cache of each timed variant
  if (options.only != "uncached") variants.push_back(true);
  if (options.only != "cached") variants.push_back(false);
  const bool both = variants.size() == 2;
  double others_max = 0;
  for (const std::int64_t batch : options.batches) {
    torch::NoGradGuard no_grad;
    const at::Tensor source = torch::randint(4, config.vocab_size, {batch, kSourceLen}, torch::kInt64);
    const at::Tensor padding = torch::ones({batch, kSourceLen}, torch::kBool);
    const strata::models::EncoderOutput encoded = model->encode(source, padding);
    for (bool use_cache : variants) generate_once(model, encoded, use_cache, 8);  // warm-up

    std::printf("\nbatch %ld\n", long(batch));
    strata::bench::Table table({{"N", 6}, {"cached ms/token", 20}, {"uncached ms/token", 20}, {"ratio", 9},
                                {"cached per-step ms: step 1 | steps 2-16 | last 16", -50}});
    std::map<std::int64_t, double> cached_ms, uncached_ms;
    std::map<std::int64_t, std::vector<double>> cached_steps;
    for (const std::int64_t n : options.lengths) {
      std::unique_ptr<torch::autograd::profiler::RecordProfile> trace;
      if (!options.trace.empty())
        trace = std::make_unique<torch::autograd::profiler::RecordProfile>(
            options.trace + ".b" + std::to_string(batch) + ".n" + std::to_string(n) + ".json");
      std::vector<std::map<int, std::vector<double>>> steps_of(variants.size());  // [variant][round]
      std::vector<std::function<void(int)>> steps;
      for (std::size_t k = 0; k < variants.size(); ++k)
        steps.push_back([&, k, n](int round) { steps_of[k][round] = generate_once(model, encoded, variants[k], n); });
      const int wanted = options.run.rounds > 0 ? options.run.rounds : repeats(n, batch, options.run.quick);
      const strata::bench::Interleaved t = strata::bench::interleave(steps, wanted, kBusyCores);
      trace.reset();
      double others = 0;
      for (std::size_t r = 0; r < t.others.size(); ++r)
        if (t.kept(r)) others = std::max(others, t.others[r]);
      others_max = std::max(others_max, others);
      const std::size_t set_aside = t.others.size() - t.kept_of(t.others).size();
      if (set_aside > 0)
        std::printf("  (N=%ld: %zu repeat(s) set aside, other processes used the CPU)\n", long(n), set_aside);
      // Per variant: seconds of the kept repeats, their median as ms per token.
      std::map<bool, std::vector<double>> seconds;
      std::map<bool, double> ms_per_token;
      std::vector<double> steps_median;  // per-step seconds of the median cached run
      for (std::size_t k = 0; k < variants.size(); ++k) {
        for (double ms : t.kept_of(t.ms[k])) seconds[variants[k]].push_back(ms / 1e3);
        ms_per_token[variants[k]] = t.median_ms(k) / static_cast<double>(n);
        if (!variants[k]) continue;
        std::vector<std::pair<double, int>> kept;  // (ms, round) of the kept cached runs
        for (std::size_t r = 0; r < t.others.size(); ++r)
          if (t.kept(r)) kept.push_back({t.ms[k][r], static_cast<int>(r)});
        std::sort(kept.begin(), kept.end());
        steps_median = steps_of[k][kept[kept.size() / 2].second];
      }
      const double c = ms_per_token[true], u = ms_per_token[false];
      cached_ms[n] = c;
      uncached_ms[n] = u;
      const double first = steps_median.empty() ? 0 : steps_median[0] * 1e3;
      const double early = mean(steps_median, 1, 16) * 1e3;
      const double late =
          mean(steps_median, steps_median.size() >= 16 ? steps_median.size() - 16 : 0, steps_median.size()) * 1e3;
      table.row({std::to_string(n), strata::bench::fixed(c, 2), strata::bench::fixed(u, 2),
                 strata::bench::fixed(both ? u / c : 0.0, 1) + "x",
                 fmt::format("  {:.1f} | {:.2f} | {:.2f}   (other processes: {:.2f} cores)", first, early, late, others)});
      const bool cached_run = options.only != "uncached", uncached_run = options.only != "cached";
      Json row{{"batch", batch},
               {"n", n},
               {"cached_seconds", seconds[true]},
               {"uncached_seconds", seconds[false]},
               {"other_processes_cores", others},
               {"repeats_set_aside", set_aside}};
      if (cached_run) {
        row["cached_ms_per_token"] = c;
        row["cached_first_step_ms"] = first;
        row["cached_steps_2_16_ms"] = early;
        row["cached_last_16_steps_ms"] = late;
      }
      if (uncached_run) row["uncached_ms_per_token"] = u;
      if (both) row["ratio_uncached_over_cached"] = u / c;
      cases[fmt::format("batch{}_n{}", batch, n)] = std::move(row);
      cached_steps[n] = steps_median;
    }
    table.print();
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
    findings["batch_" + std::to_string(batch)] = Json{{"max_n", hi},
                                                      {"min_n", lo},
                                                      {"ratio_uncached_over_cached_at_max_n", ratio_hi},
                                                      {"cached_ms_per_token_max_n_over_min_n", flat},
                                                      {"cached_step_ms_last16_over_steps2_16", step_growth}};
    summary.push_back(fmt::format("decoding, batch {}: N={} cached {:.2f} ms/token, uncached {:.2f} ms/token, ratio "
                                  "{:.1f}x; cached ms/token N={}/N={} {:.2f} (per step late/early {:.2f})",
                                  batch, hi, cached_ms[hi], uncached_ms[hi], ratio_hi, hi, lo, flat, step_growth));
  }

  findings["other_processes_cores_max"] = others_max;
  const std::string load_end = strata::bench::load_average();
  findings["load_average_end"] = load_end;
  std::printf("\nother processes' CPU use during the runs: up to %.2f cores%s; load average at end: %s\n\n",
              others_max, others_max > kBusyCores ? " -- noisy, rerun when the machine is quiet" : "", load_end.c_str());
  for (const auto& line : summary) std::printf("%s\n", line.c_str());
  session.write_json({{"model", config.to_json()},
                      {"source_length", kSourceLen},
                      {"timed", "greedy_search only; encoder output computed once outside; cached cross K/V on step 1 inside"}},
                     findings, std::move(cases));
  return 0;
}
