#pragma once
// Unigram and BPE tokenizers trained and run by libsentencepiece, which is opened at run time
// (src/text/sentencepiece_library.h says why). Special ids follow SpecialTokens::all() order:
// bos, eos, pad, unk take the first ids (a missing one is disabled; unk is required), then
// sep, mask and the structural markers, which sentencepiece keeps whole in any text
// (user-defined symbols). sentencepiece's own log stays off.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/text/tokenizer.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace strata {

struct SentencePieceOptions {
  std::string model_type = "unigram";  // "unigram" or "bpe"
  int vocab_size = 8000;
  double character_coverage = 0.9995;   // share of characters the alphabet must cover
  int max_sentence_length = 8192;       // bytes; the trainer skips longer sentences
  std::size_t input_sentence_size = 0;  // when > 0, train on a random sample of this many
  int num_threads = 2;
  // "nmt_nfkc" (sentencepiece's default, collapses whitespace), "nmt_nfkc_cf" (the same, and
  // case-folded: decode gives lowercase text) or "identity" (decode gives back the text
  // exactly, for text sentencepiece can represent).
  std::string normalization = "nmt_nfkc";
  SpecialTokens specials{.structural = SpecialTokens::default_structural()};
};

class SentencePieceTokenizer final : public Tokenizer {
 public:
  // `serialized` is a ModelProto; `origin` names it in errors.
  SentencePieceTokenizer(std::string_view serialized, SpecialTokens specials,
                         const std::string& origin);
  ~SentencePieceTokenizer() override;

  // Loads a .model file; the special tokens come from the sidecar beside it when there is
  // one, else from the model's own ids and the pieces present (detect_specials).
  static std::unique_ptr<SentencePieceTokenizer> load(const std::filesystem::path& model_file);

  // Trains on one sentence per element and writes out_dir/tokenizer.model and the sidecar,
  // each atomically. strata::Error on bad options or when sentencepiece refuses the data.
  static std::unique_ptr<SentencePieceTokenizer> train(std::span<const std::string> sentences,
                                                       const SentencePieceOptions& options,
                                                       const std::filesystem::path& out_dir);
  // The same on the lines of text files, which sentencepiece reads itself.
  static std::unique_ptr<SentencePieceTokenizer> train_files(
      std::span<const std::filesystem::path> files, const SentencePieceOptions& options,
      const std::filesystem::path& out_dir);

  std::string kind() const override { return "sentencepiece"; }
  std::vector<std::int32_t> encode(std::string_view text) const override;
  std::string decode(std::span<const std::int32_t> ids) const override;
  std::int32_t vocab_size() const override;
  std::string id_to_piece(std::int32_t id) const override;
  std::optional<std::int32_t> piece_to_id(std::string_view piece) const override;
  const SpecialTokens& specials() const override { return specials_; }

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> processor_;
  SpecialTokens specials_;
};

}  // namespace strata
