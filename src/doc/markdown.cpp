#include "strata/doc/markdown.h"

#include <vector>

#include "markdown_inline.h"
#include "strata/core/strings.h"

// Block structure, line by line (CommonMark's rules, simplified):
//   - "# Title" … "###### Title" (closing #s stripped) and setext headings (a paragraph
//     underlined with === is rank 1, with --- rank 2) open sections;
//   - paragraphs are runs of lines up to a blank line, a heading, a fence, a quote or a list;
//   - a list (its items, nested items and continuation lines, blank lines between items
//     included; a new bullet or ordered delimiter starts a new list) is ONE paragraph whose lines keep their markers ("- a", "2. b"), so the
//     sentence splitter starts a sentence at each item;
//   - a block quote is a paragraph per quoted paragraph, without the '>' markers;
//   - fenced (``` or ~~~) and indented code blocks are one paragraph each, verbatim, so '#'
//     inside code is text;
//   - thematic breaks, link reference definitions and YAML front matter are dropped.
// Inline markup is stripped by markdown::strip_inline (see markdown_inline.h); code is not.
namespace strata {

namespace {

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

std::string_view trim(std::string_view s) { return strata::trim(s, " \t"); }

// Columns of leading whitespace (a tab advances to the next multiple of 4) and the bytes they take.
std::size_t indent_of(std::string_view line, std::size_t* bytes = nullptr) {
  std::size_t col = 0, i = 0;
  for (; i < line.size(); ++i) {
    if (line[i] == ' ') ++col;
    else if (line[i] == '\t') col += 4 - col % 4;
    else break;
  }
  if (bytes) *bytes = i;
  return col;
}

// Removes up to `columns` columns of indentation.
std::string_view dedent(std::string_view line, std::size_t columns) {
  std::size_t col = 0, i = 0;
  while (i < line.size() && col < columns && (line[i] == ' ' || line[i] == '\t')) {
    col += line[i] == '\t' ? 4 - col % 4 : 1;
    ++i;
  }
  return line.substr(i);
}

// "#"-heading: rank 1-6 and its text, or rank 0.
int atx_heading(std::string_view line, std::string_view& text) {
  if (indent_of(line) > 3) return 0;
  line = trim(line);
  std::size_t rank = 0;
  while (rank < line.size() && line[rank] == '#') ++rank;
  if (rank == 0 || rank > 6 || (rank < line.size() && line[rank] != ' ' && line[rank] != '\t')) return 0;
  std::string_view rest = trim(line.substr(rank));
  std::size_t closing = rest.size();
  while (closing > 0 && rest[closing - 1] == '#') --closing;
  if (closing == 0 || rest[closing - 1] == ' ' || rest[closing - 1] == '\t') rest = trim(rest.substr(0, closing));
  text = rest;
  return static_cast<int>(rank);
}

// A line of only '=' (rank 1) or only '-' (rank 2), up to 3 spaces indented: 0 if neither.
int setext_underline(std::string_view line) {
  if (indent_of(line) > 3) return 0;
  line = trim(line);
  if (line.empty() || (line[0] != '=' && line[0] != '-')) return 0;
  if (line.find_first_not_of(line[0]) != std::string_view::npos) return 0;
  return line[0] == '=' ? 1 : 2;
}

// ***, ---, ___ (three or more, spaces allowed between).
bool thematic_break(std::string_view line) {
  if (indent_of(line) > 3) return false;
  line = trim(line);
  if (line.empty() || (line[0] != '*' && line[0] != '-' && line[0] != '_')) return false;
  std::size_t count = 0;
  for (char c : line) {
    if (c == line[0]) ++count;
    else if (c != ' ' && c != '\t') return false;
  }
  return count >= 3;
}

// Opening fence: its character and length; 0 when the line is not one.
std::size_t fence_open(std::string_view line, char& fence_char) {
  if (indent_of(line) > 3) return 0;
  line = trim(line);
  if (line.size() < 3 || (line[0] != '`' && line[0] != '~')) return 0;
  std::size_t n = 0;
  while (n < line.size() && line[n] == line[0]) ++n;
  if (n < 3 || (line[0] == '`' && line.substr(n).find('`') != std::string_view::npos)) return 0;
  fence_char = line[0];
  return n;
}

bool fence_close(std::string_view line, char fence_char, std::size_t length) {
  if (indent_of(line) > 3) return false;
  line = trim(line);
  std::size_t n = 0;
  while (n < line.size() && line[n] == fence_char) ++n;
  return n >= length && n == line.size();
}

// The marker type of a list item line: its bullet ('-', '*', '+') or, for an ordered item,
// its delimiter ('.' or ')'); '\0' when the line is not an item. A new type starts a new list.
char list_marker(std::string_view line) {
  if (indent_of(line) > 3) return '\0';
  line = trim(line);
  if (line.empty()) return '\0';
  const auto space_after = [&](std::size_t i) { return i == line.size() || line[i] == ' ' || line[i] == '\t'; };
  if (line[0] == '-' || line[0] == '*' || line[0] == '+') return space_after(1) ? line[0] : '\0';
  std::size_t digits = 0;
  while (digits < line.size() && digits < 9 && line[digits] >= '0' && line[digits] <= '9') ++digits;
  const bool ordered = digits > 0 && digits < line.size() && (line[digits] == '.' || line[digits] == ')') &&
                       space_after(digits + 1);
  return ordered ? line[digits] : '\0';
}

bool list_item(std::string_view line) { return list_marker(line) != '\0'; }

bool quote_line(std::string_view line) { return indent_of(line) <= 3 && !trim(line).empty() && trim(line)[0] == '>'; }

// The text of a quoted line: all leading '>' markers and one space after each removed.
std::string_view unquote(std::string_view line) {
  line = trim(line);
  while (!line.empty() && line[0] == '>') {
    line.remove_prefix(1);
    if (!line.empty() && line[0] == ' ') line.remove_prefix(1);
    line = trim(line);
  }
  return line;
}

// "[label]: destination" on a line of its own.
bool reference_definition(std::string_view line) {
  line = trim(line);
  if (line.empty() || line[0] != '[') return false;
  const std::size_t close = line.find("]:");
  return close != std::string_view::npos && close > 1;
}

class MarkdownParser {
 public:
  void parse(std::string_view text) {
    const std::vector<std::string_view> lines = split_lines(text);
    std::size_t i = skip_front_matter(lines);
    for (; i < lines.size(); ++i) line(lines[i]);
    end_block();
  }

