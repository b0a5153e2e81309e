#pragma once
// WordPiece as in BERT, following HF tokenizers: BertNormalizer (drop control characters,
// whitespace to spaces, a space each side of a CJK ideograph, strip accents, lowercase),
// BertPreTokenizer (split on whitespace and around every punctuation character), then greedy
// longest-match-first WordPiece where pieces after a word's first carry a prefix ("##").
// Added tokens (special tokens and structural markers) are matched whole before
// normalisation. Character classes come from utf8proc's Unicode tables.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "strata/text/special_splitter.h"
#include "strata/text/tokenizer.h"

namespace strata {

struct WordPieceOptions {
  bool clean_text = true;            // drop control characters and U+FFFD, whitespace -> ' '
  bool handle_chinese_chars = true;  // a space each side of a CJK ideograph
  bool lowercase = true;
  std::optional<bool> strip_accents;  // NFD, then drop nonspacing marks; unset: as lowercase
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  std::size_t max_input_chars_per_word = 100;  // a longer word is one unk token
};

class WordPieceTokenizer final : public Tokenizer {
 public:
  // pieces[id] is the piece with that id ("": no piece); a repeated piece keeps its last id,
  // as HF's vocab.txt reader does. `added` are pieces matched whole in the text; the special
  // tokens present are added too. The special tokens follow from the vocabulary: bos [CLS],
  // eos and sep [SEP], pad [PAD], mask [MASK], unk the unk token (each empty when absent) and
  // the default structural markers present (detect_specials). strata::Error when the unk
  // token or an added token is not in the vocabulary.
  WordPieceTokenizer(std::vector<std::string> pieces, const std::vector<std::string>& added,
                     WordPieceOptions options = {});

  // An HF tokenizer.json whose model is WordPiece, with BertNormalizer (or none) and
  // BertPreTokenizer; another normalizer or pre-tokenizer is a strata::Error.
  static std::unique_ptr<WordPieceTokenizer> from_tokenizer_json(const std::filesystem::path& file);
  // BERT's vocab.txt: one piece per line, ids from 0. do_lower_case (default true),
  // strip_accents and tokenize_chinese_chars come from tokenizer_config.json beside it.
  static std::unique_ptr<WordPieceTokenizer> from_vocab_txt(const std::filesystem::path& file);
  // Writes dir/tokenizer.json (HF format) atomically. No sidecar: the special tokens follow
  // from the vocabulary, so the file alone reloads to the same tokenizer.
  void save(const std::filesystem::path& dir) const;

  std::string kind() const override { return "wordpiece"; }
  std::vector<std::int32_t> encode(std::string_view text) const override;
  // Pieces joined by spaces, continuations glued to the piece before, special tokens kept
  // (as the other tokenizers do), then HF's clean_up_tokenization: no space before . ? ! ,
  // nor in contractions ("don ' t" -> "don't", "it 's" -> "it's").
  std::string decode(std::span<const std::int32_t> ids) const override;
  std::int32_t vocab_size() const override { return static_cast<std::int32_t>(pieces_.size()); }
  std::string id_to_piece(std::int32_t id) const override;
  std::optional<std::int32_t> piece_to_id(std::string_view piece) const override;
  const SpecialTokens& specials() const override { return specials_; }

  const WordPieceOptions& options() const { return options_; }

 private:
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  std::string normalize(std::string_view text) const;
  void encode_text(std::string_view text, std::vector<std::int32_t>& out) const;
  void encode_word(std::string_view word, std::vector<std::int32_t>& out) const;

  std::vector<std::string> pieces_;
  std::vector<bool> is_added_;
  std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> piece_ids_;
  std::int32_t unk_id_ = 0;
  SpecialSplitter splitter_;
  SpecialTokens specials_;
  WordPieceOptions options_;
};

}  // namespace strata
