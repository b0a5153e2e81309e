#pragma once
// The man(7) and mdoc(7) page parser, private to manpage.cpp (man(7) and roff requests) and
// mdoc.cpp (BSD mdoc(7) macros).
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "roff_text.h"
#include "strata/doc/manpage.h"

namespace strata::man_detail {

enum class Request {
  TH, SH, SS, Paragraph, TP, TQ, IP, Font, Alternating, LineBreak, NoFill, Fill, Ignore,
  UR, UE, OP, SY, YS, MR, So, Ds, As, De, Am, Ig, If, Ie, El, While, Do, Nop, TS, TE, TAnd,
  Equation, Picture,
};

std::string_view trim(std::string_view s);

// One pass over the lines of the page. Text lines and the text-producing macros append to
// the current paragraph (filled lines joined by a space, no-fill lines by a newline);
// paragraph macros flush it. Page-defined macros (.de) are expanded with their arguments,
// .ds strings are kept, and .if/.ie/.el take the branch nroff would, so the generator
// preambles of pod2man, help2man and docutils render as groff renders them, without regex.
class ManParser {
 public:
  explicit ManParser(std::string_view source_name);
  void parse(std::string_view roff);
  ManPage finish();

 private:
  enum class Pending { None, Heading, Tag, ExtraTag };
  enum class Separator { Auto, None, Newline, Tag };
  enum class Capture { None, Define, Ignore };
  enum class Table { Off, Options, Format, Rows };
  static constexpr int kMaxDepth = 16;  // macro expansion and nested conditionals
  // Lines that page-defined macros may expand to, in all: far above any real page (pod2man's
  // pages expand a few thousand), and what stops a macro that calls itself several times from
  // growing exponentially within kMaxDepth.
  static constexpr std::size_t kMaxExpandedLines = 200'000;

  void process(std::string_view raw, int depth);
  void capture_line(std::string_view raw);
  void text_line(std::string_view line);
  void add_text(std::string_view text);
  void flush();
  void open_section(std::string heading, int rank);
  std::string render_args(const std::vector<std::string>& args, std::string_view separator,
                          bool* join_next = nullptr);
  void add_macro_text(const std::vector<std::string>& args, std::string_view separator);
  void control(std::string_view line, int depth);
  void expand(const std::vector<std::string>& body, const std::vector<std::string>& args, int depth);
  void request(Request r, std::string_view rest, int depth);
  void title(const std::vector<std::string>& args);
  void define_string(std::string_view rest, bool append);
  bool condition_holds(std::string_view& s);
  void branch(bool condition, std::string_view body, int depth);
  void table_line(std::string_view line);

  // ---- mdoc(7) ----------------------------------------------------------------------
  enum class ListKind { Tag, Bullet, Enum, Item, Column };
  struct MdocList {
    ListKind kind = ListKind::Tag;
    int count = 0;
  };

  // Words of one mdoc line joined with spaces; delimiters and .Ns join without.
  struct Words {
    std::string s;
    bool started = false;
    bool attach_first = false;  // the line's first word joins the previous text
    bool nospace = false;       // the next word joins without a space
    bool spacing = true;
    void put(std::string_view w, bool attach = false) {
      if (!started) {
        started = true;
        attach_first = attach;
      } else if (!attach && !nospace && spacing) {
        s += ' ';
      }
      s.append(w);
      nospace = false;
    }
  };

  static bool is_mdoc_macro(std::string_view name);
  static bool is_callable(std::string_view word);
  static bool is_closing(std::string_view w);
  static bool is_opening(std::string_view w);
  static bool is_delimiter(std::string_view w);
  std::string text_of(std::string_view arg);
  void put_word(Words& w, std::string_view arg);
  void mdoc_args(const std::vector<std::string>& a, std::size_t& i, std::size_t end, Words& w);
  void plain_words(const std::vector<std::string>& a, std::size_t& i, std::size_t end, Words& w);
  static bool has_word(const std::vector<std::string>& a, std::size_t i, std::size_t end);
  void enclose(const std::vector<std::string>& a, std::size_t& i, std::size_t end, Words& w,
               std::string_view open, std::string_view close);
  void mdoc_call(std::string_view name, const std::vector<std::string>& a, std::size_t& i,
                 std::size_t end, Words& w);
  void emit_words(const Words& w);
  std::string mdoc_render(const std::vector<std::string>& args, std::size_t from = 0);
  void mdoc_line(std::string_view name, const std::vector<std::string>& args);
  void item(const std::vector<std::string>& args);

  ManPage page_;
  std::vector<DocumentBlock> blocks_;  // rank 0: a paragraph; 1 or 2: a heading (.SH, .SS)
  std::string para_;
  bool nofill_ = false;
  Pending pending_ = Pending::None;
  int pending_rank_ = 1;
  Separator separator_ = Separator::Auto;
  bool in_name_ = false;
  bool name_seen_ = false;
  bool done_ = false;
  std::string link_url_;
  bool link_has_text_ = true;
  roff::Strings strings_;
  std::unordered_map<std::string, std::vector<std::string>> macros_;
  std::size_t expanded_lines_ = 0;
  std::string source_;  // the page's name, for errors
  std::vector<bool> ie_results_;
  int skip_depth_ = 0;
  Capture capture_ = Capture::None;
  std::string capture_name_;
  std::string capture_end_;
  std::vector<std::string> capture_body_;
  Table table_ = Table::Off;
  char table_tab_ = '\t';
  // mdoc(7) state.
  bool mdoc_ = false;
  std::string section_;   // the current level-1 heading, lowercased
  std::string nm_name_;   // the first .Nm argument: what a bare .Nm renders
  std::vector<MdocList> lists_;
  std::vector<bool> display_nofill_;  // nofill_ before each open .Bd
  bool spacing_ = true;   // .Sm on/off
  bool in_ref_ = false;   // between .Rs and .Re
  bool xo_open_ = false;  // an .It head continued over lines (.Xo ... .Xc)
  bool xo_seen_ = false, xc_seen_ = false;  // set while rendering one line
};

}  // namespace strata::man_detail
