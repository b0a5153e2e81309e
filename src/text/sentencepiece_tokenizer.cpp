#include "strata/text/sentencepiece_tokenizer.h"

#include <fmt/format.h>

#include "sentencepiece_library.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/text/tokenizer_sidecar.h"

namespace strata {

SentencePieceTokenizer::SentencePieceTokenizer(std::string_view serialized, SpecialTokens specials,
                                               const std::string& origin)
    : processor_(spm::new_processor()), specials_(std::move(specials)) {
  std::optional<std::string> error;
  try {
    error = spm::error_of([&] { return processor_->LoadFromSerializedProto(serialized); });
  } catch (const std::exception& e) {
    // The library throws, rather than returns a status, for some broken models (its
    // double-array trie refuses a zero-length piece).
    error = e.what();
  }
  if (error || processor_->GetPieceSize() == 0)
    throw Error(origin + ": not a tokenizer: not a valid sentencepiece model" + (error ? " (" + *error + ")" : ""));
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::load(
    const std::filesystem::path& model_file) {
  auto tokenizer = std::make_unique<SentencePieceTokenizer>(read_file(model_file), SpecialTokens{},
                                                            model_file.string());
  if (const auto sidecar = sidecar_for(model_file)) {
    tokenizer->specials_ = sidecar->specials;
    return tokenizer;
  }
  const sentencepiece::SentencePieceProcessor& sp = *tokenizer->processor_;
  SpecialTokens specials = detect_specials(
      [&](std::string_view piece) { return tokenizer->piece_to_id(piece).has_value(); });
  // The model knows its control pieces better than the default names do.
  const auto piece_or_none = [&](int id) { return id >= 0 ? sp.IdToPiece(id) : std::string(); };
  specials.bos = piece_or_none(sp.bos_id());
  specials.eos = piece_or_none(sp.eos_id());
  specials.pad = piece_or_none(sp.pad_id());
  specials.unk = piece_or_none(sp.unk_id());
  tokenizer->specials_ = std::move(specials);
  return tokenizer;
}

std::vector<std::int32_t> SentencePieceTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  if (const auto error = spm::error_of([&] { return processor_->Encode(text, &ids); }))
    throw Error("sentencepiece encode failed: " + *error);
  return {ids.begin(), ids.end()};
}

std::string SentencePieceTokenizer::decode(std::span<const std::int32_t> ids) const {
  for (const std::int32_t id : ids)
    if (id < 0 || id >= vocab_size())
      throw Error(fmt::format("token id {} is not in the vocabulary (size {})", id, vocab_size()));
  std::string text;
  const std::vector<int> spm_ids(ids.begin(), ids.end());
  if (const auto error = spm::error_of([&] { return processor_->Decode(spm_ids, &text); }))
    throw Error("sentencepiece decode failed: " + *error);
  return text;
}

std::int32_t SentencePieceTokenizer::vocab_size() const { return processor_->GetPieceSize(); }

std::string SentencePieceTokenizer::id_to_piece(std::int32_t id) const {
  if (id < 0 || id >= vocab_size())  // sentencepiece would abort on a bad id
    throw Error(fmt::format("token id {} is not in the vocabulary (size {})", id, vocab_size()));
  return processor_->IdToPiece(id);
}

std::optional<std::int32_t> SentencePieceTokenizer::piece_to_id(std::string_view piece) const {
  // sentencepiece answers unk_id for unknown pieces; only the unk piece itself maps there.
  const int id = processor_->PieceToId(piece);
  if (id < 0 || processor_->IdToPiece(id) != piece) return std::nullopt;
  return id;
}

}  // namespace strata
