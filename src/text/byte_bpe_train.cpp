// A byte-level BPE trainer: counts GPT-2 pre-tokens, then repeatedly merges the most frequent
// adjacent pair, updating pair counts only in the words that hold the merged pair.
#include <algorithm>
#include <queue>

#include <fmt/format.h>

#include "strata/core/error.h"
#include "strata/text/byte_bpe.h"
#include "strata/text/byte_unicode.h"
#include "strata/text/gpt2_pretokenizer.h"

namespace strata {

namespace {

using PairKey = std::uint64_t;

PairKey key_of(std::int32_t left, std::int32_t right) {
  return (static_cast<PairKey>(left) << 32) | static_cast<std::uint32_t>(right);
}

// Most frequent first; ties go to the pair of lower symbol ids, so training is deterministic.
struct Candidate {
  std::int64_t count;
  PairKey pair;
  bool operator<(const Candidate& o) const {
    return count != o.count ? count < o.count : pair > o.pair;
  }
};

struct Word {
  std::vector<std::int32_t> symbols;
  std::int64_t count;
};

class Trainer {
 public:
  Trainer(std::vector<Word> words) : words_(std::move(words)) {
    for (int s = 0; s < 256; ++s) {
      pieces_.push_back(bytes_to_symbols(std::string(1, static_cast<char>(gpt2_byte_order()[s]))));
      piece_ids_.emplace(pieces_.back(), s);
    }
    for (std::int32_t w = 0; w < static_cast<std::int32_t>(words_.size()); ++w)
      for (std::size_t i = 0; i + 1 < words_[w].symbols.size(); ++i) {
        const PairKey pair = key_of(words_[w].symbols[i], words_[w].symbols[i + 1]);
        pair_counts_[pair] += words_[w].count;
        where_[pair].push_back(w);
      }
    for (const auto& [pair, count] : pair_counts_) heap_.push({count, pair});
  }

  // Learns merges until there are `symbols` symbols or no pair occurs twice.
  void run(std::size_t symbols) {
    while (pieces_.size() < symbols && !heap_.empty()) {
      const Candidate best = heap_.top();
      heap_.pop();
      const auto it = pair_counts_.find(best.pair);
      if (it == pair_counts_.end() || it->second != best.count) continue;  // stale entry
      if (best.count < 2) break;
      merge(best.pair);
    }
  }

  const std::vector<std::string>& pieces() const { return pieces_; }
  const std::vector<ByteBpeTokenizer::Merge>& merges() const { return merges_; }

 private:
  void merge(PairKey pair) {
    const auto left = static_cast<std::int32_t>(pair >> 32);
    const auto right = static_cast<std::int32_t>(pair & 0xFFFFFFFFu);
    merges_.emplace_back(pieces_[left], pieces_[right]);
    // Two different pairs can spell the same piece ("a"+"bc", "ab"+"c"): it keeps one id.
    const std::string merged = pieces_[left] + pieces_[right];
    const auto [found, inserted] =
        piece_ids_.emplace(merged, static_cast<std::int32_t>(pieces_.size()));
    if (inserted) pieces_.push_back(merged);
    const std::int32_t result = found->second;

    std::vector<std::int32_t> affected = std::move(where_[pair]);
    where_.erase(pair);
    std::sort(affected.begin(), affected.end());
    affected.erase(std::unique(affected.begin(), affected.end()), affected.end());
    std::unordered_map<PairKey, std::int64_t> delta;
    for (const std::int32_t w : affected) {
      std::vector<std::int32_t>& s = words_[w].symbols;
      const std::int64_t count = words_[w].count;
      for (std::size_t i = 0; i + 1 < s.size(); ++i) delta[key_of(s[i], s[i + 1])] -= count;
      std::size_t out = 0;
      for (std::size_t i = 0; i < s.size(); ++out) {
        const bool match = i + 1 < s.size() && s[i] == left && s[i + 1] == right;
        s[out] = match ? result : s[i];
        i += match ? 2 : 1;
      }
      s.resize(out);
      for (std::size_t i = 0; i + 1 < s.size(); ++i) {
        const PairKey p = key_of(s[i], s[i + 1]);
        delta[p] += count;
        if (s[i] == result || s[i + 1] == result) where_[p].push_back(w);
      }
    }
    for (const auto& [p, change] : delta) {
      if (change == 0) continue;
      std::int64_t& count = pair_counts_[p];
      count += change;
      if (count <= 0)
        pair_counts_.erase(p);
      else
        heap_.push({count, p});
    }
  }

  std::vector<Word> words_;
  std::vector<std::string> pieces_;  // symbol id -> piece in the byte alphabet
  std::unordered_map<std::string, std::int32_t> piece_ids_;
  std::unordered_map<PairKey, std::int64_t> pair_counts_;
  std::unordered_map<PairKey, std::vector<std::int32_t>> where_;  // may hold stale words
  std::priority_queue<Candidate> heap_;
  std::vector<ByteBpeTokenizer::Merge> merges_;
};

}  // namespace

std::unique_ptr<ByteBpeTokenizer> ByteBpeTokenizer::train(std::span<const std::string> texts,
                                                          int vocab_size,
                                                          const SpecialTokens& specials) {
  std::vector<std::string> special_list;
  for (const std::string& token : specials.all())
    if (std::find(special_list.begin(), special_list.end(), token) == special_list.end())
      special_list.push_back(token);
  const auto reserved = static_cast<int>(special_list.size());
  if (vocab_size < reserved + 256)
    throw Error(
        fmt::format("vocab size {} is too small: byte-level BPE needs {} special tokens "
                    "+ 256 bytes = {}",
                    vocab_size, reserved, reserved + 256));

  // Special tokens are cut out of the training text, as encode() will cut them out.
  std::vector<std::pair<std::string, std::int32_t>> matched;
  for (const std::string& token : special_list) matched.emplace_back(token, 0);
  const SpecialSplitter splitter(matched);
  std::unordered_map<std::string, std::int64_t> counts;
  for (const std::string& text : texts)
    splitter.split(
        text,
        [&](std::string_view part) {
          Gpt2PreTokenizer scanner(part);
          std::string_view word;
          while (scanner.next(word)) ++counts[std::string(word)];
        },
        [](std::int32_t) {});

  std::array<std::int32_t, 256> symbol_of_byte{};
  for (int s = 0; s < 256; ++s) symbol_of_byte[gpt2_byte_order()[s]] = s;
  std::vector<Word> words;
  words.reserve(counts.size());
  for (const auto& [word, count] : counts) {
    Word w{{}, count};
    for (const unsigned char b : word) w.symbols.push_back(symbol_of_byte[b]);
    words.push_back(std::move(w));
  }

  Trainer trainer(std::move(words));
  trainer.run(static_cast<std::size_t>(vocab_size - reserved));
  Vocab vocab;
  for (std::int32_t id = 0; id < reserved; ++id) vocab.emplace(special_list[id], id);
  for (std::size_t s = 0; s < trainer.pieces().size(); ++s)
    vocab.emplace(trainer.pieces()[s], reserved + static_cast<std::int32_t>(s));
  return std::make_unique<ByteBpeTokenizer>(vocab, trainer.merges(), std::vector<std::string>{},
                                            specials);
}

}  // namespace strata
