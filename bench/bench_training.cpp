// Training throughput: strata's Seq2Seq against libtorch's own torch::nn::Transformer of the
// same size, on the same batches, with the same loss and the same optimizer (strata's AdamW on
// each model's parameters), so that only the model differs.
//
// Model: 6 + 6 post-norm layers, d_model 256, 4 heads, d_ff 1024, vocabulary 8000, GELU,
// dropout 0.1 everywhere torch::nn::Transformer puts it (residual branches, attention
// probabilities, after the activation; strata's config is set to match: dropout,
// attention_dropout and activation_dropout all 0.1), learned positions, output projection tied
// to the token embedding. The peer gets its own token embedding + learned positions (+ dropout)
// and the masks it needs: a causal target mask and source / memory key padding masks.
//
// A step = forward + summed token cross-entropy / labelled tokens + backward + AdamW step
// (zero_grad included). Batches: B rows of a source of up to 512 tokens (lengths drawn in
// [448, 512], right-padded) and a target of up to 64 (lengths in [48, 64]); tokens/s counts the
// real (non-padding) source + target tokens, as strata's trainer does.
//
// Timing: both models live in this process; after warm-up steps, each round runs one step of
// every variant (strata at all threads, the peer at all threads, strata at 1 thread) on the
// same batch (4 batches in turn), in an order that rotates from round to round, and the median
// step time of each variant is reported. A round during which other processes used more than
// 0.3 cores (/proc/stat minus this process's own CPU time) is set aside and run again, up to
// `rounds` extra times. Peak memory: each model also runs in a child process of its own (this
// program re-executed with --child), which reads VmRSS before building the model and VmHWM
// (peak RSS) after 3 steps; the growth (VmHWM - VmRSS at start) is reported, and the child's
// whole-process ru_maxrss from wait4() beside it.
//
// Usage: bench_training [--quick] [--json FILE] [--batch B] [--rounds R] [--threads T]
//                       [--only strata|peer] [--trace FILE]
//   --json defaults to $STRATA_BENCH_JSON_DIR/bench_training.json, else ./bench_training.json.
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "cpu_load.h"
#include "strata/core/files.h"
#include "strata/models/collate.h"
#include "strata/models/model_config.h"
#include "strata/models/seq2seq.h"
#include "strata/train/adamw.h"
#include "strata/train/task.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using strata::bench::CpuSample;
using strata::bench::cpu_sample;
using strata::bench::idle_probe;
using strata::bench::other_cores;
using nlohmann::json;

constexpr std::int64_t kVocab = 8000;
constexpr std::int64_t kDModel = 256;
constexpr std::int64_t kHeads = 4;
constexpr std::int64_t kDff = 1024;
constexpr std::int64_t kLayers = 6;
constexpr double kDropout = 0.1;
constexpr std::int64_t kSourceLen = 512;
constexpr std::int64_t kTargetLen = 64;
constexpr std::int64_t kPad = 2;
constexpr std::int64_t kStart = 0;
constexpr double kLr = 1e-4;
constexpr double kBusyCores = 0.3;  // other processes' CPU use above which a round is set aside

struct Options {
  bool quick = false;
  std::int64_t batch = 8;
  int rounds = 7;
  int warmup = 2;
  int threads = 0;  // 0 = hardware concurrency
  std::string json_path;
  std::string only;   // "strata" or "peer": time that model alone (for perf), no memory children
  std::string trace;  // libtorch profiler (chrome trace JSON) over the timed rounds
  std::string child;  // internal: "strata" or "peer"
  std::string child_out;
};

struct Batch {
  at::Tensor source;          // [B, Ls] int64
  at::Tensor source_padding;  // [B, Ls] bool, true = real
  at::Tensor source_pad_mask; // [B, Ls] bool, true = padding (torch::nn::Transformer's sense)
  at::Tensor decoder_inputs;  // [B, T]
  at::Tensor labels;          // [B, T], -100 after the target
  std::int64_t tokens = 0;    // real source + target tokens
  std::int64_t labelled = 0;
};

