#include "strata/doc/manpage.h"

#include <fmt/format.h>

#include <unordered_map>
#include <vector>

#include "man_parser.h"
#include "roff_text.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/core/strings.h"
#include "strata/core/utf8.h"

namespace strata {

namespace man_detail {

std::string_view trim(std::string_view s) { return strata::trim(s, " \t\n"); }

namespace {

const std::unordered_map<std::string_view, Request>& requests() {
  using R = Request;
  static const std::unordered_map<std::string_view, Request> table = [] {
    std::unordered_map<std::string_view, Request> t = {
        {"TH", R::TH}, {"SH", R::SH}, {"SS", R::SS}, {"PP", R::Paragraph}, {"LP", R::Paragraph},
        {"P", R::Paragraph}, {"HP", R::Paragraph}, {"sp", R::Paragraph}, {"TP", R::TP},
        {"TQ", R::TQ}, {"IP", R::IP}, {"B", R::Font}, {"I", R::Font}, {"SM", R::Font},
        {"SB", R::Font}, {"BR", R::Alternating}, {"BI", R::Alternating}, {"IB", R::Alternating},
        {"IR", R::Alternating}, {"RB", R::Alternating}, {"RI", R::Alternating}, {"br", R::LineBreak},
        {"nf", R::NoFill}, {"EX", R::NoFill}, {"fi", R::Fill}, {"EE", R::Fill}, {"UR", R::UR},
        {"MT", R::UR}, {"UE", R::UE}, {"ME", R::UE}, {"OP", R::OP}, {"SY", R::SY}, {"YS", R::YS},
        {"MR", R::MR}, {"so", R::So}, {"ds", R::Ds}, {"ds1", R::Ds}, {"as", R::As}, {"as1", R::As},
        {"de", R::De}, {"de1", R::De}, {"am", R::Am}, {"am1", R::Am}, {"ig", R::Ig}, {"if", R::If},
        {"ie", R::Ie}, {"el", R::El}, {"while", R::While}, {"do", R::Do}, {"nop", R::Nop},
        {"TS", R::TS}, {"TE", R::TE}, {"T&", R::TAnd}, {"EQ", R::Equation}, {"PS", R::Picture},
    };
    // Layout, font, register and environment requests: nothing to keep as text.
    for (std::string_view name :
         {"PD", "DT", "AT", "UC", "IX", "RS", "RE", "EN", "PE", "ad", "na", "hy", "nh", "ne", "in",
          "ti", "ll", "ta", "ft", "ps", "vs", "fl", "lf", "cs", "bd", "ss", "mk", "rt", "pc", "cc",
          "ec", "eo", "hw", "hc", "lt", "nr", "rr", "rm", "rn", "tr", "ftr", "fam", "fcolor",
          "gcolor", "tm", "tm1", "tmc", "ab", "ev", "di", "da", "chop", "als", "pso", "mso",
          "ce", "ul", "cu", "it", "itc", "fp", "fschar", "fspecial", "hla", "hlm", "hpf", "hym",
          "hys", "kern", "lg", "sty", "trf", "cf", "ns", "rs", "os", "sv", "blm", "lsm", "pm",
          "pl", "bp", "po", "wh", "ch", "dt", "em", "nm", "nn", "char", "schar", "fchar",
          "rchar", "shc", "special", "uf", "vpt", "mc", "tc", "lc", "shift", "return", "break",
          "continue", "cp", "linetabs", "hcode", "ecs", "ecr", "substring", "length", "index",
          "asciify", "unformat", "backtrace", "nroff", "troff", "color", "defcolor", "warn",
          "sizes", "psbb", "box", "boxa", "spreadwarn", "ptr", "fc", "ls", "c2"})
      t.emplace(name, R::Ignore);
    return t;
  }();
  return table;
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Net change in conditional-block depth on a line: +1 per "\{", -1 per "\}".
int brace_delta(std::string_view s) {
  int delta = 0;
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] != '\\') continue;
    if (s[i + 1] == '{') ++delta;
    if (s[i + 1] == '}') --delta;
    ++i;
  }
  return delta;
}

// The name of a control line (text after the control character): up to a blank or an
// escape, so ".el\{" names "el". `rest` receives what follows the name.
std::string_view control_name(std::string_view s, std::string_view& rest) {
  s = trim_left(s);
  std::size_t end = 0;
  while (end < s.size() && !is_blank(s[end]) && s[end] != '\\') ++end;
  rest = s.substr(end);
  return s.substr(0, end);
}

// Copy mode for macro bodies: "\\" stands for one backslash, so "\\$1" becomes "\$1".
std::string copy_mode(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    out += line[i];
    if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '\\') ++i;
  }
  return out;
}

