#pragma once
// Byte-level BPE as in GPT-2, RoBERTa and BART: the text is split by GPT-2's pre-tokeniser,
// each piece is spelled in GPT-2's byte alphabet and its adjacent symbols are merged by
// merge rank, lowest first, every occurrence of a pair in one left-to-right pass (encoder.py's
// bpe()). Every byte string encodes and decodes back to itself. Added tokens (special
// tokens and structural markers) are matched whole before pre-tokenisation.
#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "strata/text/special_splitter.h"
#include "strata/text/tokenizer.h"

namespace strata {

struct ByteBpeOptions {
  bool add_prefix_space = false;  // HF ByteLevel: a space before each text that lacks one
  bool ignore_merges = false;     // HF BPE: a piece found whole in the vocabulary is one token
};

class ByteBpeTokenizer final : public Tokenizer {
 public:
  using Vocab = std::unordered_map<std::string, std::int32_t>;
  using Merge = std::pair<std::string, std::string>;

  // `vocab` maps pieces spelled in the byte alphabet to ids and must hold all 256 single-byte
  // pieces; `merges` are in rank order and their pieces and results must be in `vocab`.
  // `added` are tokens (in `vocab`, spelled literally) matched whole in the text; the special
  // tokens present in `vocab` are added too. strata::Error on an inconsistent vocabulary.
  ByteBpeTokenizer(const Vocab& vocab, const std::vector<Merge>& merges,
                   const std::vector<std::string>& added, SpecialTokens specials,
                   ByteBpeOptions options = {});

  // An HF tokenizer.json whose model is BPE with GPT-2's byte-level pre-tokeniser.
  // How far the largest id may pass the number of pieces.
  static constexpr std::size_t kMaxIdGap = 1 << 16;

  static std::unique_ptr<ByteBpeTokenizer> from_tokenizer_json(const std::filesystem::path& file);
  // GPT-2's vocab.json + merges.txt.
  static std::unique_ptr<ByteBpeTokenizer> from_vocab_merges(const std::filesystem::path& vocab,
                                                             const std::filesystem::path& merges);
  // Learns merges from `texts` (pairs seen fewer than twice are never merged) until the
  // vocabulary has `vocab_size` entries: the special tokens (ids in SpecialTokens::all()
  // order), then the 256 bytes, then one piece per merge.
  static std::unique_ptr<ByteBpeTokenizer> train(std::span<const std::string> texts, int vocab_size,
                                                 const SpecialTokens& specials);
  // Writes dir/tokenizer.json (HF format) and the strata sidecar, each atomically.
  void save(const std::filesystem::path& dir) const;

  std::string kind() const override { return "byte-bpe"; }
  std::vector<std::int32_t> encode(std::string_view text) const override;
  std::string decode(std::span<const std::int32_t> ids) const override;
  std::int32_t vocab_size() const override { return static_cast<std::int32_t>(pieces_.size()); }
  std::string id_to_piece(std::int32_t id) const override;
  std::optional<std::int32_t> piece_to_id(std::string_view piece) const override;
  const SpecialTokens& specials() const override { return specials_; }

  const std::vector<Merge>& merges() const { return merges_; }

 private:
  struct MergeResult {
    std::int32_t rank;
    std::int32_t id;
  };
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using WordCache =
      std::unordered_map<std::string, std::vector<std::int32_t>, StringHash, std::equal_to<>>;
  // The cache of encoded pre-tokens, split in shards so that threads rarely wait.
  struct CacheShard {
    std::mutex mutex;
    WordCache words;
  };
  static constexpr std::size_t kCacheShards = 16;

  static std::uint64_t pair_key(std::int32_t left, std::int32_t right) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
           static_cast<std::uint32_t>(right);
  }
  void encode_text(std::string_view text, std::vector<std::int32_t>& out) const;
  void encode_word(std::string_view word, std::vector<std::int32_t>& out) const;
  void apply_merges(std::string_view word, std::vector<std::int32_t>& out) const;

  std::vector<std::string> pieces_;       // id -> piece as spelled in the vocabulary
  std::vector<std::string> piece_bytes_;  // id -> the bytes it decodes to
  std::vector<bool> is_added_;
  std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> piece_ids_;
  std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>> byte_piece_ids_;
  std::array<std::int32_t, 256> byte_ids_{};
  std::unordered_map<std::uint64_t, MergeResult> merge_table_;
  std::vector<Merge> merges_;
  std::vector<std::string> added_;
  SpecialSplitter splitter_;
  SpecialTokens specials_;
  ByteBpeOptions options_;
  mutable std::unique_ptr<CacheShard[]> cache_;
};

}  // namespace strata