std::vector<Batch> make_batches(std::int64_t count, std::int64_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> token(4, kVocab - 1);
  std::uniform_int_distribution<std::int64_t> source_len(kSourceLen - 64, kSourceLen);
  std::uniform_int_distribution<std::int64_t> target_len(kTargetLen - 16, kTargetLen);
  std::vector<Batch> batches;
  for (std::int64_t b = 0; b < count; ++b) {
    Batch batch;
    at::Tensor source = torch::full({rows, kSourceLen}, kPad, torch::kInt64);
    at::Tensor inputs = torch::full({rows, kTargetLen}, kPad, torch::kInt64);
    at::Tensor labels = torch::full({rows, kTargetLen}, strata::models::kIgnoreLabel, torch::kInt64);
    auto s = source.accessor<std::int64_t, 2>();
    auto in = inputs.accessor<std::int64_t, 2>();
    auto lab = labels.accessor<std::int64_t, 2>();
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t ls = source_len(rng), lt = target_len(rng);
      for (std::int64_t i = 0; i < ls; ++i) s[r][i] = token(rng);
      std::vector<std::int64_t> target(lt);
      for (auto& t : target) t = token(rng);
      target.back() = 1;  // eos
      in[r][0] = kStart;
      for (std::int64_t i = 0; i < lt; ++i) {
        lab[r][i] = target[i];
        if (i + 1 < kTargetLen && i + 1 < lt) in[r][i + 1] = target[i];
      }
      batch.tokens += ls + lt;
      batch.labelled += lt;
    }
    batch.source = source;
    batch.source_padding = source != kPad;
    batch.source_pad_mask = source == kPad;
    batch.decoder_inputs = inputs;
    batch.labels = labels;
    batches.push_back(std::move(batch));
  }
  return batches;
}

strata::models::ModelConfig strata_config() {
  strata::models::ModelConfig config;
  config.architecture = strata::models::Architecture::Seq2Seq;
  config.vocab_size = kVocab;
  config.d_model = kDModel;
  config.heads = kHeads;
  config.d_ff = kDff;
  config.encoder_layers = kLayers;
  config.decoder_layers = kLayers;
  config.max_positions = 1024;
  config.dropout = kDropout;
  config.attention_dropout = kDropout;   // as torch::nn::MultiheadAttention(dropout)
  config.activation_dropout = kDropout;  // as torch::nn::TransformerEncoderLayer's dropout
  config.pre_norm = false;
  config.tie_embeddings = true;
  config.activation = "gelu";
  config.pad_id = kPad;
  config.decoder_start_id = kStart;
  return config;
}

// torch::nn::Transformer with a token embedding, learned positions (one table per stack, as
// strata's) and an output projection tied to the token embedding.
class PeerImpl : public torch::nn::Module {
 public:
  PeerImpl() {
    tokens = register_module("tokens", torch::nn::Embedding(kVocab, kDModel));
    source_positions = register_module("source_positions", torch::nn::Embedding(1024, kDModel));
    target_positions = register_module("target_positions", torch::nn::Embedding(1024, kDModel));
    transformer = register_module(
        "transformer", torch::nn::Transformer(torch::nn::TransformerOptions(kDModel, kHeads)
                                                  .num_encoder_layers(kLayers)
                                                  .num_decoder_layers(kLayers)
                                                  .dim_feedforward(kDff)
                                                  .dropout(kDropout)
                                                  .activation(torch::kGELU)));
    torch::NoGradGuard no_grad;
    tokens->weight.normal_(0.0, 0.02);
    source_positions->weight.normal_(0.0, 0.02);
    target_positions->weight.normal_(0.0, 0.02);
  }

  // [B, L] ids -> [L, B, d] (sequence first, as torch::nn::Transformer wants).
  at::Tensor embed(const at::Tensor& ids, torch::nn::Embedding& positions) {
    const at::Tensor pos = torch::arange(ids.size(1), torch::kInt64);
    const at::Tensor x = tokens(ids) + positions(pos).unsqueeze(0);
    return torch::dropout(x, kDropout, is_training()).transpose(0, 1);
  }

