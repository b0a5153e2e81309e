// WordPiece (BERT) as HF tokenizers runs it, and its files: tokenizer.json and vocab.txt.
// Where tokenizers (Rust) and transformers' Python BertTokenizer differ, strata follows
// tokenizers, which transformers uses by default.
#include "strata/text/wordpiece.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <utf8proc.h>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/utf8.h"
#include "strata/text/tokenizer_sidecar.h"
#include "hf_vocab_json.h"

namespace strata {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// How far the largest id of a tokenizer.json may pass its number of pieces.
constexpr std::size_t kMaxIdGap = 1 << 16;

utf8proc_category_t category(char32_t c) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(c));
}

// Unicode White_Space (Rust's char::is_whitespace).
bool is_whitespace(char32_t c) {
  if ((c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85) return true;
  const utf8proc_category_t cat = category(c);
  return cat == UTF8PROC_CATEGORY_ZS || cat == UTF8PROC_CATEGORY_ZL || cat == UTF8PROC_CATEGORY_ZP;
}

// The "other" categories, except \t \n \r, which BERT counts as whitespace.
bool is_control(char32_t c) {
  if (c == '\t' || c == '\n' || c == '\r') return false;
  switch (category(c)) {
    case UTF8PROC_CATEGORY_CC:
    case UTF8PROC_CATEGORY_CF:
    case UTF8PROC_CATEGORY_CN:
    case UTF8PROC_CATEGORY_CO:
    case UTF8PROC_CATEGORY_CS:
      return true;
    default:
      return false;
  }
}

// All of ASCII's punctuation (symbols such as $ + < = > ^ ` | ~ too) and Unicode's P*.
bool is_punctuation(char32_t c) {
  if (c < 0x80)
    return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
           (c >= 123 && c <= 126);
  return is_unicode_punctuation(c);
}

// BERT's _is_chinese_char: the CJK Unified Ideographs blocks. tokenizers starts Extension E
// at U+2B920 where the Python code has U+2B820.
bool is_chinese_char(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// The code points of valid UTF-8, canonically decomposed and reordered (NFD) when `nfd`.
std::vector<utf8proc_int32_t> code_points(std::string_view text, bool nfd) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(text.data());
  const auto size = static_cast<utf8proc_ssize_t>(text.size());
  const utf8proc_option_t options = nfd ? UTF8PROC_DECOMPOSE : utf8proc_option_t{};
  std::vector<utf8proc_int32_t> points(text.size());
  utf8proc_ssize_t n = utf8proc_decompose(bytes, size, points.data(), size, options);
  if (n > size) {  // decomposition made it longer: again with room for all of it
    points.resize(static_cast<std::size_t>(n));
    n = utf8proc_decompose(bytes, size, points.data(), n, options);
  }
  if (n < 0) throw Error(std::string("utf8proc: ") + utf8proc_errmsg(n));
  points.resize(static_cast<std::size_t>(n));
  return points;
}

// transformers' clean_up_tokenization: each replacement over the whole text, in this order.
std::string clean_up_tokenization(std::string text) {
  static constexpr std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},     {" !", "!"},   {" ,", ","},     {" ' ", "'"},
      {" n't", "n't"}, {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) {
    std::string out;
    std::size_t done = 0;
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, done)) {
      out.append(text, done, at - done).append(to);
      done = at + from.size();
    }
    text = std::move(out.append(text, done));
  }
  return text;
}

// The "type" of an HF component, or "" when it has none.
std::string type_of(const json& component) {
  const auto it = component.is_object() ? component.find("type") : component.end();
  return it != component.end() && it->is_string() ? it->get<std::string>() : "";
}

Error unsupported(const fs::path& file, const char* field, const json& component,
                  const char* implemented) {
  const std::string type = type_of(component);
  return error_at(file, 0, field,
                  fmt::format("{} is not supported; strata's WordPiece implements {}",
                              type.empty() ? component.dump() : "type \"" + type + "\"",
                              implemented));
}

WordPieceOptions read_normalizer(const json& normalizer, const fs::path& file) {
  WordPieceOptions options;
  if (normalizer.is_null()) {
    options.clean_text = options.handle_chinese_chars = options.lowercase = false;
    options.strip_accents = false;
    return options;
  }
  if (type_of(normalizer) != "BertNormalizer")
    throw unsupported(file, "normalizer", normalizer, "BertNormalizer (or none)");
  options.clean_text = normalizer.value("clean_text", true);
  options.handle_chinese_chars = normalizer.value("handle_chinese_chars", true);
  options.lowercase = normalizer.value("lowercase", true);
  const json strip_accents = normalizer.value("strip_accents", json());
  if (!strip_accents.is_null()) options.strip_accents = strip_accents.get<bool>();
  return options;
}

