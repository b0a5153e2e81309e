#pragma once
// The text of one generated choice as its tokens arrive: where it ends (eos, a stop string,
// the token budget) and how much of it is settled enough to stream. A client must never be
// sent text that later changes, so a stream holds back the tail that may still be the start
// of a stop string, and an incomplete UTF-8 character (a byte-level tokenizer writes one byte
// at a time; the partial character decodes as U+FFFD until the rest arrives).
#include <string>
#include <string_view>
#include <vector>

namespace strata::serve {

class StreamedText {
 public:
  explicit StreamedText(std::vector<std::string> stop = {});

  // The whole text decoded from the choice's tokens so far. When a stop string now appears,
  // the text is cut before its first occurrence and the choice finishes with "stop".
  void update(std::string decoded);
  // Ends the choice for a reason decoding knows: "stop" (eos) or "length".
  void finish(std::string reason);

  bool finished() const { return !reason_.empty(); }
  const std::string& text() const { return text_; }
  const std::string& finish_reason() const { return reason_; }

  // The text not yet taken that can no longer change (everything left once finished).
  std::string take_settled();

 private:
  std::size_t settled_end() const;

  std::vector<std::string> stop_;
  std::string text_;
  std::string reason_;
  std::size_t taken_ = 0;
};

}  // namespace strata::serve
