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
// Timing (strata/bench/timing.h: interleave): both models live in this process; after warm-up
// steps, each round runs one step of every variant (strata at all threads, the peer at all
// threads, strata at 1 thread, and with --peer PyTorch 2.6's nn.Transformer in its own process,
// driven in lockstep: strata/bench/peer_program.h) on the same batch (4 batches in turn; the
// PyTorch peer draws its own 4 of the same shapes), in an order that rotates from round to
// round, and the median step time of each variant is reported. A round during
// which other processes used more than 0.3 cores is set aside and run again, up to `rounds`
// extra times. Peak memory: each model also runs in a child process of its own
// (strata/bench/child_process.h), which reads VmRSS before building the model and VmHWM (peak
// RSS) after 3 steps; the growth is reported, and the child's whole-process ru_maxrss beside it.
//
// Usage: bench_training [--quick] [--json FILE] [--batch B] [--rounds R] [--threads T]
//                       [--only strata|peer] [--trace FILE]
//   --json defaults to $STRATA_BENCH_JSON_DIR/bench_training.json, else ./bench_training.json.
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "strata/bench/blas_info.h"
#include "strata/nn/linear_product.h"
#include "strata/bench/child_process.h"
#include "strata/bench/cpu_load.h"
#include "strata/core/memory_reuse.h"
#include "strata/bench/peer_program.h"
#include "strata/bench/flags.h"
#include "strata/bench/session.h"
#include "strata/bench/table.h"
#include "strata/bench/timing.h"
#include "strata/core/files.h"
#include "strata/models/collate.h"
#include "strata/models/model_config.h"
#include "strata/models/seq2seq.h"
#include "strata/train/adamw.h"
#include "strata/train/task.h"

namespace {

using Json = nlohmann::ordered_json;

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
using strata::bench::kBusyCores;

struct Options {
  strata::bench::RunOptions run;  // rounds: 7, or 2 with --quick
  std::int64_t batch = 0;         // 0: 8, or 2 with --quick
  int warmup = 2;                 // 1 with --quick
  std::string only;   // "strata" or "peer": time that model alone (for perf), no memory children
  std::string trace;  // libtorch profiler (chrome trace JSON) over the timed rounds
  std::string peer;   // bench/peers/run: also PyTorch 2.6's nn.Transformer (bench/peers/transformer.py)
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
  config.architecture = "seq2seq";
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

// The child: build one variant, run 3 steps, report RSS before and the peak after.
void run_child(const Options& options) {
  strata::bench::prepare_child(options.run.threads);
  strata::bench::MemoryMarks marks;
  marks.inputs_built();  // before the model: its growth is the model's and its steps'
  const std::vector<Batch> batches = make_batches(1, options.batch, 7);
  Variant v = make_variant(options.run.child);
  for (int i = 0; i < 3; ++i) v.step(batches[0]);
  marks.rounds_done();
  Json out = Json::object();
  marks.add_to(out);
  strata::write_file_atomic(options.run.child_out, out.dump());
}

Options parse(int argc, char** argv) {
  Options o;
  CLI::App app("Training throughput: strata's Seq2Seq against torch::nn::Transformer of the same size", "bench_training");
  strata::bench::add_run_flags(app, o.run, {"small and short: batch 2, 2 rounds, 1 warm-up step (a smoke test)",
                                            "timed rounds (default 7; 2 with --quick)"});
  app.add_option("--batch", o.batch, "rows a batch (default 8; 2 with --quick)")->check(CLI::PositiveNumber);
  app.add_option("--only", o.only, "one model alone, e.g. under perf record (no memory children)")
      ->check(CLI::IsMember({"strata", "peer"}));
  app.add_option("--trace", o.trace, "libtorch profiler over the timed rounds: per-op chrome trace JSON");
  app.add_option("--peer", o.peer,
                 "the peer runner, bench/peers/run: also times PyTorch 2.6's nn.Transformer on the same model and "
                 "batch shapes with the same threads, its rounds interleaved with strata's (target: strata >= 2x)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e));
  }
  o.run.resolve(7, 2);
  if (o.batch == 0) o.batch = o.run.quick ? 2 : 8;
  if (o.run.quick) o.warmup = 1;
  if (o.run.json.empty()) o.run.json = strata::bench::default_json_path("bench_training");
  return o;
}

// The threads of the next step, switched between rounds through OpenMP alone (which libtorch's
// and OpenBLAS's parallel regions read): at::set_num_threads also rebuilds libtorch's own
// pthreadpool, idle here, whose new worker then spins (about 30 ms a switch, by perf) beside
// the step that follows, on a core the step needs.
void use_threads(int threads) { omp_set_num_threads(threads); }

// A timed variant: one model at a thread count.
struct Run {
  std::size_t model;  // in `models`, or kOwnProcess: PyTorch 2.6's, in its own process
  int threads;
  std::string label;
};
constexpr std::size_t kOwnProcess = static_cast<std::size_t>(-1);

// The PyTorch 2.6 peer's answers, round by round: its own step time, CPU time and tokens.
struct PeerRounds {
  std::vector<double> ms, cpu_ms, tokens;