  Document finish() {
    std::string title;
    if (!blocks_.empty() && blocks_.front().rank == 1) title = blocks_.front().text;
    return build_document(std::move(title), std::move(blocks_));
  }

 private:
  enum class Kind { None, Paragraph, List, Quote, IndentedCode, Fence };

  static std::size_t skip_front_matter(const std::vector<std::string_view>& lines) {
    if (lines.empty() || trim(lines[0]) != "---") return 0;
    for (std::size_t i = 1; i < lines.size(); ++i)
      if (trim(lines[i]) == "---" || trim(lines[i]) == "...") return i + 1;
    return 0;
  }

  void line(std::string_view line) {
    switch (kind_) {
      case Kind::Fence:
        if (fence_close(line, fence_char_, fence_length_)) return end_block();
        return add_line(dedent(line, fence_indent_));
      case Kind::IndentedCode:
        if (is_blank(line)) {
          ++pending_blank_lines_;
          return;
        }
        if (indent_of(line) >= 4) {
          for (; pending_blank_lines_ > 0; --pending_blank_lines_) text_ += '\n';
          return add_line(dedent(line, 4));
        }
        end_block();
        break;
      case Kind::List:
        if (is_blank(line)) {
          list_had_blank_ = true;
          return;
        }
        if (indent_of(line) >= 2 || list_marker(line) == list_marker_ ||
            (!list_had_blank_ && !starts_block(line))) {
          list_had_blank_ = false;
          return add_line(trim(line));
        }
        end_block();
        break;
      case Kind::Quote:
        if (quote_line(line)) {
          const std::string_view inner = unquote(line);
          if (inner.empty()) return end_paragraph();  // "> " alone separates quoted paragraphs
          return add_line(inner);
        }
        if (!is_blank(line) && !text_.empty() && !starts_block(line)) return add_line(trim(line));
        end_block();
        break;
      default:
        break;
    }
    start(line);
  }