// Replaces \$1..\$9, \$*, \$@ and \$# in a macro body line with the call's arguments.
std::string substitute_args(std::string_view line, const std::vector<std::string>& args) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\' || i + 2 >= line.size() || line[i + 1] != '$') {
      out += line[i];
      continue;
    }
    const char which = line[i + 2];
    i += 2;
    if (which >= '1' && which <= '9') {
      const std::size_t k = static_cast<std::size_t>(which - '1');
      if (k < args.size()) out += args[k];
    } else if (which == '*' || which == '@') {
      for (std::size_t k = 0; k < args.size(); ++k) {
        if (k) out += ' ';
        out += which == '@' ? '"' + args[k] + '"' : args[k];
      }
    } else if (which == '#') {
      out += std::to_string(args.size());
    } else {
      out.append(line.substr(i - 2, 3));
    }
  }
  return out;
}

// "ls.1.gz" → ("ls", "1"); "README" → ("README", "").
std::pair<std::string, std::string> name_from_file(std::string_view source) {
  const std::size_t slash = source.find_last_of('/');
  std::string_view file = slash == std::string_view::npos ? source : source.substr(slash + 1);
  for (std::string_view ext : {".gz", ".bz2", ".xz", ".Z"})
    if (file.size() > ext.size() && file.substr(file.size() - ext.size()) == ext) {
      file.remove_suffix(ext.size());
      break;
    }
  const std::size_t dot = file.find_last_of('.');
  if (dot != std::string_view::npos && dot > 0 && dot + 1 < file.size() && file[dot + 1] >= '0' &&
      file[dot + 1] <= '9')
    return {std::string(file.substr(0, dot)), std::string(file.substr(dot + 1))};
  return {std::string(file), {}};
}

// "ls - list directory contents" → "list directory contents".
std::string description_of(std::string_view name_line) {
  std::size_t best = std::string_view::npos, length = 0;
  for (std::string_view separator : {" - ", " -- ", " \u2014 ", " \u2013 "}) {
    const std::size_t at = name_line.find(separator);
    if (at < best) best = at, length = separator.size();
  }
  if (best == std::string_view::npos) return {};
  return std::string(trim(name_line.substr(best + length)));
}

}  // namespace

ManParser::ManParser(std::string_view source_name) : source_(source_name) {
  auto [name, section] = name_from_file(source_name);
  page_.name = std::move(name);
  page_.section = std::move(section);
  // Strings the man macros predefine.
  strings_ = {{"lq", "\u201c"}, {"rq", "\u201d"}, {"R", "\u00ae"}, {"Tm", "\u2122"},
              {"S", ""}, {"HF", ""}, {"Aq", "'"},
              // Strings the mdoc macros predefine.
              {"Lq", "\u201c"}, {"Rq", "\u201d"}, {"Ba", "|"}, {"Ge", "\u2265"},
              {"Le", "\u2264"}, {"Gt", ">"}, {"Lt", "<"}, {"Am", "&"}, {"Ne", "\u2260"},
              {"Pm", "\u00b1"}, {"If", "\u221e"}, {"Pi", "\u03c0"}, {"Na", "NaN"},
              {"Px", "POSIX"}, {"Ai", "ANSI"}, {"q", "\""}, {"Ua", "\u2191"}, {"Da", "\u2193"}};
}

void ManParser::parse(std::string_view roff) {
  std::string joined;  // a line continued by a trailing backslash
  std::size_t begin = 0;
  while (begin < roff.size() && !done_) {
    std::size_t end = roff.find('\n', begin);
    if (end == std::string_view::npos) end = roff.size();
    std::string_view line = roff.substr(begin, end - begin);
    begin = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (roff::ends_with_continuation(roff::strip_comment(line))) {
      joined.append(line.substr(0, line.size() - 1));
      continue;
    }
    if (joined.empty()) {
      process(line, 0);
    } else {
      joined.append(line);
      process(joined, 0);
      joined.clear();
    }
  }
  if (!joined.empty()) process(joined, 0);
}

