#include "strata/serve/streamed_text.h"

#include <algorithm>
#include <utility>

namespace strata::serve {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the longest proper prefix of `stop` that ends `text`.
std::size_t partial_stop(std::string_view text, std::string_view stop) {
  for (std::size_t n = std::min(text.size(), stop.size() - 1); n > 0; --n)
    if (text.substr(text.size() - n) == stop.substr(0, n)) return n;
  return 0;
}

// `end` moved back to the start of a UTF-8 character that is cut off at `end`.
std::size_t whole_characters(std::string_view text, std::size_t end) {
  std::size_t start = end;
  while (start > 0 && (static_cast<unsigned char>(text[start - 1]) & 0xC0) == 0x80) --start;
  if (start == 0) return end;
  const auto lead = static_cast<unsigned char>(text[start - 1]);
  const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  return end - (start - 1) < length ? start - 1 : end;
}

}  // namespace

StreamedText::StreamedText(std::vector<std::string> stop) : stop_(std::move(stop)) {}

void StreamedText::update(std::string decoded) {
  if (finished()) return;
  std::size_t cut = std::string::npos;
  for (const std::string& s : stop_) cut = std::min(cut, decoded.find(s));
  if (cut != std::string::npos) {
    decoded.resize(cut);
    reason_ = "stop";
  }
  text_ = std::move(decoded);
}

void StreamedText::finish(std::string reason) {
  if (!finished()) reason_ = std::move(reason);
}

std::size_t StreamedText::settled_end() const {
  if (finished()) return text_.size();
  std::size_t end = text_.size();
  for (const std::string& s : stop_) end = std::min(end, text_.size() - partial_stop(text_, s));
  const std::string_view kept(text_.data(), end);
  if (kept.ends_with(kReplacement)) end -= kReplacement.size();
  return whole_characters(text_, end);
}

std::string StreamedText::take_settled() {
  // Text already sent stays sent: should a later decoding differ before `taken_` (it does not
  // for strata's tokenizers once a character is whole), only what follows is sent.
  const std::size_t end = std::max(settled_end(), taken_);
  std::string settled = text_.substr(std::min(taken_, text_.size()), end - std::min(taken_, end));
  taken_ = end;
  return settled;
}

}  // namespace strata::serve