// The pieces in id order, "" where no piece has the id.
std::vector<std::string> pieces_by_id(const std::unordered_map<std::string, std::int32_t>& vocab,
                                      const fs::path& file) {
  std::size_t size = 0;
  for (const auto& entry : vocab) size = std::max(size, static_cast<std::size_t>(entry.second) + 1);
  if (size > vocab.size() + kMaxIdGap)
    throw error_at(file, 0, "model.vocab",
                   fmt::format("{} pieces but ids up to {}: the ids do not number the pieces",
                               vocab.size(), size - 1));
  std::vector<std::string> pieces(size);
  for (const auto& [piece, id] : vocab) {
    if (!pieces[id].empty())
      throw error_at(file, 0, "model.vocab",
                     fmt::format("id {} is given to both '{}' and '{}'", id, pieces[id], piece));
    pieces[id] = piece;
  }
  return pieces;
}

// The constructor's errors do not know the file.
std::unique_ptr<WordPieceTokenizer> construct(const fs::path& file, std::vector<std::string> pieces,
                                              const std::vector<std::string>& added,
                                              WordPieceOptions options) {
  try {
    return std::make_unique<WordPieceTokenizer>(std::move(pieces), added, std::move(options));
  } catch (const Error& e) {
    throw Error(file.string() + ": " + e.what());
  }
}

}  // namespace