ManPage ManParser::finish() {
  flush();
  std::string title = page_.section.empty() ? page_.name : page_.name + "(" + page_.section + ")";
  page_.document = build_document(std::move(title), std::move(blocks_));
  page_.description = description_of(page_.name_line);
  return std::move(page_);
}

void ManParser::process(std::string_view raw, int depth) {
  if (done_ || depth > kMaxDepth) return;
  if (capture_ != Capture::None) return capture_line(raw);
  const std::string_view line = roff::strip_comment(raw);
  if (skip_depth_ > 0) {
    skip_depth_ = std::max(0, skip_depth_ + brace_delta(line));
    return;
  }
  if (!line.empty() && (line[0] == '.' || line[0] == '\'')) return control(line.substr(1), depth);
  if (table_ == Table::Off) return text_line(line);
  table_line(line);
}

void ManParser::capture_line(std::string_view raw) {
  if (!raw.empty() && (raw[0] == '.' || raw[0] == '\'')) {
    std::string_view rest;
    if (control_name(raw.substr(1), rest) == capture_end_) {
      if (capture_ == Capture::Define) macros_[capture_name_] = std::move(capture_body_);
      capture_body_.clear();
      capture_ = Capture::None;
      return;
    }
  }
  if (capture_ == Capture::Define) capture_body_.push_back(copy_mode(raw));
}

void ManParser::text_line(std::string_view line) {
  if (trim(line).empty()) return flush();  // a blank line breaks the paragraph
  std::string text;
  const bool join_next = roff::render(line, strings_, text);
  add_text(text);
  if (join_next) separator_ = Separator::None;
}

// Appends a rendered line to the paragraph, or makes it the pending heading or tag.
void ManParser::add_text(std::string_view text) {
  const std::string_view trimmed = trim(text);
  if (trimmed.empty()) return;
  if (pending_ == Pending::Heading) {
    pending_ = Pending::None;
    return open_section(std::string(trimmed), pending_rank_);
  }
  if (pending_ == Pending::Tag || pending_ == Pending::ExtraTag) {
    if (pending_ == Pending::ExtraTag && !para_.empty()) para_ += ", ";
    para_.append(trimmed);
    pending_ = Pending::None;
    separator_ = Separator::Tag;
    return;
  }
  if (!para_.empty()) {
    switch (separator_) {
      case Separator::None: break;
      case Separator::Newline: para_ += '\n'; break;
      case Separator::Tag: para_ += "  "; break;
      case Separator::Auto: para_ += nofill_ ? '\n' : ' '; break;
    }
  }
  // No-fill text keeps its indentation (code, tables); filled text is reflowed.
  para_.append(nofill_ && separator_ != Separator::Tag ? text.substr(0, text.find_last_not_of(" \t") + 1) : trimmed);
  separator_ = Separator::Auto;
  link_has_text_ = true;
}

void ManParser::flush() {
  if (pending_ == Pending::Tag || pending_ == Pending::ExtraTag) pending_ = Pending::None;
  if (!para_.empty()) {
    if (in_name_) {
      if (!page_.name_line.empty()) page_.name_line += ' ';
      for (char c : para_) page_.name_line += c == '\n' ? ' ' : c;
    }
    blocks_.push_back({0, std::move(para_)});
  }
  para_.clear();
  separator_ = Separator::Auto;
}

void ManParser::open_section(std::string heading, int rank) {
  flush();
  if (rank == 1) {
    section_ = lower(heading);
    in_name_ = !name_seen_ && lower(heading) == "name";
    name_seen_ = name_seen_ || in_name_;
  }
  blocks_.push_back({rank, std::move(heading)});
}

std::string ManParser::render_args(const std::vector<std::string>& args, std::string_view separator,
                                   bool* join_next) {
  std::string out;
  bool join = false;
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (k) out += separator;
    join = roff::render(args[k], strings_, out);
  }
  if (join_next) *join_next = join;
  return out;
}

