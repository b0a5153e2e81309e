// Training through SentencePieceTrainer. sentencepiece reads the sentences from files (an
// in-memory list is written to a temporary file first: the trainer's SentenceIterator would
// need util::Status members linked in, see sentencepiece_library.h) and hands the model back
// serialized, so it writes nothing itself; the model is written atomically here.
#include <unistd.h>

#include <fstream>
#include <unordered_map>

#include <fmt/format.h>

#include "sentencepiece_library.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/text/sentencepiece_tokenizer.h"
#include "strata/text/tokenizer_sidecar.h"

namespace strata {

namespace {

// sentencepiece's messages start with "./src/file.cc(660) [check] "; keep the words.
std::string trainer_message(const std::string& message) {
  const std::size_t end_of_check = message.find("] ");
  return end_of_check == std::string::npos ? message : message.substr(end_of_check + 2);
}

std::unordered_map<std::string, std::string> trainer_arguments(const SentencePieceOptions& o) {
  if (o.model_type != "unigram" && o.model_type != "bpe")
    throw Error(fmt::format("model type '{}': expected unigram or bpe", o.model_type));
  if (o.character_coverage <= 0 || o.character_coverage > 1)
    throw Error(fmt::format("character coverage {} is outside (0, 1]", o.character_coverage));
  if (o.num_threads < 1 || o.max_sentence_length < 1)
    throw Error("threads and max sentence length must be positive");
  if (o.normalization != "nmt_nfkc" && o.normalization != "nmt_nfkc_cf" && o.normalization != "identity")
    throw Error(fmt::format("normalization '{}': expected nmt_nfkc, nmt_nfkc_cf or identity", o.normalization));
  const SpecialTokens& s = o.specials;
  if (s.unk.empty()) throw Error("sentencepiece needs an unk token");

  std::unordered_map<std::string, std::string> args{
      {"model_type", o.model_type},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"character_coverage", fmt::format("{}", o.character_coverage)},
      {"max_sentence_length", std::to_string(o.max_sentence_length)},
      {"num_threads", std::to_string(o.num_threads)},
      {"normalization_rule_name", o.normalization}};
  if (o.input_sentence_size > 0) {
    args["input_sentence_size"] = std::to_string(o.input_sentence_size);
    args["shuffle_input_sentence"] = "true";
  }
  if (o.normalization == "identity") {
    args["remove_extra_whitespaces"] = "false";
    args["add_dummy_prefix"] = "false";
  }
  int next_id = 0;
  const std::pair<const std::string*, const char*> control[] = {
      {&s.bos, "bos"}, {&s.eos, "eos"}, {&s.pad, "pad"}, {&s.unk, "unk"}};
  for (const auto& [piece, role] : control) {
    args[std::string(role) + "_id"] = piece->empty() ? "-1" : std::to_string(next_id++);
    if (!piece->empty()) args[std::string(role) + "_piece"] = *piece;
  }
  std::string user_defined;
  std::vector<std::string> symbols{s.sep, s.mask};
  symbols.insert(symbols.end(), s.structural.begin(), s.structural.end());
  for (const std::string& symbol : symbols) {
    if (symbol.empty()) continue;
    // The trainer reads this list comma-separated.
    if (symbol.find(',') != std::string::npos)
      throw Error(
          fmt::format("special token '{}' contains a comma, which sentencepiece cannot "
                      "take",
                      symbol));
    if (!user_defined.empty()) user_defined += ',';
    user_defined += symbol;
  }
  if (!user_defined.empty()) args["user_defined_symbols"] = user_defined;
  if (o.vocab_size <= next_id + static_cast<int>(symbols.size()))
    throw Error(
        fmt::format("vocab size {} leaves no room beside the special tokens", o.vocab_size));
  return args;
}

std::unique_ptr<SentencePieceTokenizer> train_from(const std::string& inputs,
                                                   const SentencePieceOptions& options,
                                                   const std::filesystem::path& out_dir) {
  std::unordered_map<std::string, std::string> args = trainer_arguments(options);
  args["input"] = inputs;
  std::string model;
  if (const auto error = spm::train(args, &model))
    throw Error("sentencepiece training failed: " + trainer_message(*error));
  const std::filesystem::path model_file = out_dir / "tokenizer.model";
  auto tokenizer =
      std::make_unique<SentencePieceTokenizer>(model, options.specials, model_file.string());
  write_file_atomic(model_file, model);
  write_sidecar(out_dir, {tokenizer->kind(), model_file.filename().string(), options.specials});
  return tokenizer;
}

// Removes the temporary sentence file however training ends.
struct RemoveOnExit {
  std::filesystem::path path;
  ~RemoveOnExit() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

}  // namespace

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::train(
    std::span<const std::string> sentences, const SentencePieceOptions& options,
    const std::filesystem::path& out_dir) {
  std::filesystem::create_directories(out_dir);
  const RemoveOnExit temporary{out_dir / ("sentences.tmp." + std::to_string(::getpid()))};
  {
    std::ofstream out(temporary.path, std::ios::binary);
    for (const std::string& sentence : sentences) out << sentence << '\n';
    if (!out.flush()) throw Error(temporary.path.string() + ": cannot write");
  }
  return train_from(temporary.path.string(), options, out_dir);
}

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::train_files(
    std::span<const std::filesystem::path> files, const SentencePieceOptions& options,
    const std::filesystem::path& out_dir) {
  std::string inputs;
  for (const std::filesystem::path& file : files) {
    if (!std::ifstream(file)) throw Error(file.string() + ": cannot open");
    // The trainer reads its input list comma-separated.
    if (file.string().find(',') != std::string::npos)
      throw Error(file.string() + ": sentencepiece cannot take a file name with a comma");
    if (!inputs.empty()) inputs += ',';
    inputs += file.string();
  }
  if (inputs.empty()) throw Error("no input files to train on");
  return train_from(inputs, options, out_dir);
}

}  // namespace strata