WordPieceTokenizer::WordPieceTokenizer(std::vector<std::string> pieces,
                                       const std::vector<std::string>& added,
                                       WordPieceOptions options)
    : pieces_(std::move(pieces)), options_(std::move(options)) {
  for (std::size_t id = 0; id < pieces_.size(); ++id)
    if (!pieces_[id].empty()) piece_ids_[pieces_[id]] = static_cast<std::int32_t>(id);
  const auto unk = piece_ids_.find(options_.unk_token);
  if (unk == piece_ids_.end())
    throw Error(fmt::format("vocabulary: no unk token '{}'", options_.unk_token));
  unk_id_ = unk->second;

  const auto has_piece = [&](std::string_view piece) { return piece_ids_.contains(piece); };
  const auto if_present = [&](const char* piece) { return has_piece(piece) ? piece : ""; };
  specials_ = {.bos = if_present("[CLS]"),
               .eos = if_present("[SEP]"),
               .pad = if_present("[PAD]"),
               .unk = options_.unk_token,
               .sep = if_present("[SEP]"),
               .mask = if_present("[MASK]"),
               .structural = detect_specials(has_piece).structural};

  is_added_.assign(pieces_.size(), false);
  std::vector<std::pair<std::string, std::int32_t>> matched;
  std::vector<std::string> all_added = added;
  for (const std::string& special : specials_.all()) all_added.push_back(special);
  for (const std::string& token : all_added) {
    const auto it = piece_ids_.find(token);
    if (it == piece_ids_.end())
      throw Error(fmt::format("added token '{}' is not in the vocabulary", token));
    if (is_added_[it->second]) continue;
    is_added_[it->second] = true;
    matched.emplace_back(token, it->second);
  }
  splitter_ = SpecialSplitter(matched);
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_tokenizer_json(const fs::path& file) {
  try {
    const json root = parse_json_file(file);
    if (!root.is_object() || !root.contains("model") || !root["model"].is_object())
      throw Error(file.string() + ": no \"model\" object; not an HF tokenizer.json");
    const json& model = root["model"];
    if (type_of(model) != "WordPiece")
      throw error_at(file, 0, "model.type",
                     fmt::format("\"{}\" model; expected WordPiece", type_of(model)));
    WordPieceOptions options = read_normalizer(root.value("normalizer", json()), file);
    const json pre_tokenizer = root.value("pre_tokenizer", json());
    if (type_of(pre_tokenizer) != "BertPreTokenizer")
      throw unsupported(file, "pre_tokenizer", pre_tokenizer, "BertPreTokenizer");
    options.unk_token = model.value("unk_token", options.unk_token);
    options.continuing_subword_prefix =
        model.value("continuing_subword_prefix", options.continuing_subword_prefix);
    const json max_chars =
        model.value("max_input_chars_per_word", json(options.max_input_chars_per_word));
    if (!max_chars.is_number_unsigned())
      throw error_at(file, 0, "model.max_input_chars_per_word", "expected a non-negative integer");
    options.max_input_chars_per_word = max_chars.get<std::size_t>();

    std::unordered_map<std::string, std::int32_t> vocab = read_vocab(model.value("vocab", json()), file, "model.vocab");
    // Added tokens may lie outside the model's vocabulary (ids after it).
    std::vector<std::string> added;
    for (const json& token : root.value("added_tokens", json::array())) {
      if (!token.is_object() || !token.contains("content") || !token["content"].is_string() ||
          !token.contains("id"))
        throw error_at(file, 0, "added_tokens", "expected objects with \"id\" and \"content\"");
      const std::string content = token["content"].get<std::string>();
      const std::int32_t id = token_id(token["id"], file, "added_tokens", content);
      const auto [it, inserted] = vocab.emplace(content, id);
      if (!inserted && it->second != id)
        throw error_at(file, 0, "added_tokens",
                       fmt::format("'{}' has id {} but the vocabulary says {}", content, id,
                                   it->second));
      added.push_back(content);
    }
    return construct(file, pieces_by_id(vocab, file), added, std::move(options));
  } catch (const json::exception& e) {
    throw Error(file.string() + ": unexpected JSON structure: " + e.what());
  }
}

std::unique_ptr<WordPieceTokenizer> WordPieceTokenizer::from_vocab_txt(const fs::path& file) {
  std::vector<std::string> pieces;
  std::istringstream lines(read_file(file));
  std::string line;
  for (std::size_t number = 1; std::getline(lines, line); ++number) {
    if (line.ends_with('\r')) line.pop_back();
    if (!is_valid_utf8(line)) throw error_at(file, number, "", "not valid UTF-8");
    pieces.push_back(std::move(line));
  }
  WordPieceOptions options;
  const fs::path config_file = file.parent_path() / "tokenizer_config.json";
  if (fs::is_regular_file(config_file)) {
    try {
      const json config = parse_json_file(config_file);
      options.lowercase = config.value("do_lower_case", true);
      options.handle_chinese_chars = config.value("tokenize_chinese_chars", true);
      const json strip_accents = config.value("strip_accents", json());
      if (!strip_accents.is_null()) options.strip_accents = strip_accents.get<bool>();
    } catch (const json::exception& e) {
      throw Error(config_file.string() + ": unexpected JSON structure: " + e.what());
    }
  }
  return construct(file, std::move(pieces), {}, std::move(options));
}

void WordPieceTokenizer::save(const fs::path& dir) const {
  using ordered_json = nlohmann::ordered_json;
  const HfVocabJson parts = hf_vocab_json(pieces_, is_added_, specials_);
  const ordered_json normalizer = {
      {"type", "BertNormalizer"},
      {"clean_text", options_.clean_text},
      {"handle_chinese_chars", options_.handle_chinese_chars},
      {"strip_accents",
       options_.strip_accents ? ordered_json(*options_.strip_accents) : ordered_json()},
      {"lowercase", options_.lowercase}};
  const ordered_json root = {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", parts.added_tokens},
      {"normalizer", normalizer},
      {"pre_tokenizer", ordered_json::object({{"type", "BertPreTokenizer"}})},
      {"post_processor", nullptr},
      {"decoder",
       {{"type", "WordPiece"}, {"prefix", options_.continuing_subword_prefix}, {"cleanup", true}}},
      {"model",
       {{"type", "WordPiece"},
        {"unk_token", options_.unk_token},
        {"continuing_subword_prefix", options_.continuing_subword_prefix},
        {"max_input_chars_per_word", options_.max_input_chars_per_word},
        {"vocab", parts.vocab}}}};
  write_file_atomic(dir / "tokenizer.json", root.dump(2) + "\n");
}

std::vector<std::int32_t> WordPieceTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> ids;
  splitter_.split(
      text, [&](std::string_view part) { encode_text(part, ids); },
      [&](std::int32_t id) { ids.push_back(id); });
  return ids;
}

