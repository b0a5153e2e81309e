// load_tokenizer: picks the tokenizer kind from what a file contains, never from its name,
// and says what a wrong file looks like instead of failing somewhere deeper.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/utf8.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/sentencepiece_tokenizer.h"
#include "strata/text/tokenizer.h"
#include "strata/text/tokenizer_sidecar.h"
#include "strata/text/wordpiece.h"

namespace strata {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Error not_a_tokenizer(const fs::path& file, const std::string& looks_like) {
  return Error(file.string() + ": not a tokenizer: " + looks_like);
}

// An HF tokenizer.json, by its model type.
std::unique_ptr<Tokenizer> load_tokenizer_json(const fs::path& file, const json& model) {
  const auto type = model.find("type");
  const std::string name = type != model.end() && type->is_string() ? type->get<std::string>() : "";
  if (name == "WordPiece") return WordPieceTokenizer::from_tokenizer_json(file);
  if (name == "Unigram") {
    // T5 ships the sentencepiece model the Unigram tokenizer.json was converted from.
    const fs::path spiece = file.parent_path() / "spiece.model";
    if (fs::is_regular_file(spiece)) return SentencePieceTokenizer::load(spiece);
    throw Error(file.string() +
                ": a Unigram tokenizer.json is not supported; pass the sentencepiece model it "
                "comes with (spiece.model) instead");
  }
  if (!name.empty() && name != "BPE")
    throw error_at(file, 0, "model.type",
                   "\"" + name +
                       "\" model; strata reads BPE (byte-level) and WordPiece tokenizer.json "
                       "files, and Unigram ones through the spiece.model beside them");
  return ByteBpeTokenizer::from_tokenizer_json(file);
}

std::unique_ptr<Tokenizer> load_json(const fs::path& file, std::string_view bytes) {
  const json root = json::parse(bytes, nullptr, false);
  if (root.is_discarded()) {
    const std::string_view first_line = bytes.substr(0, bytes.find('\n'));
    if (first_line.size() < bytes.size() && !json::parse(first_line, nullptr, false).is_discarded())
      throw not_a_tokenizer(file, "looks like JSON Lines (a dataset?)");
    throw not_a_tokenizer(file, "looks like malformed JSON");
  }
  if (root.is_object() && root.contains("format")) {
    const TokenizerSidecar sidecar = sidecar_from_json(root, file);
    const fs::path model = file.parent_path() / sidecar.model;
    if (sidecar.kind == "sentencepiece") return SentencePieceTokenizer::load(model);
    return ByteBpeTokenizer::from_tokenizer_json(model);
  }
  if (root.is_object() && root.contains("model") && root["model"].is_object())
    return load_tokenizer_json(file, root["model"]);
  // A GPT-2 vocab.json: piece -> id for at least the 256 byte pieces.
  const bool piece_ids =
      root.is_object() && root.size() >= 256 &&
      std::all_of(root.begin(), root.end(), [](const json& v) { return v.is_number_integer(); });
  if (piece_ids)
    throw not_a_tokenizer(file,
                          "looks like a GPT-2 vocab.json; pass the directory holding "
                          "vocab.json and merges.txt");
  throw not_a_tokenizer(file,
                        "looks like JSON without a \"model\" field; expected an HF "
                        "tokenizer.json");
}

// A BERT vocab.txt: one piece per line, "[UNK]" among them.
bool is_bert_vocab(std::string_view bytes) {
  for (std::size_t start = 0; start < bytes.size();) {
    const std::size_t end = std::min(bytes.find('\n', start), bytes.size());
    std::string_view line = bytes.substr(start, end - start);
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line == "[UNK]") return true;
    start = end + 1;
  }
  return false;
}

std::unique_ptr<Tokenizer> load_file(const fs::path& file) {
  const std::string bytes = read_file(file);
  const std::size_t start = bytes.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) throw not_a_tokenizer(file, "the file is empty or blank");
  // Before JSON: a vocab.txt starts with "[PAD]".
  if (is_bert_vocab(bytes)) return WordPieceTokenizer::from_vocab_txt(file);
  if (bytes[start] == '{' || bytes[start] == '[') return load_json(file, bytes);
  if (bytes.starts_with("#version"))
    throw not_a_tokenizer(file,
                          "looks like a GPT-2 merges.txt; pass the directory holding "
                          "vocab.json and merges.txt");
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
      static_cast<unsigned char>(bytes[1]) == 0x8b)
    throw not_a_tokenizer(file, "looks like gzip data");
  // A serialized ModelProto starts with its first piece: field 1, length-delimited.
  if (bytes[0] == 0x0a) return SentencePieceTokenizer::load(file);
  if (is_valid_utf8(bytes))
    throw not_a_tokenizer(file,
                          "looks like plain text (to make a tokenizer from text, use "
                          "`strata tokenizer train`)");
  throw not_a_tokenizer(file,
                        "unrecognised binary data; expected a sentencepiece .model, a "
                        "tokenizer.json, or a directory");
}

std::unique_ptr<Tokenizer> load_directory(const fs::path& dir) {
  if (const auto sidecar = read_sidecar(dir)) return load_file(dir / sidecar->model);
  for (const char* name : {"tokenizer.model", "tokenizer.json"})
    if (fs::is_regular_file(dir / name)) return load_file(dir / name);
  if (fs::is_regular_file(dir / "vocab.json") && fs::is_regular_file(dir / "merges.txt"))
    return ByteBpeTokenizer::from_vocab_merges(dir / "vocab.json", dir / "merges.txt");
  if (fs::is_regular_file(dir / "spiece.model")) return load_file(dir / "spiece.model");  // T5
  if (fs::is_regular_file(dir / "vocab.txt"))  // BERT
    return WordPieceTokenizer::from_vocab_txt(dir / "vocab.txt");
  throw Error(dir.string() +
              ": no tokenizer here (expected tokenizer.model, tokenizer.json, "
              "vocab.json + merges.txt, spiece.model, vocab.txt, or " +
              kSidecarName + ")");
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!fs::exists(status)) throw Error(path.string() + ": no such file or directory");
  if (fs::is_directory(status)) return load_directory(path);
  return load_file(path);
}

}  // namespace strata
