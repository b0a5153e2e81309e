// Reading and writing byte-level BPE tokenizers in the formats users have: HF tokenizer.json
// and GPT-2's vocab.json + merges.txt.
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/tokenizer_sidecar.h"
#include "hf_vocab_json.h"

namespace strata {

namespace {

using nlohmann::json;

ByteBpeTokenizer::Merge split_merge(std::string_view line, const std::filesystem::path& file,
                                    std::size_t line_number, const char* field) {
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 == line.size() ||
      line.find(' ', space + 1) != std::string_view::npos)
    throw error_at(file, line_number, field,
                   fmt::format("expected two pieces separated by one space, got '{}'", line));
  return {std::string(line.substr(0, space)), std::string(line.substr(space + 1))};
}

// The byte-level pre-tokeniser strata implements: ByteLevel with GPT-2's regex, alone or as
// the only member of a Sequence. Returns its add_prefix_space.
bool check_byte_level(const json& pre_tokenizer, const std::filesystem::path& file) {
  const json* byte_level = &pre_tokenizer;
  if (pre_tokenizer.is_object() && pre_tokenizer.value("type", "") == "Sequence") {
    const json& members = pre_tokenizer.value("pretokenizers", json::array());
    if (members.size() == 1) byte_level = &members[0];
  }
  if (!byte_level->is_object() || byte_level->value("type", "") != "ByteLevel")
    throw error_at(file, 0, "pre_tokenizer",
                   fmt::format("{} is not GPT-2's byte-level pre-tokenizer; strata reads only "
                               "byte-level BPE tokenizer.json files",
                               pre_tokenizer.is_null() ? "null" : pre_tokenizer.dump()));
  if (!byte_level->value("use_regex", true))
    throw error_at(file, 0, "pre_tokenizer", "ByteLevel with use_regex=false is not supported");
  return byte_level->value("add_prefix_space", false);
}

// Errors from the constructor do not know the file; a JSON value of an unexpected type
// surfaces as a json exception. Both become strata::Error naming the file.
template <typename Make>
std::unique_ptr<ByteBpeTokenizer> with_file_context(const std::filesystem::path& file, Make make) {
  try {
    return make();
  } catch (const json::exception& e) {
    throw Error(file.string() + ": unexpected JSON structure: " + e.what());
  }
}

template <typename... Args>
std::unique_ptr<ByteBpeTokenizer> construct(const std::filesystem::path& file, Args&&... args) {
  try {
    return std::make_unique<ByteBpeTokenizer>(std::forward<Args>(args)...);
  } catch (const Error& e) {
    throw Error(file.string() + ": " + e.what());
  }
}

}  // namespace