void ManParser::add_macro_text(const std::vector<std::string>& args, std::string_view separator) {
  bool join = false;
  const std::string text = render_args(args, separator, &join);
  add_text(text);
  if (join) separator_ = Separator::None;
}

void ManParser::control(std::string_view line, int depth) {
  std::string_view rest;
  const std::string_view name = control_name(line, rest);
  if (name.empty()) return;  // "." alone, ".\}" and the like
  const auto known = requests().find(name);
  if (known == requests().end()) {
    const auto macro = macros_.find(std::string(name));
    if (macro != macros_.end()) return expand(macro->second, roff::split_args(rest), depth);
    if (is_mdoc_macro(name) &&
        (mdoc_ || name == "Dd" || name == "Dt" || name == "Os" || name == "Sh"))
      return mdoc_line(name, roff::split_args(rest));
    ++page_.unknown_macros;
    return add_macro_text(roff::split_args(rest), " ");
  }
  request(known->second, rest, depth);
}

void ManParser::expand(const std::vector<std::string>& body, const std::vector<std::string>& args, int depth) {
  for (const std::string& line : body) {
    if (++expanded_lines_ > kMaxExpandedLines)
      throw Error(fmt::format("{}: its macros expand to more than {} lines (a macro that calls itself?)", source_,
                              kMaxExpandedLines));
    process(substitute_args(line, args), depth + 1);
  }
}

void ManParser::request(Request r, std::string_view rest, int depth) {
  using R = Request;
  switch (r) {
    case R::Ignore: return;
    case R::Paragraph: return flush();
    case R::LineBreak:
      if (!para_.empty()) separator_ = Separator::Newline;
      return;
    case R::NoFill:
    case R::Fill:
      // A code block is a paragraph of its own, unless it is the body of a tag.
      if (separator_ != Separator::Tag && pending_ == Pending::None) flush();
      nofill_ = r == R::NoFill;
      return;
    case R::Font: return add_macro_text(roff::split_args(rest), " ");
    case R::Alternating: return add_macro_text(roff::split_args(rest), "");
    case R::Nop: return text_line(trim_left(rest));
    case R::Do: return control(rest, depth);
    default: break;
  }
  const std::vector<std::string> args = roff::split_args(rest);
  switch (r) {
    case R::TH:
      return title(args);
    case R::SH:
    case R::SS:
      flush();
      nofill_ = false;
      pending_rank_ = r == R::SH ? 1 : 2;
      if (args.empty()) {
        pending_ = Pending::Heading;
      } else {
        const std::string heading(trim(render_args(args, " ")));
        if (heading.empty()) pending_ = Pending::Heading;
        else open_section(heading, pending_rank_);
      }
      return;
    case R::TP:
      flush();
      pending_ = Pending::Tag;
      return;
    case R::TQ:
      pending_ = Pending::ExtraTag;
      return;
    case R::IP:
      flush();
      if (!args.empty()) {
        pending_ = Pending::Tag;
        add_text(render_args({args[0]}, ""));
        pending_ = Pending::None;
      }
      return;
    case R::UR:
      link_url_ = args.empty() ? std::string() : render_args({args[0]}, "");
      link_has_text_ = false;
      return;
    case R::UE:
      // The link's text, or the address itself when the link has none; then the
      // trailing punctuation given to .UE, without a space.
      if (!link_has_text_) add_text(link_url_);
      link_has_text_ = true;
      if (!args.empty()) {
        separator_ = Separator::None;
        add_macro_text(args, " ");
      }
      return;
    case R::OP:
      return add_text("[" + render_args(args, " ") + "]");
    case R::SY:
      flush();
      return add_macro_text(args, " ");
    case R::YS:
      return flush();
    case R::MR:
      if (args.size() >= 2)
        add_text(render_args({args[0]}, "") + "(" + render_args({args[1]}, "") + ")" +
                 (args.size() > 2 ? render_args({args[2]}, "") : std::string()));
      return;
    case R::So:
      // A page that only includes another (".so man3/foo.3") is an alias of it.
      if (blocks_.empty() && para_.empty() && !args.empty()) {
        page_.alias_of = args[0];
        done_ = true;
      }
      return;
    case R::Ds:
    case R::As:
      return define_string(rest, r == R::As);
    case R::De:
    case R::Am:
    case R::Ig:
      capture_ = r == R::Ig ? Capture::Ignore : Capture::Define;
      capture_name_ = args.empty() ? std::string() : args[0];
      capture_end_ = r == R::Ig ? (args.empty() ? "." : args[0]) : (args.size() > 1 ? args[1] : ".");
      capture_body_.clear();
      if (r == R::Am) {
        const auto old = macros_.find(capture_name_);
        if (old != macros_.end()) capture_body_ = old->second;
      }
      return;
    case R::If:
    case R::Ie:
    case R::While: {
      std::string_view body = rest;
      // A .while loop is never run: its body would repeat, and pages use it only in
      // macro packages.
      const bool condition = condition_holds(body) && r != R::While;
      if (r == R::Ie) ie_results_.push_back(condition);
      return branch(condition, body, depth);
    }
    case R::El: {
      const bool condition = !ie_results_.empty() && !ie_results_.back();
      if (!ie_results_.empty()) ie_results_.pop_back();
      return branch(condition, rest, depth);
    }
    case R::TS:
      flush();
      table_ = Table::Options;
      table_tab_ = '\t';
      return;
    case R::TAnd:
      table_ = Table::Format;
      return;
    case R::TE:
      table_ = Table::Off;
      return flush();
    case R::Equation:
    case R::Picture:  // eqn and pic input has no prose to keep
      capture_ = Capture::Ignore;
      capture_end_ = r == R::Equation ? "EN" : "PE";
      return;
    default:
      return;
  }
}

