// ROUGE throughput: strata against a pure-Python peer on the same 10,000 pairs.
//
// The pairs are generated (deterministic): summaries of about 60 tokens in 3-4 lines, words
// drawn with Zipf frequencies from a made-up vocabulary of roots with English suffixes (so
// that stemming matters); each prediction is its reference with words kept, re-inflected,
// replaced, dropped or inserted, and lines sometimes swapped. Both sides score rouge1,
// rouge2, rougeL and rougeLsum with stemming.
//
// The peer is bench/rouge_peer.py, strata's own pure-Python re-implementation of Google's
// rouge-score algorithm (the package itself cannot be installed here): it needs python3 with
// nltk (Debian: python3-nltk). The bench checks that both give the same scores.
//
// Environment: STRATA_ROUGE_BENCH_PAIRS overrides the number of pairs (default 10000). The
// results go to $STRATA_BENCH_JSON_DIR/bench_rouge.json (strata/bench/session.h's shape): a case
// for each strata pass and the peer, each with its ratio to the peer.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "strata/bench/cpu_load.h"
#include "strata/bench/session.h"
#include "strata/core/files.h"
#include "strata/eval/rouge.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

const std::vector<std::string> kTypes{"rouge1", "rouge2", "rougeL", "rougeLsum"};

struct Pairs {
  std::vector<std::string> references;
  std::vector<std::string> predictions;
};

// Words are root + suffix; a word's rank sets its Zipf weight, function words first.
class Vocabulary {
 public:
  explicit Vocabulary(std::mt19937_64& rng) {
    for (const char* w : {"the",  "of", "and", "to", "a",   "in",   "is", "for", "on",   "that",
                          "with", "as", "by",  "it", "was", "from", "at", "be",  "this", "are"}) {
      words_.push_back({w, ""});
    }
    const std::string consonants = "bcdfghklmnprstvwz", vowels = "aeiou";
    std::uniform_int_distribution<int> syllables(1, 3);
    for (int r = 0; r < 2000; ++r) {
      std::string root;
      for (int s = syllables(rng); s > 0; --s) {
        root += consonants[rng() % consonants.size()];
        root += vowels[rng() % vowels.size()];
        if (rng() % 2) root += consonants[rng() % consonants.size()];
      }
      for (int k = 0; k < 3; ++k) words_.push_back({root, kSuffixes[rng() % kSuffixes.size()]});
    }
    std::vector<double> weights;
    for (std::size_t rank = 1; rank <= words_.size(); ++rank) {
      weights.push_back(1.0 / std::pow(static_cast<double>(rank), 1.07));
    }
    zipf_ = std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
  }

  std::string draw(std::mt19937_64& rng) {
    const Word& w = words_[zipf_(rng)];
    return w.root + w.suffix;
  }
  // The same root with another suffix ("walked" for "walking"), or the word itself.
  static std::string reinflect(const std::string& word, std::mt19937_64& rng) {
    for (const std::string& suffix : kSuffixes) {
      if (!suffix.empty() && word.size() > suffix.size() + 2 && word.ends_with(suffix)) {
        return word.substr(0, word.size() - suffix.size()) + kSuffixes[rng() % kSuffixes.size()];
      }
    }
    return word + kSuffixes[rng() % kSuffixes.size()];
  }

 private:
  struct Word {
    std::string root, suffix;
  };
  static inline const std::vector<std::string> kSuffixes{"",     "s",     "ing",    "ed",   "er",
                                                         "ers",  "ation", "ations", "ness", "ly",
                                                         "ment", "ful",   "ive",    "al"};
  std::vector<Word> words_;
  std::discrete_distribution<std::size_t> zipf_;
};

std::string join_line(std::vector<std::string> words, std::mt19937_64& rng) {
  std::string line;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) line += rng() % 12 == 0 ? ", " : " ";
    line += words[i];
  }
  if (!line.empty()) line[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(line[0])));
  return line + ".";
}

// One sentence per line, as rougeLsum expects.
std::string join_text(const std::vector<std::vector<std::string>>& sentences,
                      std::mt19937_64& rng) {
  std::string text;
  for (const auto& sentence : sentences) {
    if (!text.empty()) text += '\n';
    text += join_line(sentence, rng);
  }
  return text;
}

