#include "strata/text/byte_bpe.h"

#include <algorithm>
#include <queue>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/byte_unicode.h"
#include "strata/text/gpt2_pretokenizer.h"

namespace strata {

namespace {

// A shard that grows past this many words is cleared: memory stays bounded on endless
// streams of new words (numbers, hashes) while real text keeps a high hit rate.
constexpr std::size_t kMaxWordsPerShard = 1 << 16;
// Longer pre-tokens (long runs of symbols or spaces) are rare and would only bloat the cache.
constexpr std::size_t kMaxCachedWordBytes = 64;

std::string printable(std::string_view piece) { return fmt::format("'{}'", piece); }

}  // namespace

ByteBpeTokenizer::ByteBpeTokenizer(const Vocab& vocab, const std::vector<Merge>& merges,
                                   const std::vector<std::string>& added, SpecialTokens specials,
                                   ByteBpeOptions options)
    : merges_(merges),
      specials_(std::move(specials)),
      options_(options),
      cache_(std::make_unique<CacheShard[]>(kCacheShards)) {
  std::size_t size = 0;  // the largest id + 1
  for (const auto& [piece, id] : vocab) {
    if (id < 0)
      throw Error(fmt::format("vocabulary: piece {} has negative id {}", printable(piece), id));
    if (piece.empty()) throw Error(fmt::format("vocabulary: id {} has an empty piece", id));
    size = std::max(size, static_cast<std::size_t>(id) + 1);
  }
  // Ids number the pieces (a few gaps are harmless): a table sized by the largest id must not
  // be allocated for an id far beyond them.
  if (size > vocab.size() + kMaxIdGap)
    throw Error(fmt::format("vocabulary: {} pieces but ids up to {}: the ids do not number the pieces", vocab.size(),
                            size - 1));
  pieces_.assign(size, "");
  for (const auto& [piece, id] : vocab) {
    if (!pieces_[id].empty())
      throw Error(fmt::format("vocabulary: id {} is given to both {} and {}", id,
                              printable(pieces_[id]), printable(piece)));
    pieces_[id] = piece;
    piece_ids_.emplace(piece, id);
  }

  added_ = added;
  for (const std::string& special : specials_.all())
    if (vocab.contains(special) && std::find(added_.begin(), added_.end(), special) == added_.end())
      added_.push_back(special);
  is_added_.assign(size, false);
  std::vector<std::pair<std::string, std::int32_t>> matched;
  for (const std::string& token : added_) {
    const auto it = vocab.find(token);
    if (it == vocab.end())
      throw Error(fmt::format("added token {} is not in the vocabulary", printable(token)));
    is_added_[it->second] = true;
    matched.emplace_back(token, it->second);
  }
  splitter_ = SpecialSplitter(matched);

  // Added tokens decode to themselves; other pieces are spelled in the byte alphabet (a
  // piece outside it, which no merge can produce, is taken literally).
  piece_bytes_.resize(size);
  for (std::int32_t id = 0; id < size; ++id) {
    if (pieces_[id].empty()) continue;
    piece_bytes_[id] =
        is_added_[id] ? pieces_[id] : symbols_to_bytes(pieces_[id]).value_or(pieces_[id]);
    if (options_.ignore_merges && !is_added_[id]) byte_piece_ids_.emplace(piece_bytes_[id], id);
  }

  for (int b = 0; b < 256; ++b) {
    const std::string piece = bytes_to_symbols(std::string(1, static_cast<char>(b)));
    const auto it = vocab.find(piece);
    if (it == vocab.end())
      throw Error(
          fmt::format("vocabulary lacks the piece {} for byte 0x{:02X}; byte-level BPE "
                      "needs all 256 byte pieces",
                      printable(piece), b));
    byte_ids_[b] = it->second;
  }

  // Like GPT-2's dict(zip(merges, ranks)), a repeated pair keeps its last rank.
  for (std::size_t rank = 0; rank < merges_.size(); ++rank) {
    const auto& [left, right] = merges_[rank];
    const auto id_of = [&, &left = left, &right = right](const std::string& piece) {  // clang < 16: named
      const auto it = vocab.find(piece);
      if (it == vocab.end())
        throw Error(fmt::format("merge {} ({} {}): {} is not in the vocabulary", rank + 1,
                                printable(left), printable(right), printable(piece)));
      return it->second;
    };
    const std::int32_t left_id = id_of(left);
    const std::int32_t right_id = id_of(right);
    merge_table_[pair_key(left_id, right_id)] = {static_cast<std::int32_t>(rank),
                                                 id_of(left + right)};
  }
}

std::vector<std::int32_t> ByteBpeTokenizer::encode(std::string_view text) const {
  std::vector<std::int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  splitter_.split(
      text, [&](std::string_view part) { encode_text(part, ids); },
      [&](std::int32_t id) { ids.push_back(id); });
  return ids;
}

void ByteBpeTokenizer::encode_text(std::string_view text, std::vector<std::int32_t>& out) const {
  std::string spaced;
  if (options_.add_prefix_space && text.front() != ' ') {
    spaced.reserve(text.size() + 1);
    spaced.append(1, ' ').append(text);
    text = spaced;
  }
  Gpt2PreTokenizer scanner(text);
  std::string_view word;
  while (scanner.next(word)) encode_word(word, out);
}

void ByteBpeTokenizer::encode_word(std::string_view word, std::vector<std::int32_t>& out) const {
  if (word.size() == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(word[0])]);
    return;
  }
  if (options_.ignore_merges) {
    if (const auto it = byte_piece_ids_.find(word); it != byte_piece_ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  if (word.size() > kMaxCachedWordBytes) {
    apply_merges(word, out);
    return;
  }
  CacheShard& shard = cache_[StringHash{}(word) % kCacheShards];
  {
    std::lock_guard lock(shard.mutex);
    if (const auto it = shard.words.find(word); it != shard.words.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const std::size_t start = out.size();
  apply_merges(word, out);
  std::lock_guard lock(shard.mutex);
  if (shard.words.size() >= kMaxWordsPerShard) shard.words.clear();
  shard.words.emplace(std::string(word), std::vector<std::int32_t>(out.begin() + start, out.end()));
}

void ByteBpeTokenizer::apply_merges(std::string_view word, std::vector<std::int32_t>& out) const {
  // Symbols form a linked list over the word's bytes; a merged symbol keeps its left
  // position. Candidate pairs wait in a heap ordered by (rank, position).
  struct Symbol {
    std::int32_t id, prev, next;
  };
  struct Candidate {
    std::int32_t rank, pos, left, right, result;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  const auto n = static_cast<std::int32_t>(word.size());
  std::vector<Symbol> symbols(n);
  for (std::int32_t i = 0; i < n; ++i)
    symbols[i] = {byte_ids_[static_cast<unsigned char>(word[i])], i - 1, i + 1};
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  const auto consider = [&](std::int32_t pos) {
    const std::int32_t next = symbols[pos].next;
    if (next >= n) return;
    const auto it = merge_table_.find(pair_key(symbols[pos].id, symbols[next].id));
    if (it != merge_table_.end())
      heap.push({it->second.rank, pos, symbols[pos].id, symbols[next].id, it->second.id});
  };
  for (std::int32_t i = 0; i + 1 < n; ++i) consider(i);

  std::vector<Candidate> batch;
  while (!heap.empty()) {
    // All occurrences of the best pair merge in one left-to-right pass before any pair
    // they create is considered, exactly as encoder.py does.
    const std::int32_t rank = heap.top().rank;
    batch.clear();
    while (!heap.empty() && heap.top().rank == rank) {
      batch.push_back(heap.top());
      heap.pop();
    }
    for (const Candidate& c : batch) {
      Symbol& left = symbols[c.pos];
      if (left.id != c.left || left.next >= n || symbols[left.next].id != c.right) continue;
      Symbol& right = symbols[left.next];
      left.id = c.result;
      right.id = -1;
      left.next = right.next;
      if (left.next < n) symbols[left.next].prev = c.pos;
      if (left.prev >= 0) consider(left.prev);
      consider(c.pos);
    }
  }
  for (std::int32_t i = 0; i < n; i = symbols[i].next) out.push_back(symbols[i].id);
}

std::string ByteBpeTokenizer::decode(std::span<const std::int32_t> ids) const {
  std::string text;
  for (const std::int32_t id : ids) {
    if (id < 0 || id >= vocab_size() || pieces_[id].empty())
      throw Error(fmt::format("token id {} is not in the vocabulary (size {})", id, vocab_size()));
    text += piece_bytes_[id];
  }
  return text;
}

std::string ByteBpeTokenizer::id_to_piece(std::int32_t id) const {
  if (id < 0 || id >= vocab_size())
    throw Error(fmt::format("token id {} is not in the vocabulary (size {})", id, vocab_size()));
  return pieces_[id];
}

std::optional<std::int32_t> ByteBpeTokenizer::piece_to_id(std::string_view piece) const {
  const auto it = piece_ids_.find(piece);
  if (it == piece_ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace strata
