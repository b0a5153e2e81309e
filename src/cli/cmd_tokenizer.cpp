// strata tokenizer train | encode | decode: make a tokenizer from text or a dataset, and run
// any tokenizer strata can load (sentencepiece .model, HF tokenizer.json, GPT-2 vocab.json +
// merges.txt, or a directory holding one of them).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "strata/core/error.h"
#include "strata/core/strings.h"
#include "strata/doc/dataset.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/sentencepiece_tokenizer.h"
#include "strata/text/tokenizer.h"

namespace strata::cli {

namespace {

using ordered_json = nlohmann::ordered_json;

struct TrainOptions {
  std::vector<std::string> inputs;
  std::string jsonl_field = "text";
  std::string out;
  int vocab_size = 8000;
  std::string type = "unigram";
  int structural_levels = 4;
  std::string special;  // comma-separated
  double character_coverage = 0.9995;
  std::string normalization = "nmt_nfkc";
  std::size_t sample = 0;
};

struct EncodeOptions {
  std::string tokenizer;
  std::string text;
  std::string input;
  bool pieces = false;
  bool json = false;
};

struct DecodeOptions {
  std::string tokenizer;
  std::string ids;
  std::string input;
};

// Calls on_line for each line of a file, or of standard input for "-".
template <typename OnLine>
void for_each_line(const std::string& path, OnLine on_line) {
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw Error(path + ": cannot open");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) on_line(line, number);
  if (in.bad()) throw Error(path + ": read error");
}

// A JSON Lines dataset is recognised by content: its first non-blank character is '{'.
bool is_jsonl(const std::string& path) {
  if (path == "-") return (std::cin >> std::ws).peek() == '{';
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  return (in >> std::ws).peek() == '{';
}

void add_lines(std::string_view text, std::vector<std::string>& sentences) {
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    if (end > 0) sentences.emplace_back(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
}

// Training sentences: the non-empty lines of plain text files, or the lines of the chosen
// field(s) of each dataset document.
std::vector<std::string> read_sentences(const TrainOptions& options) {
  std::vector<std::string> sentences;
  for (const std::string& input : options.inputs) {
    if (!is_jsonl(input)) {
      for_each_line(input, [&](const std::string& line, std::size_t) {
        if (!line.empty()) sentences.push_back(line);
      });
      continue;
    }
    DatasetReader reader(input);
    Document document;
    while (reader.next(document)) {
      if (options.jsonl_field != "summary") add_lines(document.text, sentences);
      if (options.jsonl_field != "text") add_lines(document.summary, sentences);
    }
  }
  if (sentences.empty()) throw Error("no training text found in the inputs");
  return sentences;
}

void run_train(const TrainOptions& options) {
  const std::vector<std::string> sentences = read_sentences(options);
  std::size_t bytes = 0;
  for (const std::string& s : sentences) bytes += s.size();
  SpecialTokens specials;
  specials.structural = SpecialTokens::default_structural(options.structural_levels);
  for (std::string_view piece : split(options.special, ',')) {
    if (options.special.empty()) break;
    const std::string token(trim(piece));
    const std::vector<std::string> reserved = specials.all();
    if (token.empty() || std::find(reserved.begin(), reserved.end(), token) != reserved.end())
      throw Error("--special: '" + token + "' is empty or already a special token");
    specials.structural.push_back(token);
  }

  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Tokenizer> tokenizer;
  std::string model_file = "tokenizer.model";
  if (options.type == "byte-bpe") {
    auto byte_bpe = ByteBpeTokenizer::train(sentences, options.vocab_size, specials);
    byte_bpe->save(options.out);
    tokenizer = std::move(byte_bpe);
    model_file = "tokenizer.json";
  } else {
    SentencePieceOptions sp;
    sp.model_type = options.type;
    sp.vocab_size = options.vocab_size;
    sp.character_coverage = options.character_coverage;
    sp.normalization = options.normalization;
    sp.input_sentence_size = options.sample;
    sp.specials = specials;
    tokenizer = SentencePieceTokenizer::train(sentences, sp, options.out);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Compression on (up to) the first 10k sentences: how many bytes each token covers.
  std::size_t sample_bytes = 0, sample_tokens = 0;
  for (std::size_t i = 0; i < sentences.size() && i < 10000; ++i) {
    sample_bytes += sentences[i].size();
    sample_tokens += tokenizer->encode(sentences[i]).size();
  }
  std::printf("vocab size: %d\n", tokenizer->vocab_size());
  const ordered_json stats = {
      {"type", options.type},
      {"vocab_size", tokenizer->vocab_size()},
      {"sentences", sentences.size()},
      {"bytes", bytes},
      {"bytes_per_token", sample_tokens ? double(sample_bytes) / double(sample_tokens) : 0.0},
      {"seconds", seconds},
      {"model", (std::filesystem::path(options.out) / model_file).string()}};
  std::printf("%s\n", stats.dump().c_str());
}

void print_encoding(const Tokenizer& tokenizer, std::string_view text,
                    const EncodeOptions& options) {
  const std::vector<std::int32_t> ids = tokenizer.encode(text);
  std::vector<std::string> pieces;
  if (options.pieces)
    for (const std::int32_t id : ids) pieces.push_back(tokenizer.id_to_piece(id));
  if (options.json) {
    ordered_json line = {{"ids", ids}};
    if (options.pieces) line["pieces"] = pieces;
    std::printf("%s\n", line.dump().c_str());
    return;
  }
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ' ';
    out += options.pieces ? pieces[i] : std::to_string(ids[i]);
  }
  std::printf("%s\n", out.c_str());
}

void run_encode(const EncodeOptions& options) {
  if (options.text.empty() == options.input.empty()) throw Error("give either --text or --input");
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(options.tokenizer);
  if (!options.input.empty())
    for_each_line(options.input, [&](const std::string& line, std::size_t) {
      print_encoding(*tokenizer, line, options);
    });
  else
    print_encoding(*tokenizer, options.text, options);
}

// Ids separated by spaces or commas, or a JSON object with "ids" (encode --json output).
std::vector<std::int32_t> parse_ids(const std::string& line, const std::string& where) {
  if (line.find_first_not_of(" \t") != std::string::npos &&
      line[line.find_first_not_of(" \t")] == '{') {
    const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
    if (object.is_discarded() || !object.contains("ids") || !object["ids"].is_array())
      throw Error(where + ": expected a JSON object with an \"ids\" array");
    std::vector<std::int32_t> ids;
    for (const auto& id : object["ids"]) {
      if (!id.is_number_integer()) throw Error(where + ": " + id.dump() + " is not a token id");
      ids.push_back(id.get<std::int32_t>());
    }
    return ids;
  }
  std::vector<std::int32_t> ids;
  const char* p = line.data();
  const char* end = p + line.size();
  while (p < end) {
    if (*p == ' ' || *p == ',' || *p == '\t' || *p == '\r') {
      ++p;
      continue;
    }
    std::int32_t id = 0;
    const auto [next, error] = std::from_chars(p, end, id);
    if (error != std::errc() ||
        (next < end && *next != ' ' && *next != ',' && *next != '\t' && *next != '\r')) {
      const char* word_end = next;
      while (word_end < end && *word_end != ' ' && *word_end != ',') ++word_end;
      throw Error(where + ": '" + std::string(p, word_end) + "' is not a token id");
    }
    ids.push_back(id);
    p = next;
  }
  return ids;
}

void run_decode(const DecodeOptions& options) {
  if (options.ids.empty() == options.input.empty()) throw Error("give either --ids or --input");
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(options.tokenizer);
  const auto decode_line = [&](const std::string& line, const std::string& where) {
    const std::vector<std::int32_t> ids = parse_ids(line, where);
    try {
      std::printf("%s\n", tokenizer->decode(ids).c_str());
    } catch (const Error& e) {
      throw Error(where + ": " + e.what());
    }
  };
  if (!options.input.empty())
    for_each_line(options.input, [&](const std::string& line, std::size_t number) {
      decode_line(line, options.input + ":" + std::to_string(number));
    });
  else
    decode_line(options.ids, "--ids");
}

}  // namespace

void register_tokenizer(CLI::App& app) {
  CLI::App* group = app.add_subcommand(
      "tokenizer", "Train tokenizers and encode or decode text with any tokenizer strata reads");
  group->require_subcommand(1);

  auto train = std::make_shared<TrainOptions>();
  CLI::App* train_cmd = group->add_subcommand(
      "train", "Train a sentencepiece (unigram, bpe) or byte-level BPE tokenizer on text");
  train_cmd->footer(
      "Inputs are plain text, one sentence per line, or JSONL datasets (recognised by content, "
      "read as documents). Writes OUT/tokenizer.model (OUT/tokenizer.json for byte-bpe) and "
      "OUT/strata-tokenizer.json, then prints the vocab size and a JSON line of stats.");
  train_cmd->add_option("--input", train->inputs, "Text or JSONL files ('-' for stdin)")
      ->required()
      ->expected(1, -1);
  train_cmd
      ->add_option("--jsonl-field", train->jsonl_field,
                   "Which dataset field to train on: text, summary or all")
      ->check(CLI::IsMember({"text", "summary", "all"}))
      ->capture_default_str();
  train_cmd->add_option("--out", train->out, "Output directory")->required();
  train_cmd
      ->add_option("--vocab-size", train->vocab_size, "Vocabulary size, special tokens included")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train_cmd->add_option("--type", train->type, "unigram, bpe (sentencepiece) or byte-bpe")
      ->check(CLI::IsMember({"unigram", "bpe", "byte-bpe"}))
      ->capture_default_str();
  train_cmd
      ->add_option("--structural-levels", train->structural_levels,
                   "Section-level markers [SEC-L1]..[SEC-Ln] to reserve")
      ->check(CLI::Range(0, 32))
      ->capture_default_str();
  train_cmd
      ->add_option("--special", train->special,
                   "More special tokens, kept whole and never split (comma-separated), e.g. the TLM part markers "
                   "[INTRO],[EXTRACT],[SUMMARY],[REST]");
  train_cmd
      ->add_option("--character-coverage", train->character_coverage,
                   "sentencepiece: share of characters the alphabet covers")
      ->check(CLI::Range(0.5, 1.0))
      ->capture_default_str();
  train_cmd
      ->add_option("--normalization", train->normalization,
                   "sentencepiece: nmt_nfkc (NFKC, whitespace collapsed), nmt_nfkc_cf (the same and case-folded: "
                   "'Compare' and 'compare' become one token, decoded lowercase) or identity (text kept exactly)")
      ->check(CLI::IsMember({"nmt_nfkc", "nmt_nfkc_cf", "identity"}))
      ->capture_default_str();
  train_cmd
      ->add_option("--sample", train->sample,
                   "sentencepiece: train on a random sample of this many sentences (0: all)")
      ->capture_default_str();
  on_run(train_cmd, [train] { run_train(*train); });

  auto encode = std::make_shared<EncodeOptions>();
  CLI::App* encode_cmd = group->add_subcommand(
      "encode", "Print the token ids (or pieces) of a text, or of each line of a file");
  encode_cmd
      ->add_option("--tokenizer", encode->tokenizer,
                   "A tokenizer file or directory (kind chosen by content)")
      ->required();
  auto* text = encode_cmd->add_option("--text", encode->text, "The text to encode");
  encode_cmd->add_option("--input", encode->input, "Encode each line of FILE ('-' for stdin)")
      ->excludes(text);
  encode_cmd->add_flag("--pieces", encode->pieces, "Print pieces instead of ids");
  encode_cmd->add_flag("--json", encode->json,
                       "One JSON object per line: {\"ids\": [...]} (and \"pieces\" with --pieces)");
  on_run(encode_cmd, [encode] { run_encode(*encode); });

  auto decode = std::make_shared<DecodeOptions>();
  CLI::App* decode_cmd = group->add_subcommand(
      "decode", "Print the text of token ids given inline or one list per line of a file");
  decode_cmd
      ->add_option("--tokenizer", decode->tokenizer,
                   "A tokenizer file or directory (kind chosen by content)")
      ->required();
  auto* ids = decode_cmd->add_option("--ids", decode->ids, "Ids separated by spaces or commas");
  decode_cmd
      ->add_option("--input", decode->input,
                   "Decode each line of FILE ('-' for stdin): ids, or encode --json output")
      ->excludes(ids);
  on_run(decode_cmd, [decode] { run_decode(*decode); });
}

}  // namespace strata::cli