  void add(const std::optional<nlohmann::ordered_json>& answer) {
    if (!answer) {
      std::printf("the PyTorch 2.6 peer stopped answering (its output is above); run again without --peer\n");
      std::exit(1);
    }
    ms.push_back((*answer)["ms"].get<double>());
    cpu_ms.push_back((*answer)["cpu_ms"].get<double>());
    tokens.push_back((*answer)["tokens"].get<double>());
  }
};

}  // namespace

int main(int argc, char** argv) {
  // As the strata command does, and as bench/peers/run has the PyTorch peer do: every side
  // reuses freed memory, so none pays a page fault per 4 KiB of each step's activations.
  strata::keep_freed_memory();
  const Options options = parse(argc, argv);
  if (options.run.is_child()) {
    run_child(options);
    return 0;
  }
  strata::bench::Session session("training", {"bench_training"}, options.run, kBusyCores);
  const std::string load_start = strata::bench::load_average();
  std::printf("training throughput: Seq2Seq %ld+%ld layers, d_model %ld, %ld heads, d_ff %ld, vocab %ld, "
              "GELU, dropout %.1f, post-norm\n",
              long(kLayers), long(kLayers), long(kDModel), long(kHeads), long(kDff), long(kVocab), kDropout);
  std::printf("batch %ld x (source <= %ld, target <= %ld), %d threads, %d warm-up steps, %d timed rounds%s\n",
              long(options.batch), long(kSourceLen), long(kTargetLen), options.run.threads, options.warmup,
              options.run.rounds, options.run.quick ? " (--quick)" : "");
  std::printf("BLAS: %s\n", strata::bench::blas_description().c_str());
  std::printf("strata's linear layers: %s (STRATA_LINEAR=libtorch: libtorch's)\n", strata::nn::linear_products());
  session.print_load();

  // Peak memory first, each model in a child process of its own, before any thread pool starts.
  const bool both = options.only.empty();
  if (both) {
    std::printf("peak memory (child processes) ...\n");
    std::vector<std::string> args = options.run.child_args();
    for (const std::string& word : {std::string("--batch"), std::to_string(options.batch)}) args.push_back(word);
    session.measure({"strata", "peer"}, args);
  }

  torch::set_num_threads(options.run.threads);
  const std::vector<Batch> batches = make_batches(4, options.batch, 42);
  std::vector<Variant> models;
  if (both || options.only == "strata") models.push_back(make_variant("strata"));
  if (both || options.only == "peer") models.push_back(make_variant("peer"));
  for (const Variant& v : models)
    std::printf("parameters: %s %ld\n", v.name == "strata" ? "strata" : "torch::nn::Transformer", long(v.parameters));

  std::vector<Run> runs;
  for (std::size_t m = 0; m < models.size(); ++m) runs.push_back({m, options.run.threads, models[m].name});
  const bool scaling = options.run.threads > 1 && both;
  if (scaling) runs.push_back({0, 1, "strata_1thread"});
  // PyTorch 2.6 in a process of its own (it builds its model and warms up before answering),
  // one training step per request, between this process's steps.
  std::unique_ptr<strata::bench::PeerProcess> torch26;
  if (both && !options.peer.empty())
    torch26 = strata::bench::PeerProcess::start(
        options.peer, "transformer.py",
        {"--batch", std::to_string(options.batch), "--threads", std::to_string(options.run.threads), "--warmup",
         std::to_string(options.warmup)},
        options.run.threads);
  PeerRounds torch26_rounds;
  if (torch26) runs.push_back({kOwnProcess, options.run.threads, "torch26"});

  std::size_t next = 0;
  for (int w = 0; w < options.warmup; ++w)
    for (const Run& run : runs) {
      if (run.model == kOwnProcess) continue;  // it warmed up before its first answer
      use_threads(run.threads);
      models[run.model].step(batches[next++ % batches.size()]);
    }
  std::unique_ptr<torch::autograd::profiler::RecordProfile> trace;
  if (!options.trace.empty()) {
    std::printf("tracing the timed rounds to %s (profiler overhead included in these timings)\n", options.trace.c_str());
    trace = std::make_unique<torch::autograd::profiler::RecordProfile>(options.trace);
  }
  std::vector<std::function<void(int)>> steps;
  for (const Run& run : runs)
    if (run.model == kOwnProcess)
      steps.push_back([&torch26, &torch26_rounds](int round) { torch26_rounds.add(torch26->round(round)); });
    else
      steps.push_back([&models, &batches, run](int round) {
        use_threads(run.threads);
        models[run.model].step(batches[static_cast<std::size_t>(round) % batches.size()]);  // the same batch for all
      });
  strata::bench::Interleaved t =
      strata::bench::interleave(steps, options.run.rounds, kBusyCores, [&torch26] { return torch26 ? torch26->rounds_cpu_ms() : 0.0; });
  if (torch26) {
    // The peer's own clocks for its steps: this process's clock around a request adds the
    // pipe's round trip.
    t.ms.back() = torch26_rounds.ms;
    t.cpu_ms.back() = torch26_rounds.cpu_ms;
  }
  trace.reset();
  use_threads(options.run.threads);
  for (std::size_t r = 0; r < t.others.size(); ++r) {
    std::printf("  round %zu:", r + 1);
    for (std::size_t k = 0; k < runs.size(); ++k) std::printf(" %s %.2f s", runs[k].label.c_str(), t.ms[k][r] / 1e3);
    std::printf("  (other processes: %.2f cores%s)\n", t.others[r], t.clean[r] ? "" : "; set aside, busy");
  }

  const std::string load_end = strata::bench::load_average();
  double others_max = 0;
  for (std::size_t r = 0; r < t.others.size(); ++r)
    if (t.kept(r)) others_max = std::max(others_max, t.others[r]);
  const auto used_rounds = t.kept_of(t.others).size();
  std::map<std::string, double> tps, step_s, cores;
  std::map<std::string, std::vector<double>> per_round_tps;
  Json cases = Json::object();
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const Run& run = runs[k];
    std::vector<double> seconds, tokens_per_second;
    for (std::size_t r = 0; r < t.others.size(); ++r) {
      seconds.push_back(t.ms[k][r] / 1e3);
      const double tokens = run.model == kOwnProcess ? torch26_rounds.tokens[r] : batches[r % batches.size()].tokens;
      tokens_per_second.push_back(tokens / seconds.back());
    }
    per_round_tps[run.label] = tokens_per_second;
    tps[run.label] = strata::bench::median_of(t.kept_of(tokens_per_second));
    step_s[run.label] = t.median_ms(k) / 1e3;
    // This process's CPU time over the wall time: how many cores a variant kept busy (for the peer in its
    // own process, its own clocks'). A 1-thread variant should read about 1.
    cores[run.label] = t.median_cpu_ms(k) / t.median_ms(k);
    Json entry{{"threads", run.threads},
               {"median_step_seconds", step_s[run.label]},
               {"cores_busy", cores[run.label]},
               {"median_tokens_per_second", tps[run.label]},
               {"step_seconds", seconds},
               {"parameters", run.model == kOwnProcess ? torch26->ready()["parameters"].get<std::int64_t>()
                                                       : models[run.model].parameters}};
    if (both && run.threads == options.run.threads && run.model != kOwnProcess) {
      entry["peak_rss_growth_mb"] = session[run.label].growth_mb;
      entry["child_maxrss_mb"] = session[run.label].maxrss_mb;
    }
    cases[run.label] = std::move(entry);
  }

