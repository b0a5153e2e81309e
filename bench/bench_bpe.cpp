// Byte-level BPE encode throughput, single-threaded, against sentencepiece BPE on the same
// text (the peer, measured in the same run).
//
// Text: the roff sources of the installed section-7 man pages (/usr/share/man/man7, English
// prose with markup), up to 4 MB, encoded line by line by both tokenizers. Each tokenizer is
// trained in the setup on that text with an 8000-piece vocabulary: strata's byte-level BPE
// trainer, and sentencepiece's BPE trainer on a 30,000-line sample.
//
// BM_ByteBpeEncodeCold starts every pass with an empty word cache (a first pass over a new
// corpus); BM_ByteBpeEncodeWarm reuses it, as a long-running job does. sentencepiece keeps
// no cache. Throughput is in bytes of input text per second; the ratio is printed at the end
// and written to $STRATA_BENCH_JSON_DIR/bench_bpe.json (strata/bench/session.h's shape).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "strata/bench/session.h"
#include "strata/core/files.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/sentencepiece_tokenizer.h"

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kMaxBytes = 4 << 20;
constexpr int kVocabSize = 8000;

struct Corpus {
  std::vector<std::string> lines;
  std::size_t bytes = 0;
};

Corpus man_page_text() {
  std::vector<fs::path> pages;
  for (const auto& entry : fs::directory_iterator("/usr/share/man/man7"))
    if (entry.path().extension() == ".gz") pages.push_back(entry.path());
  std::sort(pages.begin(), pages.end());
  Corpus corpus;
  for (const fs::path& page : pages) {
    const std::string text = strata::read_maybe_gzip(page);
    for (std::size_t start = 0; start < text.size() && corpus.bytes < kMaxBytes;) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      if (end > start) {
        corpus.lines.push_back(text.substr(start, end - start));
        corpus.bytes += end - start;
      }
      start = end + 1;
    }
    if (corpus.bytes >= kMaxBytes) break;
  }
  return corpus;
}

struct Setup {
  Corpus corpus;
  fs::path dir;
  std::unique_ptr<strata::ByteBpeTokenizer> byte_bpe;
  std::unique_ptr<strata::SentencePieceTokenizer> sentencepiece;

  Setup() : corpus(man_page_text()) {
    dir = fs::temp_directory_path() / ("strata-bench-bpe-" + std::to_string(::getpid()));
    strata::SpecialTokens specials;
    specials.structural = strata::SpecialTokens::default_structural();
    byte_bpe = strata::ByteBpeTokenizer::train(corpus.lines, kVocabSize, specials);
    byte_bpe->save(dir / "byte-bpe");
    strata::SentencePieceOptions options;
    options.model_type = "bpe";
    options.vocab_size = kVocabSize;
    options.input_sentence_size = 30000;
    sentencepiece = strata::SentencePieceTokenizer::train(corpus.lines, options, dir / "spm");
  }
  ~Setup() { fs::remove_all(dir); }
};

Setup& setup() {
  static Setup s;
  return s;
}

std::size_t encode_all(const strata::Tokenizer& tokenizer, const Corpus& corpus) {
  std::size_t tokens = 0;
  for (const std::string& line : corpus.lines) tokens += tokenizer.encode(line).size();
  return tokens;
}

void report(benchmark::State& state, std::size_t tokens) {
  const Corpus& corpus = setup().corpus;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * corpus.bytes));
  state.counters["bytes/token"] = static_cast<double>(corpus.bytes) / static_cast<double>(tokens);
}

void BM_ByteBpeEncodeCold(benchmark::State& state) {
  std::size_t tokens = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const auto fresh =
        strata::ByteBpeTokenizer::from_tokenizer_json(setup().dir / "byte-bpe" / "tokenizer.json");
    state.ResumeTiming();
    tokens = encode_all(*fresh, setup().corpus);
  }
  report(state, tokens);
}

void BM_ByteBpeEncodeWarm(benchmark::State& state) {
  std::size_t tokens = encode_all(*setup().byte_bpe, setup().corpus);
  for (auto _ : state) tokens = encode_all(*setup().byte_bpe, setup().corpus);
  report(state, tokens);
}

void BM_SentencePieceBpeEncode(benchmark::State& state) {
  std::size_t tokens = 0;
  for (auto _ : state) tokens = encode_all(*setup().sentencepiece, setup().corpus);
  report(state, tokens);
}

BENCHMARK(BM_ByteBpeEncodeCold)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_ByteBpeEncodeWarm)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_SentencePieceBpeEncode)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Keeps each benchmark's bytes per second for the closing comparison.
class RateReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      const auto it = run.counters.find("bytes_per_second");
      if (it != run.counters.end()) rates[run.benchmark_name()] = it->second.value;
    }
  }
  std::map<std::string, double> rates;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  strata::bench::RunOptions run;
  run.threads = 1;  // both tokenizers encode on one thread
  run.json = strata::bench::default_json_path("bench_bpe");
  strata::bench::Session session("bpe", {"bench_bpe"}, run, 0.3);
  session.print_load();
  const Setup& s = setup();
  std::printf("text: %zu lines, %.1f MB of man7 roff; vocab %d (byte-bpe %d, sentencepiece %d)\n",
              s.corpus.lines.size(), s.corpus.bytes / 1e6, kVocabSize, s.byte_bpe->vocab_size(),
              s.sentencepiece->vocab_size());
  RateReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const auto& r = reporter.rates;
  const auto peer = r.find("BM_SentencePieceBpeEncode/min_time:2.000");
  nlohmann::ordered_json cases = nlohmann::ordered_json::object();
  for (const char* name : {"BM_ByteBpeEncodeCold", "BM_ByteBpeEncodeWarm", "BM_SentencePieceBpeEncode"}) {
    const auto ours = r.find(std::string(name) + "/min_time:2.000");
    if (ours == r.end() || peer == r.end()) continue;
    cases[name] = {{"bytes_per_second", ours->second},
                   {"ratio", ours->second / peer->second},
                   {"ratio_of", std::string(name) + "/BM_SentencePieceBpeEncode"}};
    if (ours != peer)
      std::printf("%s: %.1f MB/s, %.2fx sentencepiece BPE (%.1f MB/s)\n", name, ours->second / 1e6,
                  ours->second / peer->second, peer->second / 1e6);
  }
  session.write_json({{"text_bytes", s.corpus.bytes}, {"lines", s.corpus.lines.size()}, {"vocab", kVocabSize}}, {},
                     std::move(cases));
  benchmark::Shutdown();
  return 0;
}
