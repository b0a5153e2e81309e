// rouge-score's tokenizer: lower-case, [^a-z0-9] -> separator, optional Porter stemming of
// tokens longer than three characters.
#include <algorithm>
#include <cstring>
#include <string>

#include "strata/eval/porter_stemmer.h"
#include "strata/eval/rouge.h"

namespace strata {

namespace {

// Calls on_token(std::string_view) for each token and on_newline() at each '\n', in order.
// Python lower-cases before filtering, and exactly two non-ASCII characters lower-case to
// ASCII letters: U+0130 (I with dot) -> "i" + U+0307 (a separator) and U+212A (Kelvin
// sign) -> "k". Every other non-ASCII byte separates tokens.
// `token` is scratch space.
template <class OnToken, class OnNewline>
void scan_tokens(std::string_view text, std::string& token, OnToken on_token,
                 OnNewline on_newline) {
  token.clear();
  const auto flush = [&] {
    if (token.empty()) return;
    on_token(std::string_view(token));
    token.clear();
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      token += c;
    } else if (c >= 'A' && c <= 'Z') {
      token += static_cast<char>(c - 'A' + 'a');
    } else if (text.substr(i, 2) == "\xC4\xB0") {
      token += 'i';
      flush();
      i += 1;
    } else if (text.substr(i, 3) == "\xE2\x84\xAA") {
      token += 'k';
      i += 2;
    } else {
      flush();
      if (c == '\n') on_newline();
    }
  }
  flush();
}

// 64-bit hash of a token, eight bytes at a time (tokens are short: one or two rounds).
std::uint64_t hash_token(std::string_view token) {
  const auto mix = [](std::uint64_t x) {  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  std::uint64_t hash = token.size();
  std::size_t i = 0;
  for (; i + 8 <= token.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, token.data() + i, 8);
    hash = mix(hash ^ word);
  }
  std::uint64_t tail = 0;
  std::memcpy(&tail, token.data() + i, token.size() - i);
  return mix(hash ^ tail ^ 0x9e3779b97f4a7c15ULL);
}

}  // namespace

std::vector<std::string> rouge_tokenize(std::string_view text, bool use_stemmer) {
  std::vector<std::string> tokens;
  std::string scratch;
  scan_tokens(
      text, scratch,
      [&](std::string_view token) {
        tokens.push_back(use_stemmer && token.size() > 3 ? porter_stem(token) : std::string(token));
      },
      [] {});
  return tokens;
}

void RougeVocabulary::tokenize(std::string_view target, std::string_view prediction,
                               bool use_stemmer, TokenizedPair& out) {
  ++pairs_;
  out.distinct = 0;
  tokenize_text(target, use_stemmer, out.target, out.distinct);
  tokenize_text(prediction, use_stemmer, out.prediction, out.distinct);
}

void RougeVocabulary::tokenize_text(std::string_view text, bool use_stemmer, TokenizedText& out,
                                    std::size_t& distinct) {
  out.ids.clear();
  out.sentence_ends.clear();
  const auto position = [&] { return static_cast<std::uint32_t>(out.ids.size()); };
  scan_tokens(
      text, token_,
      [&](std::string_view text_token) {
        const std::int32_t index =
            use_stemmer && text_token.size() > 3 ? stem_index_of(text_token) : index_of(text_token);
        Token& token = tokens_[index];
        // The first time this pair meets the token it gets the next id.
        if (token.pair != pairs_) {
          token.pair = pairs_;
          token.pair_id = static_cast<std::int32_t>(distinct++);
        }
        out.ids.push_back(token.pair_id);
      },
      [&] { out.sentence_ends.push_back(position()); });
  out.sentence_ends.push_back(position());
}

void RougeVocabulary::clear() {
  slots_.clear();
  tokens_.clear();
  bytes_.clear();
}

std::int32_t RougeVocabulary::index_of(std::string_view token) {
  if (2 * (tokens_.size() + 1) > slots_.size()) grow();
  const std::uint64_t tag = hash_token(token) & 0xFFFFFFFF00000000ULL;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = (tag >> 32) & mask;; i = (i + 1) & mask) {
    const std::uint64_t slot = slots_[i];
    if (slot == 0) {
      const auto index = static_cast<std::int32_t>(tokens_.size());
      tokens_.push_back(
          {static_cast<std::uint32_t>(bytes_.size()), static_cast<std::uint32_t>(token.size())});
      bytes_ += token;
      slots_[i] = tag | static_cast<std::uint32_t>(index + 1);
      return index;
    }
    if ((slot & 0xFFFFFFFF00000000ULL) == tag) {
      const auto index = static_cast<std::int32_t>(static_cast<std::uint32_t>(slot) - 1);
      const Token& known = tokens_[index];
      if (std::string_view(bytes_).substr(known.offset, known.length) == token) return index;
    }
  }
}

std::int32_t RougeVocabulary::stem_index_of(std::string_view token) {
  const std::int32_t index = index_of(token);
  if (tokens_[index].stem < 0) {
    // A stem may itself be a token ("running" -> "run"), so stems share the table.
    const std::int32_t stem = index_of(porter_stem(token));
    tokens_[index].stem = stem;
  }
  return tokens_[index].stem;
}

void RougeVocabulary::grow() {
  std::vector<std::uint64_t> old = std::move(slots_);
  slots_.assign(std::max<std::size_t>(1024, 2 * old.size()), 0);
  const std::size_t mask = slots_.size() - 1;
  for (const std::uint64_t slot : old) {
    if (slot == 0) continue;
    std::size_t i = (slot >> 32) & mask;
    while (slots_[i] != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

}  // namespace strata
