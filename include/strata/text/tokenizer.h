#pragma once
// The tokenizer interface every model and layout uses, and the special tokens it knows.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// Named special tokens. Empty strings mean "none". Structural markers (section tokens such
// as "[SEC]", "[SEC-L1]", hierarchy level tokens "[L↑]", "[L↓]", "[L-]") are kept whole by
// encode() wherever they appear in the text.
struct SpecialTokens {
  std::string bos = "<s>";
  std::string eos = "</s>";
  std::string pad = "<pad>";
  std::string unk = "<unk>";
  std::string sep = "[SEP]";
  std::string mask = "<mask>";
  std::vector<std::string> structural;

  // bos, eos, pad, unk, sep, mask (non-empty ones) followed by the structural markers.
  std::vector<std::string> all() const;
  // The default structural markers: [SEC], [SEC-L1]..[SEC-L<levels>], [L↑], [L↓], [L-].
  static std::vector<std::string> default_structural(int levels = 4);
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  virtual std::string kind() const = 0;  // "sentencepiece", "byte-bpe" or "wordpiece"
  virtual std::vector<std::int32_t> encode(std::string_view text) const = 0;
  virtual std::string decode(std::span<const std::int32_t> ids) const = 0;
  virtual std::int32_t vocab_size() const = 0;
  virtual std::string id_to_piece(std::int32_t id) const = 0;
  virtual std::optional<std::int32_t> piece_to_id(std::string_view piece) const = 0;

  // Ids of the named special tokens, or nullopt where the tokenizer has none.
  std::optional<std::int32_t> bos_id() const { return special_id(specials().bos); }
  std::optional<std::int32_t> eos_id() const { return special_id(specials().eos); }
  std::optional<std::int32_t> pad_id() const { return special_id(specials().pad); }
  std::optional<std::int32_t> sep_id() const { return special_id(specials().sep); }
  std::optional<std::int32_t> mask_id() const { return special_id(specials().mask); }
  virtual const SpecialTokens& specials() const = 0;

 private:
  std::optional<std::int32_t> special_id(const std::string& piece) const {
    if (piece.empty()) return std::nullopt;
    return piece_to_id(piece);
  }
};

// The eos id, or strata::Error "<needed_by> needs a tokenizer with an eos token; this <kind>
// tokenizer has none".
std::int32_t require_eos(const Tokenizer& tokenizer, std::string_view needed_by);

// Loads any tokenizer strata knows, choosing by content, not by name:
//  - a sentencepiece model (.model protobuf),
//  - an HF tokenizer.json with a byte-level BPE or a WordPiece (BERT) model; one with a
//    Unigram model (T5) through the spiece.model beside it,
//  - a BERT vocab.txt (one piece per line, [UNK] among them),
//  - a directory holding tokenizer.json, vocab.json + merges.txt (GPT-2), spiece.model (T5)
//    or vocab.txt (BERT), in that order of preference,
//  - a strata tokenizer directory (tokenizer.model or tokenizer.json, plus the sidecar
//    strata-tokenizer.json that names the special tokens; see text/tokenizer_sidecar.h).
// A file of another kind gives strata::Error naming the file and what was found instead.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path);

}  // namespace strata