Pairs generate_pairs(std::size_t count) {
  std::mt19937_64 rng(20240601);
  Vocabulary vocabulary(rng);
  Pairs pairs;
  std::uniform_real_distribution<double> coin(0, 1);
  for (std::size_t p = 0; p < count; ++p) {
    std::vector<std::vector<std::string>> reference(3 + rng() % 2), prediction;
    for (auto& sentence : reference) {
      for (std::size_t n = 60 / reference.size() - 4 + rng() % 9; n > 0; --n) {
        sentence.push_back(vocabulary.draw(rng));
      }
    }
    for (const auto& sentence : reference) {
      std::vector<std::string> out;
      for (const std::string& word : sentence) {
        const double u = coin(rng);
        if (u < 0.55)
          out.push_back(word);
        else if (u < 0.70)
          out.push_back(Vocabulary::reinflect(word, rng));
        else if (u < 0.88)
          out.push_back(vocabulary.draw(rng));
        if (coin(rng) < 0.08) out.push_back(vocabulary.draw(rng));
      }
      prediction.push_back(std::move(out));
    }
    if (coin(rng) < 0.3) std::swap(prediction.front(), prediction.back());
    pairs.references.push_back(join_text(reference, rng));
    pairs.predictions.push_back(join_text(prediction, rng));
  }
  return pairs;
}

void write_pairs(const Pairs& pairs, const fs::path& path) {
  std::string text;
  for (std::size_t i = 0; i < pairs.references.size(); ++i) {
    text += nlohmann::json{{"prediction", pairs.predictions[i]}, {"reference", pairs.references[i]}}
                .dump() +
            "\n";
  }
  strata::write_file_atomic(path, text);
}