  at::Tensor forward(const Batch& batch) {
    const std::int64_t t = batch.decoder_inputs.size(1);
    if (!causal_.defined() || causal_.size(0) != t)
      causal_ = torch::nn::TransformerImpl::generate_square_subsequent_mask(t);
    const at::Tensor none;
    const at::Tensor out = transformer->forward(embed(batch.source, source_positions), embed(batch.decoder_inputs, target_positions),
                                                /*src_mask=*/none, /*tgt_mask=*/causal_, /*memory_mask=*/none,
                                                /*src_key_padding_mask=*/batch.source_pad_mask,
                                                /*tgt_key_padding_mask=*/none,
                                                /*memory_key_padding_mask=*/batch.source_pad_mask);
    return torch::matmul(out.transpose(0, 1), tokens->weight.t());  // [B, T, V]
  }

  torch::nn::Embedding tokens{nullptr}, source_positions{nullptr}, target_positions{nullptr};
  torch::nn::Transformer transformer{nullptr};

 private:
  at::Tensor causal_;
};
TORCH_MODULE(Peer);

strata::train::NamedTensors named(torch::nn::Module& module) {
  strata::train::NamedTensors out;
  for (const auto& item : module.named_parameters()) out.emplace_back(item.key(), item.value());
  return out;
}

std::int64_t count_parameters(const strata::train::NamedTensors& params) {
  std::int64_t n = 0;
  std::vector<const void*> seen;
  for (const auto& [name, p] : params) {
    if (std::find(seen.begin(), seen.end(), p.data_ptr()) != seen.end()) continue;
    seen.push_back(p.data_ptr());
    n += p.numel();
  }
  return n;
}

// One model + its optimizer: step(batch) runs a full training step.
struct Variant {
  std::string name;
  std::shared_ptr<torch::nn::Module> module;
  std::function<at::Tensor(const Batch&)> logits;
  std::unique_ptr<strata::train::AdamW> optimizer;
  std::int64_t parameters = 0;

  void step(const Batch& batch) {
    optimizer->zero_grad();
    const at::Tensor loss =
        strata::train::token_loss_sum(logits(batch), batch.labels, 0.0) / static_cast<double>(batch.labelled);
    loss.backward();
    optimizer->step(kLr);
  }
};