  // A line outside any open block other than a paragraph.
  void start(std::string_view line) {
    if (is_blank(line)) return end_block();
    if (kind_ == Kind::Paragraph) {
      if (const int rank = setext_underline(line)) {
        std::string heading = markdown::strip_inline(text_);
        for (char& c : heading)
          if (c == '\n') c = ' ';
        text_.clear();
        kind_ = Kind::None;
        return add_heading(std::move(heading), rank);
      }
      if (indent_of(line) >= 4 || !starts_block(line)) return add_line(trim(line));
    }
    end_block();
    std::string_view heading;
    if (indent_of(line) >= 4) {
      kind_ = Kind::IndentedCode;
      return add_line(dedent(line, 4));
    }
    if (const std::size_t n = fence_open(line, fence_char_)) {
      kind_ = Kind::Fence;
      fence_length_ = n;
      fence_indent_ = indent_of(line);
      return;
    }
    if (const int rank = atx_heading(line, heading)) return add_heading(markdown::strip_inline(heading), rank);
    if (thematic_break(line)) return;
    if (quote_line(line)) {
      kind_ = Kind::Quote;
      if (!unquote(line).empty()) add_line(unquote(line));
      return;
    }
    if (list_item(line)) {
      kind_ = Kind::List;
      list_marker_ = list_marker(line);
      list_had_blank_ = false;
      return add_line(trim(line));
    }
    if (reference_definition(line)) return;
    kind_ = Kind::Paragraph;
    add_line(trim(line));
  }

  // Lines that end a paragraph and start another block.
  static bool starts_block(std::string_view line) {
    char fence_char;
    std::string_view heading;
    return is_blank(line) || fence_open(line, fence_char) > 0 || atx_heading(line, heading) > 0 ||
           thematic_break(line) || quote_line(line) || list_item(line);
  }

  void add_line(std::string_view line) {
    if (!text_.empty()) text_ += '\n';
    text_.append(line);
  }

  void add_heading(std::string heading, int rank) {
    heading = std::string(trim(heading));
    if (!heading.empty()) blocks_.push_back({rank, std::move(heading)});
  }

  // Ends the current paragraph but stays in the block (a quote's next paragraph).
  void end_paragraph() {
    if (!text_.empty()) {
      const bool code = kind_ == Kind::Fence || kind_ == Kind::IndentedCode;
      blocks_.push_back({0, code ? std::move(text_) : markdown::strip_inline(text_)});
    }
    text_.clear();
  }

  void end_block() {
    end_paragraph();
    kind_ = Kind::None;
    pending_blank_lines_ = 0;
  }

  std::vector<DocumentBlock> blocks_;  // rank 0: a paragraph; 1-6: a heading
  Kind kind_ = Kind::None;
  std::string text_;
  char fence_char_ = '`';
  std::size_t fence_length_ = 0;
  std::size_t fence_indent_ = 0;
  std::size_t pending_blank_lines_ = 0;
  bool list_had_blank_ = false;
  char list_marker_ = '\0';
};

}  // namespace

Document parse_markdown(std::string_view text) {
  MarkdownParser parser;
  parser.parse(text);
  return parser.finish();
}

}  // namespace strata