// A python3 that can import nltk: the one on PATH, else the system one.
std::string find_python() {
  for (const char* candidate : {"python3", "/usr/bin/python3"}) {
    const std::string probe = std::string(candidate) + " -c 'import nltk' >/dev/null 2>&1";
    if (std::system(probe.c_str()) == 0) return candidate;
  }
  return "";
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Pairs g_pairs;
// threads -> the fastest pass over all pairs, in wall-clock and in CPU seconds (the CPU time
// of one thread is less disturbed by other work on a shared machine).
std::map<int, double> g_best_seconds, g_best_cpu_seconds;

void BM_StrataRouge(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const strata::RougeScorer scorer(kTypes, true);
  double best = 1e300, best_cpu = 1e300;
  for (auto _ : state) {
    const auto start = Clock::now();
    const double start_cpu = strata::bench::process_cpu_ms();
    auto rows = scorer.score_batch(g_pairs.references, g_pairs.predictions, threads);
    benchmark::DoNotOptimize(rows.data());
    best = std::min(best, seconds_since(start));
    best_cpu = std::min(best_cpu, (strata::bench::process_cpu_ms() - start_cpu) / 1e3);
  }
  g_best_cpu_seconds[threads] = best_cpu;
  state.SetItemsProcessed(
      static_cast<std::int64_t>(state.iterations() * g_pairs.references.size()));
  state.SetLabel("pairs, rouge1+2+L+Lsum, stemming");
  g_best_seconds[threads] = best;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  strata::bench::RunOptions run;
  run.resolve(0, 0);
  run.json = strata::bench::default_json_path("bench_rouge");
  strata::bench::Session session("rouge", {"bench_rouge"}, run, 0.3);
  session.print_load();
  const char* env_pairs = std::getenv("STRATA_ROUGE_BENCH_PAIRS");
  const std::size_t count = env_pairs ? std::strtoul(env_pairs, nullptr, 10) : 10000;
  g_pairs = generate_pairs(count);
  const fs::path dir =
      fs::temp_directory_path() / ("strata_bench_rouge_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_pairs(g_pairs, dir / "pairs.jsonl");

  // One pass on a cold stem cache first: later passes find every word already stemmed.
  const strata::RougeScorer scorer(kTypes, true);
  auto start = Clock::now();
  const auto rows = scorer.score_batch(g_pairs.references, g_pairs.predictions, 1);
  const double cold_seconds = seconds_since(start);

  benchmark::RegisterBenchmark("strata_rouge/threads", BM_StrataRouge)
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->MinTime(3)
      ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();

  std::printf("\n%zu pairs, rouge1/rouge2/rougeL/rougeLsum with stemming\n", count);
  std::printf("%-46s %8.0f pairs/s\n",
              "strata, 1 thread, first pass (cold stem cache):", count / cold_seconds);
  for (const auto& [threads, seconds] : g_best_seconds) {
    const std::string label = "strata, " + std::to_string(threads) +
                              (threads == 1 ? " thread" : " threads") + ", best pass:";
    std::printf("%-46s %8.0f pairs/s\n", label.c_str(), count / seconds);
  }

  const std::string python = find_python();
  if (python.empty()) {
    std::printf("peer skipped: no python3 with nltk (Debian: apt-get install python3-nltk)\n");
    fs::remove_all(dir);
    return 0;
  }
  const fs::path script = fs::path(__FILE__).parent_path() / "rouge_peer.py";
  const std::string command =
      python + " " + script.string() + " " + (dir / "pairs.jsonl").string() + " --per-example " +
      (dir / "peer.jsonl").string() + " > " + (dir / "peer_summary.json").string();
  std::printf(
      "peer: %s (strata's pure-Python re-implementation of rouge-score's algorithm, "
      "nltk PorterStemmer; NOT the rouge-score package) ...\n",
      script.filename().c_str());
  std::fflush(stdout);
  if (std::system(command.c_str()) != 0) {
    std::printf("peer failed: %s\n", command.c_str());
    fs::remove_all(dir);
    return 1;
  }
  const auto summary = nlohmann::json::parse(strata::read_file(dir / "peer_summary.json"));
  const double peer_rate = summary["pairs_per_second"].get<double>();
  const double peer_cpu_rate = count / summary["cpu_seconds"].get<double>();
  std::printf("%-46s %8.0f pairs/s (%.0f per CPU second)\n",
              "peer, 1 thread, scoring only:", peer_rate, peer_cpu_rate);
  std::printf("ratio strata/peer: 1 thread, cold cache %.0fx", count / cold_seconds / peer_rate);
  for (const auto& [threads, seconds] : g_best_seconds) {
    std::printf("; %d thread%s %.0fx", threads, threads == 1 ? "" : "s",
                count / seconds / peer_rate);
  }
  std::printf("\n");
  if (g_best_cpu_seconds.contains(1)) {
    std::printf("ratio per CPU second, 1 thread: %.0fx\n",
                count / g_best_cpu_seconds[1] / peer_cpu_rate);
  }

  // Agreement: every P/R/F of every pair, and the mean F per type.
  std::ifstream peer_rows(dir / "peer.jsonl");
  std::string line;
  double max_diff = 0;
  std::vector<double> strata_f(kTypes.size()), peer_f(kTypes.size());
  for (std::size_t i = 0; std::getline(peer_rows, line); ++i) {
    const auto peer = nlohmann::json::parse(line);
    for (std::size_t t = 0; t < kTypes.size(); ++t) {
      const auto& p = peer[kTypes[t]];
      const strata::RougeScore& s = rows.at(i)[t];
      max_diff = std::max({max_diff, std::abs(s.precision - p["precision"].get<double>()),
                           std::abs(s.recall - p["recall"].get<double>()),
                           std::abs(s.fmeasure - p["fmeasure"].get<double>())});
      strata_f[t] += s.fmeasure / count;
      peer_f[t] += p["fmeasure"].get<double>() / count;
    }
  }
  double max_mean_diff = 0;
  for (std::size_t t = 0; t < kTypes.size(); ++t) {
    std::printf("mean F %-9s strata %.6f  peer %.6f\n", kTypes[t].c_str(), strata_f[t], peer_f[t]);
    max_mean_diff = std::max(max_mean_diff, std::abs(strata_f[t] - peer_f[t]));
  }
  std::printf("max |strata - peer|: mean F %.3g; any pair, type and P/R/F %.3g\n", max_mean_diff,
              max_diff);

  // Each pass as a case, its pairs a second over the peer's.
  nlohmann::ordered_json cases{{"strata_cold", {{"label", "strata, 1 thread, first pass (cold stem cache)"},
                                                {"pairs_per_second", count / cold_seconds},
                                                {"ratio", count / cold_seconds / peer_rate},
                                                {"ratio_of", "strata_cold/peer"}}}};
  for (const auto& [threads, seconds] : g_best_seconds) {
    const std::string name = "strata_" + std::to_string(threads) + "_threads";
    cases[name] = {{"label", "strata, " + std::to_string(threads) + " thread(s), best pass"},
                   {"pairs_per_second", count / seconds},
                   {"cpu_seconds", g_best_cpu_seconds[threads]},
                   {"ratio", count / seconds / peer_rate},
                   {"ratio_of", name + "/peer"}};
  }
  cases["peer"] = {{"label", "bench/rouge_peer.py, 1 thread, scoring only"},
                   {"pairs_per_second", peer_rate},
                   {"pairs_per_cpu_second", peer_cpu_rate},
                   {"ratio", 1.0},
                   {"ratio_of", "peer/peer"}};
  session.write_json({{"pairs", count}, {"types", kTypes}, {"stemming", true}},
                     {{"max_mean_f_difference", max_mean_diff}, {"max_difference", max_diff}}, std::move(cases));
  fs::remove_all(dir);
  return 0;
}
