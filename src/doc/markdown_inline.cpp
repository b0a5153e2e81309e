#include "markdown_inline.h"
#include "strata/core/strings.h"

#include <algorithm>
#include <vector>

namespace strata::markdown {

namespace {

bool is_punct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

// Index of the bracket closing the one at `open`, or npos. Escaped brackets do not count.
// For each '[' and '(' of s, the index of the bracket that closes it (npos when none),
// found in one pass with a stack per kind, so that text full of brackets stays linear.
std::vector<std::size_t> matching_closers(std::string_view s) {
  std::vector<std::size_t> closer(s.size(), std::string_view::npos);
  std::vector<std::size_t> squares, rounds;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '\\') {
      ++i;
    } else if (c == '[') {
      squares.push_back(i);
    } else if (c == '(') {
      rounds.push_back(i);
    } else if ((c == ']' && !squares.empty()) || (c == ')' && !rounds.empty())) {
      std::vector<std::size_t>& open = c == ']' ? squares : rounds;
      closer[open.back()] = i;
      open.pop_back();
    }
  }
  return closer;
}

std::size_t run_length(std::string_view s, std::size_t i) {
  std::size_t j = i;
  while (j < s.size() && s[j] == s[i]) ++j;
  return j - i;
}

// A run of emphasis delimiters (* _ ~~) in the output, with how many of its characters
// paired up with a run on the other side and so are removed.
struct Run {
  std::size_t pos, length;
  char c;
  bool can_open, can_close;
  std::size_t left = 0, removed = 0;
};

class Stripper {
 public:
  explicit Stripper(std::string_view s) : s_(s), closer_(matching_closers(s)) {}

  std::string run() {
    std::size_t i = 0;
    while (i < s_.size()) i = step(i);
    pair_runs();
    return without_paired_runs();
  }

 private:
  // Consumes the construct at s_[i] and returns the index after it.
  std::size_t step(std::size_t i) {
    const char c = s_[i];
    if (c == '\\' && i + 1 < s_.size() && is_punct(s_[i + 1])) {
      out_ += s_[i + 1];
      return i + 2;
    }
    if (c == '`') return code_span(i);
    if (c == '[') return link(i, i);
    if (c == '!' && i + 1 < s_.size() && s_[i + 1] == '[') return link(i + 1, i);
    if (c == '<') return autolink(i);
    if (c == '*' || c == '_' || c == '~') return delimiter_run(i);
    out_ += c;
    return i + 1;
  }

  std::size_t code_span(std::size_t i) {
    const std::size_t k = run_length(s_, i);
    std::size_t j = i + k;
    while ((j = s_.find('`', j)) != std::string_view::npos) {
      const std::size_t m = run_length(s_, j);
      if (m == k) {
        std::string_view content = s_.substr(i + k, j - i - k);
        if (content.size() >= 2 && content.front() == ' ' && content.back() == ' ' &&
            content.find_first_not_of(' ') != std::string_view::npos)
          content = content.substr(1, content.size() - 2);
        out_.append(content);
        return j + k;
      }
      j += m;
    }
    out_.append(s_.substr(i, k));  // no closing run: literal backticks
    return i + k;
  }

  // [text](url), [text][ref], and the same after '!' for an image; `start` is where the
  // construct begins (the '!' for an image).
  std::size_t link(std::size_t open, std::size_t start) {
    const std::size_t close = closer_[open];
    if (close != std::string_view::npos && close + 1 < s_.size()) {
      const char next = s_[close + 1];
      const std::size_t end = next == '(' ? closer_[close + 1]
                              : next == '[' ? s_.find(']', close + 1)
                                            : std::string_view::npos;
      if (end != std::string_view::npos) {
        out_ += strip_inline(s_.substr(open + 1, close - open - 1));
        return end + 1;
      }
    }
    out_.append(s_.substr(start, open + 1 - start));
    return open + 1;
  }

  std::size_t autolink(std::size_t i) {
    const std::size_t close = s_.find('>', i + 1);
    if (close != std::string_view::npos) {
      const std::string_view inner = s_.substr(i + 1, close - i - 1);
      const bool plain = std::none_of(inner.begin(), inner.end(), [](char c) { return is_space(c) || c == '<'; });
      const std::size_t colon = inner.find(':');
      if (plain && !inner.empty() && ((colon != std::string_view::npos && colon > 0) || inner.find('@') != std::string_view::npos)) {
        out_.append(inner);
        return close + 1;
      }
    }
    out_ += '<';
    return i + 1;
  }

  std::size_t delimiter_run(std::size_t i) {
    const char c = s_[i];
    const std::size_t k = run_length(s_, i);
    const char before = i == 0 ? ' ' : s_[i - 1];
    const char after = i + k >= s_.size() ? ' ' : s_[i + k];
    const bool left = !is_space(after) && (!is_punct(after) || is_space(before) || is_punct(before));
    const bool right = !is_space(before) && (!is_punct(before) || is_space(after) || is_punct(after));
    if (c != '~' || k == 2) {
      Run r{out_.size(), k, c, left, right};
      if (c == '_') {  // snake_case: an underscore inside a word is not emphasis
        r.can_open = left && (!right || is_punct(before));
        r.can_close = right && (!left || is_punct(after));
      }
      r.left = k;
      runs_.push_back(r);
    }
    out_.append(s_.substr(i, k));
    return i + k;
  }

  // Pairs each closing run with the nearest open run of the same character.
  void pair_runs() {
    std::vector<std::size_t> openers;
    for (std::size_t k = 0; k < runs_.size(); ++k) {
      Run& closer = runs_[k];
      while (closer.can_close && closer.left > 0) {
        auto it = std::find_if(openers.rbegin(), openers.rend(), [&](std::size_t o) {
          return runs_[o].c == closer.c && (closer.c != '~' || runs_[o].length == closer.length);
        });
        if (it == openers.rend()) break;
        Run& opener = runs_[*it];
        const std::size_t amount = std::min(opener.left, closer.left);
        opener.left -= amount, opener.removed += amount;
        closer.left -= amount, closer.removed += amount;
        // Openers between the pair can no longer close anything outside it.
        openers.erase(opener.left == 0 ? std::prev(it.base()) : it.base(), openers.end());
      }
      if (closer.can_open && closer.left > 0) openers.push_back(k);
    }
  }

  std::string without_paired_runs() const {
    std::string text;
    text.reserve(out_.size());
    std::size_t from = 0;
    for (const Run& r : runs_) {
      text.append(out_, from, r.pos - from);
      text.append(r.length - r.removed, r.c);
      from = r.pos + r.length;
    }
    text.append(out_, from, std::string::npos);
    return text;
  }

  std::string_view s_;
  std::vector<std::size_t> closer_;  // matching_closers(s_)
  std::string out_;
  std::vector<Run> runs_;
};

}  // namespace

std::string strip_inline(std::string_view text) { return Stripper(text).run(); }

}  // namespace strata::markdown