void ManParser::title(const std::vector<std::string>& args) {
  if (!args.empty()) {
    const std::string name(trim(render_args({args[0]}, "")));
    // Many pages shout the name in .TH ("LS"); the file name spells it as typed.
    if (!name.empty() && lower(name) != lower(page_.name)) page_.name = name;
  }
  if (args.size() > 1) {
    const std::string section(trim(render_args({args[1]}, "")));
    if (!section.empty()) page_.section = section;
  }
}

void ManParser::define_string(std::string_view rest, bool append) {
  std::string_view value;
  const std::string name(control_name(rest, value));
  value = trim_left(value);
  if (!value.empty() && value.front() == '"') value.remove_prefix(1);
  std::string rendered;
  roff::render(value, strings_, rendered);
  if (append) strings_[name] += rendered;
  else strings_[name] = std::move(rendered);
}

// Consumes the condition at the start of `s` and says whether nroff would take the
// branch: "n" holds, "t" and the other output conditions do not, \n(.g holds (we read
// groff's dialect), numbers hold when nonzero, 'a'b' compares strings, "d name" checks
// for a string or macro; anything else is false.
bool ManParser::condition_holds(std::string_view& s) {
  s = trim_left(s);
  bool negate = false;
  while (!s.empty() && s.front() == '!') negate = !negate, s.remove_prefix(1);
  if (s.empty()) return false;
  auto word_end = [&](std::size_t from) {
    std::size_t e = from;
    while (e < s.size() && !is_blank(s[e])) {
      if (s[e] == '\\' && e + 1 < s.size()) {
        const char kind = s[e + 1];
        e += 2;
        if ((kind == 'w' || kind == 'h' || kind == 'v') && e < s.size()) {  // \w'a b'
          const std::size_t close = s.find(s[e], e + 1);
          e = close == std::string_view::npos ? s.size() : close + 1;
        }
      } else {
        ++e;
      }
    }
    return e;
  };
  bool value = false;
  const char c = s.front();
  const bool single = s.size() == 1 || is_blank(s[1]) || s[1] == '\\';
  if (single && (c == 'n' || c == 't' || c == 'e' || c == 'o' || c == 'v' || c == 'h')) {
    value = c == 'n';
    s.remove_prefix(1);
  } else if ((c == 'd' || c == 'r' || c == 'm' || c == 'c' || c == 'F' || c == 'S') && s.size() > 1 &&
             is_blank(s[1])) {
    s = trim_left(s.substr(1));
    const std::size_t e = word_end(0);
    const std::string name(s.substr(0, e));
    value = c == 'd' && (strings_.count(name) > 0 || macros_.count(name) > 0);
    s.remove_prefix(e);
  } else if (c == '\'' || c == '"' || c == '|' || c == '/' || c == '#' || c == '@') {
    const std::size_t middle = s.find(c, 1);
    const std::size_t close = middle == std::string_view::npos ? middle : s.find(c, middle + 1);
    if (close == std::string_view::npos) {
      s = {};
      return false;
    }
    std::string a, b;
    roff::render(s.substr(1, middle - 1), strings_, a);
    roff::render(s.substr(middle + 1, close - middle - 1), strings_, b);
    value = a == b;
    s.remove_prefix(close + 1);
  } else {
    const std::size_t e = word_end(0);
    const std::string_view expr = s.substr(0, e);
    if (expr.starts_with("\\n(.g") || expr.starts_with("\\n[.g]")) {
      value = expr.find('=') == std::string_view::npos;  // "\n(.g==0" asks for plain troff
    } else if (expr.starts_with("\\w")) {
      std::size_t i = 2;
      std::string width;
      if (i < expr.size()) roff::render(expr.substr(i + 1, expr.size() > i + 2 ? expr.size() - i - 2 : 0), strings_, width);
      value = !width.empty();
    } else {
      long number = 0;
      std::size_t i = 0;
      while (i < expr.size() && expr[i] >= '0' && expr[i] <= '9') number = number * 10 + (expr[i++] - '0');
      value = i > 0 && number != 0;
    }
    s.remove_prefix(e);
  }
  return value != negate;
}

