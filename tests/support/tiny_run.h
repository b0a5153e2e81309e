#pragma once
// The setting most CLI tests train in: the toy summaries (toy_words.h), a byte-level BPE
// tokenizer trained on them with `strata`, and DIR/tiny.toml, a one-layer model of width 32 on
// them, with the sections' lines the test chooses.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/cli.h"
#include "support/toy_words.h"

namespace strata::test_support {

struct TinyRun {
  std::uint32_t seed = 7;
  int words = 8;  // words per sentence of the toy documents
  std::string data = "max_source_tokens = 64\n";
  std::string train = "max_steps = 6\nwarmup_steps = 2\neval_every = 3\neval_docs = 4\n";
  std::string decode = "";  // [decode] lines; none when empty
};

// Writes DIR/train.jsonl, valid.jsonl, tok/ and tiny.toml. The tokenizer's training result.
inline CliResult write_tiny_run(const std::filesystem::path& dir, const TinyRun& run) {
  write_toy_summaries(dir, run.seed, run.words);
  const CliResult tokenizer = run_strata("tokenizer train --input " + (dir / "train.jsonl").string() + " --out " +
                                             (dir / "tok").string() + " --vocab-size 300 --type byte-bpe",
                                         dir);
  std::ofstream(dir / "tiny.toml") << "[model]\nd_model = 32\nheads = 2\nd_ff = 64\nencoder_layers = 1\n"
                                      "decoder_layers = 1\nmax_positions = 128\n"
                                      "[data]\ntrain = \"" << (dir / "train.jsonl").string() << "\"\nvalid = \""
                                   << (dir / "valid.jsonl").string() << "\"\ntokenizer = \"" << (dir / "tok").string()
                                   << "\"\n" << run.data << "[train]\n" << run.train << "max_tokens = 512\nthreads = 1\n"
                                   << (run.decode.empty() ? "" : "[decode]\n" + run.decode);
  return tokenizer;
}

}  // namespace strata::test_support