Variant make_variant(const std::string& which) {
  torch::manual_seed(1234);
  Variant v;
  v.name = which;
  if (which == "strata") {
    strata::models::Seq2Seq model(strata_config());
    model->train();
    v.module = model.ptr();
    v.logits = [model](const Batch& b) mutable {
      return model->forward(b.source, b.source_padding, b.decoder_inputs);
    };
  } else {
    Peer model;
    model->train();
    v.module = model.ptr();
    v.logits = [model](const Batch& b) mutable { return model->forward(b); };
  }
  const auto params = named(*v.module);
  v.parameters = count_parameters(params);
  v.optimizer = std::make_unique<strata::train::AdamW>(params);
  return v;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// kB from a "Name:   1234 kB" line of /proc/self/status.
long status_kb(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::strtol(line.c_str() + field.size() + 1, nullptr, 10);
  return -1;
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

// The child: build one variant, run 3 steps, report RSS before and the peak after.
int run_child(const Options& options) {
  torch::set_num_threads(options.threads);
  (void)torch::ones({64, 64}).matmul(torch::ones({64, 64})).sum().item<float>();  // start the pools
  const long baseline = status_kb("VmRSS");
  const std::vector<Batch> batches = make_batches(1, options.batch, 7);
  Variant v = make_variant(options.child);
  for (int i = 0; i < 3; ++i) v.step(batches[0]);
  const json out{{"baseline_kb", baseline}, {"hwm_kb", status_kb("VmHWM")}};
  strata::write_file_atomic(options.child_out, out.dump());
  return 0;
}

struct ChildMemory {
  double growth_mb = -1;   // VmHWM - VmRSS before the model was built
  double maxrss_mb = -1;   // the child's ru_maxrss (whole process, libtorch included)
};

ChildMemory measure_memory(const Options& options, const std::string& which) {
  const fs::path out = fs::temp_directory_path() / ("strata_bench_training_" + std::to_string(::getpid()) + "_" + which + ".json");
  std::vector<std::string> args{"bench_training", "--child", which, "--child-out", out.string(),
                                "--batch", std::to_string(options.batch), "--threads",
                                std::to_string(options.threads)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ChildMemory result;
  if (pid < 0) return result;
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::printf("  memory child for %s failed (status %d)\n", which.c_str(), status);
    return result;
  }
  result.maxrss_mb = usage.ru_maxrss / 1024.0;
  const json j = json::parse(strata::read_file(out));
  result.growth_mb = (j["hwm_kb"].get<double>() - j["baseline_kb"].get<double>()) / 1024.0;
  fs::remove(out);
  return result;
}

Options parse(int argc, char** argv) {
  Options o;
  bool batch_set = false, rounds_set = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_training: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--quick") o.quick = true;
    else if (a == "--json") o.json_path = value();
    else if (a == "--batch") o.batch = std::stoll(value()), batch_set = true;
    else if (a == "--rounds") o.rounds = std::stoi(value()), rounds_set = true;
    else if (a == "--threads") o.threads = std::stoi(value());
    else if (a == "--only") o.only = value();
    else if (a == "--trace") o.trace = value();
    else if (a == "--child") o.child = value();
    else if (a == "--child-out") o.child_out = value();
    else if (a == "--help" || a == "-h") {
      std::printf("usage: bench_training [--quick] [--json FILE] [--batch B] [--rounds R] [--threads T]\n"
                  "                      [--only strata|peer]   (one model alone, e.g. under perf record)\n"
                  "                      [--trace FILE]   (libtorch profiler over the timed rounds: per-op chrome trace)\n");
      std::exit(0);
    } else {
      std::fprintf(stderr, "bench_training: unknown argument '%s'\n", a.c_str());
      std::exit(2);
    }
  }
  if (!o.only.empty() && o.only != "strata" && o.only != "peer") {
    std::fprintf(stderr, "bench_training: --only takes strata or peer, got '%s'\n", o.only.c_str());
    std::exit(2);
  }
  if (o.quick) {
    if (!batch_set) o.batch = 2;
    if (!rounds_set) o.rounds = 2;
    o.warmup = 1;
  }
  if (o.threads <= 0) o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (o.json_path.empty()) {
    const char* dir = std::getenv("STRATA_BENCH_JSON_DIR");
    o.json_path = (dir ? fs::path(dir) : fs::current_path()) / "bench_training.json";
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse(argc, argv);
  if (!options.child.empty()) return run_child(options);

  const std::string load_start = load_average();
  const double others_start = idle_probe(1.0);
  std::printf("training throughput: Seq2Seq %ld+%ld layers, d_model %ld, %ld heads, d_ff %ld, vocab %ld, "
              "GELU, dropout %.1f, post-norm\n",
              long(kLayers), long(kLayers), long(kDModel), long(kHeads), long(kDff), long(kVocab), kDropout);
  std::printf("batch %ld x (source <= %ld, target <= %ld), %d threads, %d warm-up steps, %d timed rounds%s\n",
              long(options.batch), long(kSourceLen), long(kTargetLen), options.threads, options.warmup,
              options.rounds, options.quick ? " (--quick)" : "");
  std::printf("other processes' CPU use before the start: %.2f cores (load average %s)%s\n", others_start,
              load_start.c_str(), others_start > kBusyCores ? "  -- machine busy: timings may be noisy" : "");
  std::fflush(stdout);

  // Peak memory first, each model in a child process of its own.
  std::map<std::string, ChildMemory> memory;
  if (options.only.empty()) {
    std::printf("peak memory (child processes) ...\n");
    for (const std::string which : {"strata", "peer"}) memory[which] = measure_memory(options, which);
  }

  torch::set_num_threads(options.threads);
  const std::vector<Batch> batches = make_batches(4, options.batch, 42);
  std::vector<Variant> models;
  if (options.only.empty() || options.only == "strata") models.push_back(make_variant("strata"));
  if (options.only.empty() || options.only == "peer") models.push_back(make_variant("peer"));
  for (const Variant& v : models)
    std::printf("parameters: %s %ld\n", v.name == "strata" ? "strata" : "torch::nn::Transformer", long(v.parameters));

  struct Run {
    std::size_t model;
    int threads;
    std::string label;
    std::vector<double> seconds, tokens_per_second;
  };
  std::vector<Run> runs;
  for (std::size_t m = 0; m < models.size(); ++m) runs.push_back({m, options.threads, models[m].name, {}, {}});
  const bool scaling = options.threads > 1 && options.only.empty();
  if (scaling) runs.push_back({0, 1, "strata_1thread", {}, {}});

  std::size_t next = 0;
  for (int w = 0; w < options.warmup; ++w)
    for (Run& run : runs) {
      torch::set_num_threads(run.threads);
      models[run.model].step(batches[next++ % batches.size()]);
    }
  std::vector<double> others;  // other processes' CPU use per round, in cores
  std::unique_ptr<torch::autograd::profiler::RecordProfile> trace;
  if (!options.trace.empty()) {
    std::printf("tracing the timed rounds to %s (profiler overhead included in these timings)\n", options.trace.c_str());
    trace = std::make_unique<torch::autograd::profiler::RecordProfile>(options.trace);
  }
  // A round during which other processes used more than kBusyCores is set aside and run
  // again (at most `rounds` extra times): with as many threads as cores, a busy neighbour
  // stalls libtorch's parallel regions and one step can take several times as long.
  std::vector<bool> clean;  // per round attempted
  int clean_rounds = 0;
  for (int round = 0; clean_rounds < options.rounds && round < 2 * options.rounds; ++round) {
    const CpuSample round_start = cpu_sample();
    for (std::size_t k = 0; k < runs.size(); ++k) {
      Run& run = runs[(k + round) % runs.size()];
      const Batch& batch = batches[round % batches.size()];  // every variant gets the same batch
      torch::set_num_threads(run.threads);
      const auto start = Clock::now();
      models[run.model].step(batch);
      const double s = seconds_since(start);
      run.seconds.push_back(s);
      run.tokens_per_second.push_back(batch.tokens / s);
    }
    others.push_back(other_cores(round_start, cpu_sample()));
    clean.push_back(others.back() <= kBusyCores);
    clean_rounds += clean.back();
    std::printf("  round %d:", round + 1);
    for (const Run& run : runs) std::printf(" %s %.2f s", run.label.c_str(), run.seconds.back());
    std::printf("  (other processes: %.2f cores%s)\n", others.back(), clean.back() ? "" : "; set aside, busy");
    std::fflush(stdout);
  }
  trace.reset();
  torch::set_num_threads(options.threads);

  const std::string load_end = load_average();
  // The medians are over the clean rounds, or over every round when fewer than half were clean.
  const bool use_all = clean_rounds * 2 < options.rounds;
  double others_max = 0;
  for (std::size_t r = 0; r < others.size(); ++r)
    if (use_all || clean[r]) others_max = std::max(others_max, others[r]);
  auto kept = [&](const std::vector<double>& values) {
    std::vector<double> out;
    for (std::size_t r = 0; r < values.size(); ++r)
      if (use_all || clean[r]) out.push_back(values[r]);
    return out;
  };
  const int used_rounds = use_all ? static_cast<int>(others.size()) : clean_rounds;
  std::map<std::string, double> tps, step_s;
  for (const Run& run : runs) {
    tps[run.label] = median(kept(run.tokens_per_second));
    step_s[run.label] = median(kept(run.seconds));
  }
  json result{{"benchmark", "training"},
              {"model", strata_config().to_json()},
              {"batch", options.batch},
              {"source_length_max", kSourceLen},
              {"target_length_max", kTargetLen},
              {"tokens_counted", "real (non-padding) source + target tokens"},
              {"threads", options.threads},
              {"warmup_steps", options.warmup},
              {"rounds", options.rounds},
              {"quick", options.quick},
              {"load_average_start", load_start},
              {"load_average_end", load_end},
              {"other_processes_cores_before", others_start},
              {"other_processes_cores_per_round", others},
              {"round_clean", clean},
              {"rounds_used", used_rounds},
              {"busy_threshold_cores", kBusyCores},
              {"memory_method",
               "child process per model: VmHWM after 3 steps minus VmRSS before building the model; "
               "maxrss = the child's ru_maxrss from wait4"}};
  for (const Run& run : runs) {
    json r{{"threads", run.threads},
           {"median_step_seconds", step_s[run.label]},
           {"median_tokens_per_second", tps[run.label]},
           {"step_seconds", run.seconds},
           {"parameters", models[run.model].parameters}};
    if (memory.contains(run.label)) {
      r["peak_rss_growth_mb"] = memory[run.label].growth_mb;
      r["child_maxrss_mb"] = memory[run.label].maxrss_mb;
    }
    result[run.label] = r;
  }

  std::printf("\n%-44s %9s %11s %16s %14s\n", "", "step (s)", "tokens/s", "peak RSS growth", "child maxrss");
  for (const Run& run : runs) {
    const char* label = run.label == "strata"  ? "strata Seq2Seq"
                        : run.label == "peer" ? "torch::nn::Transformer (peer)"
                                              : "strata Seq2Seq, 1 thread";
    std::printf("%-44s %9.3f %11.0f", label, step_s[run.label], tps[run.label]);
    if (memory.contains(run.label))
      std::printf(" %13.0f MB %11.0f MB", memory[run.label].growth_mb, memory[run.label].maxrss_mb);
    std::printf("\n");
  }
  if (options.only.empty()) {
    const double ratio = tps["strata"] / tps["peer"];
    // The same ratio round by round (both models ran the same batch back to back), then its median.
    std::vector<double> paired;
    const auto& s_runs = runs[0].seconds;
    const auto& p_runs = runs[1].seconds;
    for (std::size_t r = 0; r < s_runs.size(); ++r)
      if (use_all || clean[r]) paired.push_back(p_runs[r] / s_runs[r]);
    const double paired_ratio = median(paired);
    result["ratio_tokens_per_second"] = ratio;
    result["ratio_per_round"] = paired;
    result["ratio_per_round_median"] = paired_ratio;
    std::printf("ratio strata/peer, tokens/s (median of %d rounds%s): %.3f  (target >= 1.0); "
                "median of the per-round ratios %.3f, range %.3f-%.3f\n",
                used_rounds, use_all ? ", busy ones included" : "", ratio, paired_ratio,
                *std::min_element(paired.begin(), paired.end()), *std::max_element(paired.begin(), paired.end()));
    double speedup = 0;
    if (scaling) {
      speedup = tps["strata"] / tps["strata_1thread"];
      result["thread_speedup"] = speedup;
      std::printf("thread scaling, strata: 1 thread %.0f tokens/s, %d threads %.0f tokens/s, speed-up %.2fx\n",
                  tps["strata_1thread"], options.threads, tps["strata"], speedup);
    }
    std::printf("other processes' CPU use during the rounds used: up to %.2f cores%s; load average at end: %s\n",
                others_max, others_max > kBusyCores ? " -- noisy, rerun when the machine is quiet" : "", load_end.c_str());
    std::printf("\ntraining: strata %.0f tok/s, torch::nn::Transformer %.0f tok/s, ratio %.2f "
                "(peak RSS growth %.0f MB vs %.0f MB)",
                tps["strata"], tps["peer"], ratio, memory["strata"].growth_mb, memory["peer"].growth_mb);
    if (scaling) std::printf("; strata 1->%d threads %.2fx", options.threads, speedup);
    std::printf("\n");
  }
  strata::write_file_atomic(options.json_path, result.dump(2) + "\n");
  std::printf("results: %s\n", options.json_path.c_str());
  return 0;
}