// The body of a conditional: a request or text line, or a \{ ... \} block.
void ManParser::branch(bool condition, std::string_view body, int depth) {
  body = trim_left(body);
  if (body.starts_with("\\{")) {
    body.remove_prefix(2);
    if (!condition) {
      skip_depth_ = std::max(0, 1 + brace_delta(body));
      return;
    }
    body = trim_left(body);
  }
  if (condition && !body.empty()) process(body, depth + 1);
}

// tbl(1) input: an options line ending in ';', format lines up to one ending in '.',
// then rows whose cells are separated by the tab character. Rows become lines.
void ManParser::table_line(std::string_view line) {
  const std::string_view t = trim(line);
  if (table_ == Table::Options) {
    table_ = Table::Format;
    if (!t.empty() && t.back() == ';') {
      const std::size_t tab = t.find("tab(");
      if (tab != std::string_view::npos && tab + 4 < t.size()) table_tab_ = t[tab + 4];
      return;
    }
  }
  if (table_ == Table::Format) {
    if (!t.empty() && t.back() == '.') table_ = Table::Rows;
    return;
  }
  if (t == "_" || t == "=" || t.empty()) return;
  std::string row;
  std::size_t begin = 0;
  while (begin <= line.size()) {
    std::size_t end = line.find(table_tab_, begin);
    if (end == std::string_view::npos) end = line.size();
    std::string_view cell = trim(line.substr(begin, end - begin));
    if (cell.starts_with("T}")) cell.remove_prefix(2);
    if (cell.ends_with("T{")) cell.remove_suffix(2);
    std::string rendered;
    roff::render(trim(cell), strings_, rendered);
    if (!rendered.empty()) {
      if (!row.empty()) row += "  ";
      row += rendered;
    }
    begin = end + 1;
  }
  if (row.empty()) return;
  if (!para_.empty()) separator_ = Separator::Newline;
  add_text(row);
}

}  // namespace man_detail

ManPage parse_manpage(std::string_view roff, std::string_view source_name) {
  man_detail::ManParser parser(source_name);
  std::string sanitized;
  std::size_t replaced = 0;
  if (!is_valid_utf8(roff)) {
    sanitized = sanitize_utf8(roff, &replaced);
    roff = sanitized;
  }
  parser.parse(roff);
  ManPage page = parser.finish();
  page.invalid_utf8_bytes = replaced;
  return page;
}

ManPage read_manpage(const std::filesystem::path& path) {
  const std::string roff = read_maybe_gzip(path);
  ManPage page = parse_manpage(roff, path.string());
  std::string id = path.filename().string();
  if (id.ends_with(".gz")) id.resize(id.size() - 3);
  page.document.id = std::move(id);
  return page;
}

}  // namespace strata