// BertNormalizer: clean_text, handle_chinese_chars, strip_accents, lowercase, in that order.
std::string WordPieceTokenizer::normalize(std::string_view text) const {
  std::string cleaned;
  cleaned.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text, i);  // text is valid UTF-8
    char32_t c = utf8_decode_at(text, i, length);
    i += length;
    if (options_.clean_text) {
      if (c == 0xFFFD || is_control(c)) continue;
      if (is_whitespace(c)) c = ' ';
    }
    const bool spaced = options_.handle_chinese_chars && is_chinese_char(c);
    if (spaced) cleaned += ' ';
    utf8_append(cleaned, c);
    if (spaced) cleaned += ' ';
  }
  const bool strip_accents = options_.strip_accents.value_or(options_.lowercase);
  if (!strip_accents && !options_.lowercase) return cleaned;
  std::string out;
  out.reserve(cleaned.size());
  for (const utf8proc_int32_t c : code_points(cleaned, strip_accents)) {
    if (strip_accents && utf8proc_category(c) == UTF8PROC_CATEGORY_MN) continue;
    if (!options_.lowercase)
      utf8_append(out, static_cast<char32_t>(c));
    else if (c == 0x130)  // İ, the one character whose lowercase is two: i + U+0307
      out += "i\xCC\x87";
    else
      utf8_append(out, static_cast<char32_t>(utf8proc_tolower(c)));
  }
  return out;
}

void WordPieceTokenizer::encode_text(std::string_view text, std::vector<std::int32_t>& out) const {
  // HF reads text as Unicode: invalid bytes become U+FFFD, which clean_text drops.
  std::string valid;
  if (!is_valid_utf8(text)) {
    valid = sanitize_utf8(text);
    text = valid;
  }
  const std::string normalized = normalize(text);
  const std::string_view s = normalized;
  // BertPreTokenizer: words end at whitespace, and each punctuation character is a word.
  std::size_t word = 0;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t length = utf8_sequence_length(s, i);
    const char32_t c = utf8_decode_at(s, i, length);
    const bool punctuation = is_punctuation(c);
    if (punctuation || is_whitespace(c)) {
      if (i > word) encode_word(s.substr(word, i - word), out);
      if (punctuation) encode_word(s.substr(i, length), out);
      word = i + length;
    }
    i += length;
  }
  if (s.size() > word) encode_word(s.substr(word), out);
}

// Greedy longest match first; a word that has a part no piece matches is one unk token.
void WordPieceTokenizer::encode_word(std::string_view word, std::vector<std::int32_t>& out) const {
  const auto is_continuation_byte = [&](std::size_t i) {
    return (static_cast<unsigned char>(word[i]) & 0xC0) == 0x80;
  };
  std::size_t chars = 0;
  for (std::size_t i = 0; i < word.size(); ++i) chars += !is_continuation_byte(i);
  if (chars > options_.max_input_chars_per_word) {
    out.push_back(unk_id_);
    return;
  }
  const std::size_t first = out.size();
  std::string candidate;
  for (std::size_t start = 0; start < word.size();) {
    const std::string_view prefix =
        start > 0 ? std::string_view(options_.continuing_subword_prefix) : std::string_view();
    std::size_t end = word.size();
    auto match = piece_ids_.end();
    while (end > start) {
      candidate.assign(prefix).append(word.substr(start, end - start));
      match = piece_ids_.find(candidate);
      if (match != piece_ids_.end()) break;
      do --end;  // back one character
      while (end > start && is_continuation_byte(end));
    }
    if (match == piece_ids_.end()) {
      out.resize(first);
      out.push_back(unk_id_);
      return;
    }
    out.push_back(match->second);
    start = end;
  }
}

std::string WordPieceTokenizer::decode(std::span<const std::int32_t> ids) const {
  const std::string& prefix = options_.continuing_subword_prefix;
  std::string text;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::int32_t id = ids[i];
    if (id < 0 || id >= vocab_size() || pieces_[id].empty())
      throw Error(fmt::format("token id {} is not in the vocabulary (size {})", id, vocab_size()));
    const std::string& piece = pieces_[id];
    if (i > 0 && piece.starts_with(prefix))
      text.append(piece, prefix.size());
    else
      text.append(i > 0 ? " " : "").append(piece);
  }
  return clean_up_tokenization(std::move(text));
}

std::string WordPieceTokenizer::id_to_piece(std::int32_t id) const {
  if (id < 0 || id >= vocab_size())
    throw Error(fmt::format("token id {} is not in the vocabulary (size {})", id, vocab_size()));
  return pieces_[id];
}

std::optional<std::int32_t> WordPieceTokenizer::piece_to_id(std::string_view piece) const {
  const auto it = piece_ids_.find(piece);
  if (it == piece_ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace strata
