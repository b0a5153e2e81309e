// BSD mdoc(7) macros: the ManParser members that render them.
#include <string>
#include <unordered_map>
#include <vector>

#include "man_parser.h"
#include "roff_text.h"

namespace strata::man_detail {

namespace {

// Every mdoc macro strata knows, mapped to whether it is callable: whether it may stand as a
// word on another macro's line (".Op Fl v") and be rendered there.
const std::unordered_map<std::string_view, bool>& mdoc_macros() {
  static const std::unordered_map<std::string_view, bool> table = [] {
    std::unordered_map<std::string_view, bool> t;
    for (std::string_view n :
         {"Ac", "Ad", "An", "Ao", "Ap", "Aq", "Ar", "At", "Bc", "Bo", "Bq", "Brc", "Bro", "Brq",
          "Bsx", "Bx", "Cd", "Cm", "Dc", "Do", "Dq", "Dv", "Dx", "Ec", "Em", "En", "Eo", "Er",
          "Es", "Ev", "Fa", "Fc", "Fl", "Fn", "Fr", "Ft", "Fx", "Ic", "Li", "Lk", "Ms", "Mt",
          "Nm", "No", "Ns", "Nx", "Oc", "Oo", "Op", "Ot", "Ox", "Pa", "Pc", "Pf", "Po", "Pq",
          "Qc", "Ql", "Qo", "Qq", "Sc", "So", "Sq", "Sx", "Sy", "Ta", "Tn", "Ux", "Va", "Vt",
          "Xc", "Xo", "Xr"})
      t.emplace(n, true);
    for (std::string_view n :
         {"St", "Lb", "Ek", "Bk", "Dd", "Dt", "Os", "Sh", "Ss", "Pp", "Lp", "Nd", "Bl", "El",
          "It", "Bd", "Ed", "D1", "Dl", "Rs", "Re", "%A", "%B", "%C", "%D", "%I", "%J", "%N",
          "%O", "%P", "%Q", "%R", "%T", "%U", "%V", "Ex", "Rv", "Sm", "In", "Fd", "Fo", "Bf",
          "Ef", "Db", "Ud", "Bt", "Hf", "Tg"})
      t.emplace(n, false);
    return t;
  }();
  return table;
}

}  // namespace

bool ManParser::is_mdoc_macro(std::string_view name) { return mdoc_macros().count(name) > 0; }

bool ManParser::is_callable(std::string_view word) {
  const auto it = mdoc_macros().find(word);
  return it != mdoc_macros().end() && it->second;
}

bool ManParser::is_closing(std::string_view w) {
  return w == "." || w == "," || w == ";" || w == ":" || w == ")" || w == "]" || w == "?" ||
         w == "!";
}

bool ManParser::is_opening(std::string_view w) { return w == "(" || w == "["; }

bool ManParser::is_delimiter(std::string_view w) { return is_closing(w) || is_opening(w) || w == "|"; }

std::string ManParser::text_of(std::string_view arg) {
  std::string out;
  roff::render(arg, strings_, out);
  return out;
}

// A plain word or a delimiter.
void ManParser::put_word(Words& w, std::string_view arg) {
  if (is_closing(arg)) return w.put(arg, true);
  if (is_opening(arg)) {
    w.put(arg);
    w.nospace = true;
    return;
  }
  w.put(text_of(arg));
}

// Renders args[i..end) left to right, calling the macros among them.
void ManParser::mdoc_args(const std::vector<std::string>& a, std::size_t& i, std::size_t end, Words& w) {
  while (i < end) {
    if (is_callable(a[i])) {
      const std::string name = a[i++];
      mdoc_call(name, a, i, end, w);
    } else {
      put_word(w, a[i++]);
    }
  }
}

// Plain words up to the next callable macro.
void ManParser::plain_words(const std::vector<std::string>& a, std::size_t& i, std::size_t end, Words& w) {
  while (i < end && !is_callable(a[i])) put_word(w, a[i++]);
}

// Has a non-delimiter word before the next macro?
bool ManParser::has_word(const std::vector<std::string>& a, std::size_t i, std::size_t end) {
  return i < end && !is_callable(a[i]) && !is_delimiter(a[i]);
}

void ManParser::enclose(const std::vector<std::string>& a, std::size_t& i, std::size_t end, Words& w,
                        std::string_view open, std::string_view close) {
  std::size_t stop = end;
  while (stop > i && is_closing(a[stop - 1])) --stop;  // trailing punctuation goes outside
  Words inner;
  inner.spacing = w.spacing;
  mdoc_args(a, i, stop, inner);
  w.put(std::string(open) + inner.s + std::string(close));
}

void ManParser::mdoc_call(std::string_view name, const std::vector<std::string>& a, std::size_t& i,
                          std::size_t end, Words& w) {
  if (name == "Fl") {
    if (!has_word(a, i, end)) w.put("-");
    while (has_word(a, i, end)) w.put(std::string("-").append(text_of(a[i++])));
    return;
  }
  if (name == "Ar") {
    if (!has_word(a, i, end)) w.put("file ...");
    return plain_words(a, i, end, w);
  }
  if (name == "Nm") {
    if (!has_word(a, i, end)) w.put(nm_name_.empty() ? page_.name : nm_name_);
    return plain_words(a, i, end, w);
  }
  if (name == "Pa") {
    if (!has_word(a, i, end)) w.put("~");
    return plain_words(a, i, end, w);
  }
  if (name == "Xr") {
    if (has_word(a, i, end)) {
      std::string ref = text_of(a[i++]);
      if (has_word(a, i, end)) ref.append("(").append(text_of(a[i++])).append(")");
      w.put(ref);
    }
    return plain_words(a, i, end, w);
  }
  if (name == "Fn") {
    if (!has_word(a, i, end)) return;
    std::string call = text_of(a[i++]) + "(";
    for (bool first = true; has_word(a, i, end); first = false)
      call += (first ? "" : ", ") + text_of(a[i++]);
    w.put(call + ")");
    return plain_words(a, i, end, w);
  }
  if (name == "Ns") {
    w.nospace = true;
    return;
  }
  if (name == "Ap") return w.put("'", true);
  if (name == "Pf") {
    if (i < end && !is_callable(a[i])) w.put(text_of(a[i++]));
    w.nospace = true;
    return;
  }
  if (name == "Ta") {
    w.s += "  ";
    w.started = true;
    w.nospace = true;
    return;
  }
  if (name == "Xo") {
    xo_seen_ = true;
    return;
  }
  if (name == "Xc") {
    xc_seen_ = true;
    return;
  }
  if (name == "Ux") return w.put("UNIX");
  if (name == "At") {
    if (has_word(a, i, end)) ++i;  // the version
    return w.put("AT&T UNIX");
  }
  if (name == "Bx" || name == "Fx" || name == "Nx" || name == "Ox" || name == "Dx" || name == "Bsx") {
    const std::string os = name == "Bx" ? "BSD" : name == "Fx" ? "FreeBSD" : name == "Nx" ? "NetBSD"
                           : name == "Ox" ? "OpenBSD" : name == "Dx" ? "DragonFly" : "BSD/OS";
    if (name == "Bx") {
      std::string text = has_word(a, i, end) ? text_of(a[i++]) + os : os;
      if (has_word(a, i, end)) text.append("-").append(text_of(a[i++]));
      return w.put(text);
    }
    return w.put(has_word(a, i, end) ? os + " " + text_of(a[i++]) : os);
  }
  if (name == "An") {
    if (i < end && (a[i] == "-split" || a[i] == "-nosplit")) ++i;
    return plain_words(a, i, end, w);
  }
  if (name == "Lk") {
    if (!has_word(a, i, end)) return;
    const std::string url = text_of(a[i++]);
    if (!has_word(a, i, end)) return w.put(url);
    return plain_words(a, i, end, w);
  }
  // Enclosures over the rest of the line.
  struct Pair { std::string_view name, open, close; };
  static constexpr Pair pairs[] = {
      {"Op", "[", "]"}, {"Bq", "[", "]"}, {"Pq", "(", ")"}, {"Aq", "<", ">"},
      {"Brq", "{", "}"}, {"Dq", "\u201c", "\u201d"}, {"Qq", "\"", "\""},
      {"Sq", "\u2018", "\u2019"}, {"Ql", "\u2018", "\u2019"}};
  for (const Pair& p : pairs)
    if (name == p.name) return enclose(a, i, end, w, p.open, p.close);
  // Enclosures over several macros or lines.
  static constexpr Pair opens[] = {
      {"Oo", "[", ""}, {"Bo", "[", ""}, {"Po", "(", ""}, {"Ao", "<", ""}, {"Bro", "{", ""},
      {"Do", "\u201c", ""}, {"Qo", "\"", ""}, {"So", "\u2018", ""}};
  for (const Pair& p : opens)
    if (name == p.name) {
      w.put(p.open);
      w.nospace = true;
      return;
    }
  static constexpr Pair closes[] = {
      {"Oc", "]", ""}, {"Bc", "]", ""}, {"Pc", ")", ""}, {"Ac", ">", ""}, {"Brc", "}", ""},
      {"Dc", "\u201d", ""}, {"Qc", "\"", ""}, {"Sc", "\u2019", ""}};
  for (const Pair& p : closes)
    if (name == p.name) return w.put(p.open, true);
  if (name == "Eo") {
    if (i < end && !is_callable(a[i])) {
      w.put(text_of(a[i++]));
      w.nospace = true;
    }
    return;
  }
  if (name == "Ec") {
    if (i < end && !is_callable(a[i])) w.put(text_of(a[i++]), true);
    return;
  }
  if (name == "Ek" || name == "Bk") {
    if (i < end && a[i] == "-words") ++i;
    return;
  }
  if (name == "Fc") return w.put(")", true);
  // The semantic macros that only change the font: Cm, Ic, Ev, Va, Fa, Ft, Em, Sy, Li, No, ...
  plain_words(a, i, end, w);
}

// Adds one rendered mdoc line to the paragraph, keeping its joins.
void ManParser::emit_words(const Words& w) {
  if (w.s.empty() || trim(w.s).empty()) {
    if (w.nospace && !para_.empty()) separator_ = Separator::None;
    return;
  }
  if (w.attach_first && !para_.empty() && pending_ == Pending::None) separator_ = Separator::None;
  add_text(w.s);
  if (w.nospace || !spacing_) separator_ = Separator::None;
}

std::string ManParser::mdoc_render(const std::vector<std::string>& args, std::size_t from) {
  Words w;
  w.spacing = spacing_;
  std::size_t i = std::min(from, args.size());
  mdoc_args(args, i, args.size(), w);
  return w.s;
}

void ManParser::mdoc_line(std::string_view name, const std::vector<std::string>& args) {
  xo_seen_ = xc_seen_ = false;
  if (name == "Dd" || name == "Os" || name == "Db" || name == "Bf" || name == "Ef" ||
      name == "Ud" || name == "Bt" || name == "Hf" || name == "Tg") {
    if (name == "Dd" || name == "Os") mdoc_ = true;
    return;
  }
  if (name == "Dt") {
    mdoc_ = true;
    return title(args);
  }
  if (name == "Sh" || name == "Ss") {
    mdoc_ = true;
    flush();
    nofill_ = false;
    lists_.clear();
    display_nofill_.clear();
    xo_open_ = false;
    pending_rank_ = name == "Sh" ? 1 : 2;
    const std::string heading(trim(mdoc_render(args)));
    if (heading.empty()) pending_ = Pending::Heading;
    else open_section(heading, pending_rank_);
    return;
  }
  if (name == "Pp" || name == "Lp") return flush();
  if (name == "Nd") return add_text("- " + mdoc_render(args));
  if (name == "Bl") {
    flush();
    MdocList list;
    for (const std::string& arg : args) {
      if (arg == "-bullet" || arg == "-dash" || arg == "-hyphen") list.kind = ListKind::Bullet;
      else if (arg == "-enum") list.kind = ListKind::Enum;
      else if (arg == "-item") list.kind = ListKind::Item;
      else if (arg == "-column") list.kind = ListKind::Column;
      else if (arg == "-tag" || arg == "-hang" || arg == "-ohang" || arg == "-inset" || arg == "-diag")
        list.kind = ListKind::Tag;
      else continue;
      break;
    }
    if (lists_.size() < 64) lists_.push_back(list);
    return;
  }
  if (name == "El") {
    xo_open_ = false;
    if (!lists_.empty() && lists_.back().kind == ListKind::Column) flush();
    flush();
    if (!lists_.empty()) lists_.pop_back();
    return;
  }
  if (name == "It") return item(args);
  if (name == "Bd") {
    if (separator_ != Separator::Tag && pending_ == Pending::None) flush();
    if (display_nofill_.size() < 64) display_nofill_.push_back(nofill_);
    for (const std::string& arg : args)
      if (arg == "-literal" || arg == "-unfilled") nofill_ = true;
    return;
  }
  if (name == "Ed") {
    flush();
    if (!display_nofill_.empty()) {
      nofill_ = display_nofill_.back();
      display_nofill_.pop_back();
    } else {
      nofill_ = false;
    }
    return;
  }
  if (name == "D1" || name == "Dl") {
    flush();
    add_text(name == "Dl" ? [&] {
      std::string text;
      for (std::size_t k = 0; k < args.size(); ++k) text.append(k ? " " : "").append(text_of(args[k]));
      return text;
    }()
                          : mdoc_render(args));
    return flush();
  }
  if (name == "Rs") {
    flush();
    in_ref_ = true;
    return;
  }
  if (name == "Re") {
    if (in_ref_ && !para_.empty()) para_ += '.';
    in_ref_ = false;
    return flush();
  }
  if (name.starts_with("%")) {
    if (in_ref_ && !para_.empty()) para_ += ',';
    return add_text(mdoc_render(args));
  }
  if (name == "Sm") {
    spacing_ = args.empty() ? !spacing_ : args[0] != "off";
    if (spacing_ && separator_ == Separator::None) separator_ = Separator::Auto;
    return;
  }
  if (name == "Ex" || name == "Rv") {
    std::vector<std::string> names;
    for (const std::string& arg : args)
      if (arg != "-std") names.push_back(text_of(arg));
    if (names.empty()) names.push_back(nm_name_.empty() ? page_.name : nm_name_);
    std::string list;
    for (std::size_t k = 0; k < names.size(); ++k) {
      if (k) list += k + 1 == names.size() ? " and " : ", ";
      list += name == "Rv" ? names[k] + "()" : names[k];
    }
    if (name == "Ex")
      return add_text("The " + list + (names.size() > 1 ? " utilities exit" : " utility exits") +
                      " 0 on success, and >0 if an error occurs.");
    return add_text("The " + list + (names.size() > 1 ? " functions return" : " function returns") +
                    " the value 0 if successful; otherwise the value -1 is returned and the "
                    "global variable errno is set to indicate the error.");
  }
  if (name == "In") return add_text("#include <" + mdoc_render(args) + ">");
  if (name == "Fd" || name == "Lb" || name == "St" || name == "Ot") return add_text(mdoc_render(args));
  if (name == "Fo") {
    Words w;
    w.put((args.empty() ? std::string() : text_of(args[0])) + "(");
    w.nospace = true;
    return emit_words(w);
  }
  if (name == "Nm") {
    if (in_name_ && !args.empty() && !is_callable(args[0]) && nm_name_.empty())
      nm_name_ = text_of(args[0]);
    if (section_ == "synopsis") flush();  // each synopsis form on a paragraph of its own
    if (nm_name_.empty() && !args.empty() && !is_callable(args[0]) && !is_delimiter(args[0]))
      nm_name_ = text_of(args[0]);
  }
  // A line of inline macros.
  Words w;
  w.spacing = spacing_;
  std::size_t i = 0;
  mdoc_call(name, args, i, args.size(), w);
  mdoc_args(args, i, args.size(), w);
  emit_words(w);
  if (xc_seen_ && xo_open_) {
    xo_open_ = false;
    if (!para_.empty()) separator_ = Separator::Tag;
  }
}

void ManParser::item(const std::vector<std::string>& args) {
  const ListKind kind = lists_.empty() ? ListKind::Tag : lists_.back().kind;
  xo_seen_ = xc_seen_ = false;
  if (kind == ListKind::Column) {
    // Each row a line of the table's paragraph; cells apart by two spaces.
    Words w;
    w.spacing = spacing_;
    std::size_t i = 0;
    mdoc_args(args, i, args.size(), w);
    if (!trim(w.s).empty()) {
      if (!para_.empty()) separator_ = Separator::Newline;
      add_text(w.s);
    }
    return;
  }
  flush();
  xo_open_ = false;
  if (kind == ListKind::Bullet || kind == ListKind::Item) return;
  std::string head;
  if (kind == ListKind::Enum) {
    head = std::to_string(++lists_.back().count) + ".";
  } else {
    head = std::string(trim(mdoc_render(args)));
  }
  if (head.empty() && !xo_seen_) return;
  if (!head.empty()) {
    pending_ = Pending::Tag;
    add_text(head);
  }
  if (xo_seen_) {
    xo_open_ = true;
    if (!para_.empty()) separator_ = Separator::Auto;
  }
}

}  // namespace strata::man_detail
