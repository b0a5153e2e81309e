#pragma once
// A whitespace tokenizer for tests: each distinct word gets the next id. Ids 0-3 are
// <pad>, <s>, </s>, <unk>. Lets layout tests count tokens by eye.
#include <map>
#include <string>

#include "strata/text/tokenizer.h"

namespace strata::test_support {

class WordTokenizer : public Tokenizer {
 public:
  WordTokenizer() {
    specials_.sep.clear();
    specials_.mask.clear();
    for (const char* s : {"<pad>", "<s>", "</s>", "<unk>"}) add(s);
  }
  std::string kind() const override { return "test-words"; }
  std::vector<std::int32_t> encode(std::string_view text) const override {
    std::vector<std::int32_t> ids;
    std::size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      std::size_t j = i;
      while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
      if (j > i) ids.push_back(add(std::string(text.substr(i, j - i))));
      i = j;
    }
    return ids;
  }
  std::string decode(std::span<const std::int32_t> ids) const override {
    std::string out;
    for (std::int32_t id : ids) out += (out.empty() ? "" : " ") + pieces_.at(id);
    return out;
  }
  std::int32_t vocab_size() const override { return static_cast<std::int32_t>(pieces_.size()); }
  std::string id_to_piece(std::int32_t id) const override { return pieces_.at(id); }
  std::optional<std::int32_t> piece_to_id(std::string_view piece) const override {
    const auto it = ids_.find(std::string(piece));
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }
  const SpecialTokens& specials() const override { return specials_; }

 private:
  std::int32_t add(const std::string& piece) const {
    const auto [it, inserted] = ids_.emplace(piece, static_cast<std::int32_t>(pieces_.size()));
    if (inserted) pieces_.push_back(piece);
    return it->second;
  }
  SpecialTokens specials_;
  mutable std::map<std::string, std::int32_t> ids_;
  mutable std::vector<std::string> pieces_;
};

// WordTokenizer with a [SEP] token (id 4); <s> (id 1) serves as [CLS]: the BERTSum and
// Cross-Segment inputs of seed 003's tasks.
class SepWordTokenizer : public WordTokenizer {
 public:
  SepWordTokenizer() {
    specials_.sep = "[SEP]";
    encode("[SEP]");
  }
  const SpecialTokens& specials() const override { return specials_; }

 private:
  SpecialTokens specials_ = WordTokenizer().specials();
};

}  // namespace strata::test_support