  std::printf("\n");
  strata::bench::Table table(
      {{"", -44}, {"step (s)", 9}, {"tokens/s", 11}, {"cores busy", 11}, {"peak RSS growth", 16}, {"child maxrss", 14}});
  for (const Run& run : runs) {
    const char* label = run.label == "strata"    ? "strata Seq2Seq"
                        : run.label == "peer"    ? "torch::nn::Transformer (peer)"
                        : run.label == "torch26" ? "PyTorch 2.6 nn.Transformer (own process)"
                                                 : "strata Seq2Seq, 1 thread";
    const bool memory = cases[run.label].contains("child_maxrss_mb");
    table.row({label, strata::bench::fixed(step_s[run.label], 3), strata::bench::fixed(tps[run.label], 0),
               strata::bench::fixed(cores[run.label], 2), memory ? strata::bench::fixed(session[run.label].growth_mb, 0) + " MB" : "",
               memory ? strata::bench::fixed(session[run.label].maxrss_mb, 0) + " MB" : ""});
  }
  table.print();
  Json findings{{"model", strata_config().to_json()},
                {"load_average_start", load_start},
                {"load_average_end", load_end},
                {"other_processes_cores_per_round", t.others},
                {"round_clean", t.clean},
                {"rounds_used", used_rounds},
                {"memory_method",
                 "child process per model: VmHWM after 3 steps minus VmRSS before building the model; "
                 "maxrss = the child's ru_maxrss from wait4"}};
  if (both) {
    const double ratio = tps["strata"] / tps["peer"];
    // The same ratio round by round (both models ran the same batch back to back), then its median.
    const std::vector<double> paired = t.ratios(1, 0);  // peer time / strata time = strata tokens/s / peer's
    const double paired_ratio = strata::bench::median_of(paired);
    findings["ratio_tokens_per_second"] = ratio;
    findings["ratio_per_round"] = paired;
    findings["ratio_per_round_median"] = paired_ratio;
    std::printf("ratio strata/peer, tokens/s (median of %zu rounds%s): %.3f  (target >= 1.0); "
                "median of the per-round ratios %.3f, range %.3f-%.3f\n",
                used_rounds, t.busy_rounds_included ? ", busy ones included" : "", ratio, paired_ratio,
                *std::min_element(paired.begin(), paired.end()), *std::max_element(paired.begin(), paired.end()));
    double speedup = 0;
    if (scaling) {
      speedup = tps["strata"] / tps["strata_1thread"];
      // Round by round too: both ran the same batch in the same round, so a host whose speed
      // drifts from minute to minute moves both sides of each ratio.
      auto index_of = [&runs](const std::string& label) {
        return static_cast<std::size_t>(
            std::find_if(runs.begin(), runs.end(), [&](const Run& run) { return run.label == label; }) - runs.begin());
      };
      const std::vector<double> per_round = t.ratios(index_of("strata_1thread"), index_of("strata"));
      findings["thread_speedup"] = speedup;
      findings["thread_speedup_per_round"] = per_round;
      findings["thread_speedup_per_round_median"] = strata::bench::median_of(per_round);
      std::printf("thread scaling, strata: 1 thread %.0f tokens/s, %d threads %.0f tokens/s, speed-up %.2fx; "
                  "median of the per-round speed-ups %.2fx, range %.2f-%.2f\n",
                  tps["strata_1thread"], options.run.threads, tps["strata"], speedup,
                  strata::bench::median_of(per_round), *std::min_element(per_round.begin(), per_round.end()),
                  *std::max_element(per_round.begin(), per_round.end()));
    }
    std::printf("other processes' CPU use during the rounds used: up to %.2f cores%s; load average at end: %s\n",
                others_max, others_max > kBusyCores ? " -- noisy, rerun when the machine is quiet" : "", load_end.c_str());
    std::printf("\ntraining: strata %.0f tok/s, torch::nn::Transformer %.0f tok/s, ratio %.2f "
                "(peak RSS growth %.0f MB vs %.0f MB)",
                tps["strata"], tps["peer"], ratio, session["strata"].growth_mb, session["peer"].growth_mb);
    if (scaling) std::printf("; strata 1->%d threads %.2fx", options.run.threads, speedup);
    std::printf("\n");
  }
  if (torch26) {
    const std::optional<Json> summary = torch26->finish();
    // Round by round: strata's tokens/s over the peer's in the same round, then their median.
    std::vector<double> paired;
    for (std::size_t r = 0; r < t.others.size(); ++r)
      if (t.kept(r)) paired.push_back(per_round_tps["strata"][r] / per_round_tps["torch26"][r]);
    const double ratio = tps["strata"] / tps["torch26"], paired_ratio = strata::bench::median_of(paired);
    const Json& peer = torch26->ready();
    findings["torch26"] = summary ? *summary : peer;
    findings["ratio_to_torch26"] = ratio;
    findings["ratio_to_torch26_per_round"] = paired;
    findings["ratio_to_torch26_per_round_median"] = paired_ratio;
    std::printf("training: strata %.0f tok/s, PyTorch %s nn.Transformer %.0f tok/s (%ld parameters; rounds interleaved "
                "with strata's), ratio %.2f (target >= 2.0: %s); median of the per-round ratios %.2f, range "
                "%.2f-%.2f; its BLAS: %s; its malloc: %s\n",
                tps["strata"], peer["torch"].get<std::string>().c_str(), tps["torch26"],
                long(peer["parameters"].get<std::int64_t>()), ratio, ratio >= 2.0 ? "met" : "NOT met", paired_ratio,
                *std::min_element(paired.begin(), paired.end()), *std::max_element(paired.begin(), paired.end()),
                peer["blas"].get<std::string>().c_str(), peer.value("malloc", "not reported").c_str());
  }
  session.write_json({{"batch", options.batch},
                      {"source_length_max", kSourceLen},
                      {"target_length_max", kTargetLen},
                      {"tokens_counted", "real (non-padding) source + target tokens"},
                      {"warmup_steps", options.warmup}},
                     findings, std::move(cases));
  return 0;
}