std::unique_ptr<ByteBpeTokenizer> ByteBpeTokenizer::from_tokenizer_json(
    const std::filesystem::path& file) {
  return with_file_context(file, [&] {
    const json root = parse_json_file(file);
    if (!root.is_object() || !root.contains("model") || !root["model"].is_object())
      throw Error(file.string() + ": no \"model\" object; not an HF tokenizer.json");
    const json& model = root["model"];
    const std::string type = model.value("type", model.contains("merges") ? "BPE" : "");
    if (type != "BPE")
      throw error_at(file, 0, "model.type",
                     fmt::format("\"{}\" model; this reader takes byte-level BPE tokenizer.json "
                                 "files (load_tokenizer takes WordPiece too; use a sentencepiece .model for unigram)",
                                 type));
    if (root.contains("normalizer") && !root["normalizer"].is_null())
      throw error_at(file, 0, "normalizer",
                     fmt::format("{} is not supported (byte-level BPE expects none)",
                                 root["normalizer"].dump()));
    ByteBpeOptions options;
    options.add_prefix_space = check_byte_level(root.value("pre_tokenizer", json()), file);
    options.ignore_merges = model.value("ignore_merges", false);
    for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
      if (model.contains(affix) && model[affix].is_string() &&
          !model[affix].get<std::string>().empty())
        throw error_at(file, 0, std::string("model.") + affix,
                       "is not supported by byte-level BPE");

    Vocab vocab = read_vocab(model.value("vocab", json()), file, "model.vocab");
    std::vector<Merge> merges;
    for (const json& merge : model.value("merges", json::array())) {
      if (merge.is_string())
        merges.push_back(split_merge(merge.get<std::string>(), file, 0, "model.merges"));
      else if (merge.is_array() && merge.size() == 2 && merge[0].is_string() &&
               merge[1].is_string())
        merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
      else
        throw error_at(file, 0, "model.merges",
                       fmt::format("expected \"a b\" or [\"a\", \"b\"], got {}", merge.dump()));
    }

    std::vector<std::string> added;
    for (const json& token : root.value("added_tokens", json::array())) {
      if (!token.is_object() || !token.contains("content") || !token["content"].is_string() ||
          !token.contains("id") || !token["id"].is_number_integer())
        throw error_at(file, 0, "added_tokens", "expected objects with \"id\" and \"content\"");
      const std::string content = token["content"].get<std::string>();
      const std::int32_t id = token_id(token["id"], file, "added_tokens", content);
      const auto [it, inserted] = vocab.emplace(content, id);
      if (!inserted && it->second != id)
        throw error_at(
            file, 0, "added_tokens",
            fmt::format("'{}' has id {} but the vocabulary says {}", content, id, it->second));
      added.push_back(content);
    }

    const std::optional<TokenizerSidecar> sidecar = sidecar_for(file);
    SpecialTokens specials = sidecar ? sidecar->specials : detect_specials([&](std::string_view p) {
      return vocab.contains(std::string(p));
    });
    return construct(file, vocab, merges, added, std::move(specials), options);
  });
}

std::unique_ptr<ByteBpeTokenizer> ByteBpeTokenizer::from_vocab_merges(
    const std::filesystem::path& vocab_file, const std::filesystem::path& merges_file) {
  return with_file_context(vocab_file, [&] {
    const Vocab vocab = read_vocab(parse_json_file(vocab_file), vocab_file, "");
    std::vector<Merge> merges;
    std::istringstream lines(read_file(merges_file));
    std::string line;
    for (std::size_t number = 1; std::getline(lines, line); ++number) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || (number == 1 && line.starts_with("#version"))) continue;
      merges.push_back(split_merge(line, merges_file, number, ""));
    }
    SpecialTokens specials =
        detect_specials([&](std::string_view p) { return vocab.contains(std::string(p)); });
    return construct(vocab_file, vocab, merges, std::vector<std::string>{}, std::move(specials));
  });
}

void ByteBpeTokenizer::save(const std::filesystem::path& dir) const {
  const HfVocabJson parts = hf_vocab_json(pieces_, is_added_, specials_);
  nlohmann::ordered_json merges = nlohmann::ordered_json::array();
  for (const auto& [left, right] : merges_) merges.push_back(left + " " + right);
  const nlohmann::ordered_json byte_level = {{"type", "ByteLevel"},
                                             {"add_prefix_space", options_.add_prefix_space},
                                             {"trim_offsets", true},
                                             {"use_regex", true}};
  const nlohmann::ordered_json root = {{"version", "1.0"},
                                       {"truncation", nullptr},
                                       {"padding", nullptr},
                                       {"added_tokens", parts.added_tokens},
                                       {"normalizer", nullptr},
                                       {"pre_tokenizer", byte_level},
                                       {"post_processor", nullptr},
                                       {"decoder", byte_level},
                                       {"model",
                                        {{"type", "BPE"},
                                         {"dropout", nullptr},
                                         {"unk_token", nullptr},
                                         {"continuing_subword_prefix", nullptr},
                                         {"end_of_word_suffix", nullptr},
                                         {"fuse_unk", false},
                                         {"byte_fallback", false},
                                         {"ignore_merges", options_.ignore_merges},
                                         {"vocab", parts.vocab},
                                         {"merges", merges}}}};
  write_file_atomic(dir / "tokenizer.json", root.dump(2) + "\n");
  write_sidecar(dir, {kind(), "tokenizer.json", specials_});
}

}  // namespace strata
