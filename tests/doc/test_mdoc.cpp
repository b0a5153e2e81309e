#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "strata/doc/manpage.h"
#include "doc_test_util.h"

namespace strata {
namespace {

using test::kDocData;
using test::paragraph_texts;

std::string render_mdoc(std::string_view body) {
  const std::string roff = ".Dd March 3 2024\n.Dt T 1\n.Os\n.Sh S\n" + std::string(body);
  return parse_manpage(roff, "t.1").document.text;
}

TEST(Mdoc, FixtureHeader) {
  const ManPage page = read_manpage(kDocData / "frob.1");
  EXPECT_EQ(page.name, "frob");  // .Dt FROB lowercased to the file name
  EXPECT_EQ(page.section, "1");
  EXPECT_EQ(page.name_line, "frob - twiddle the bits of a remote widget");
  EXPECT_EQ(page.description, "twiddle the bits of a remote widget");
  EXPECT_EQ(page.unknown_macros, 0u);
  EXPECT_EQ(page.document.title, "frob(1)");
}

TEST(Mdoc, FixtureSections) {
  const ManPage page = read_manpage(kDocData / "frob.1");
  const Section& root = page.document.root;
  std::vector<std::string> headings;
  for (const Section& s : root.children) {
    EXPECT_EQ(s.level, 1);
    headings.push_back(s.heading);
  }
  EXPECT_EQ(headings, (std::vector<std::string>{"NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS",
                                                "SEE ALSO", "HISTORY"}));
  ASSERT_EQ(root.children[2].children.size(), 1u);
  EXPECT_EQ(root.children[2].children[0].heading, "Widget files");
  EXPECT_EQ(root.children[2].children[0].level, 2);
}

TEST(Mdoc, FixtureBody) {
  const ManPage page = read_manpage(kDocData / "frob.1");
  const Document& doc = page.document;
  const auto& top = doc.root.children;
  EXPECT_EQ(paragraph_texts(doc, top[1]),
            (std::vector<std::string>{"frob [-46qv] [-b bind_address] [-D [bind_address:]port] widget "
                                      "[command [argument ...]]"}));
  EXPECT_EQ(paragraph_texts(doc, top[2]),
            (std::vector<std::string>{
                "frob connects to a widget over ssh(1) and flips its bits.",
                "The options are as follows:",
                "-4  Use IPv4 addresses only.",
                "-b bind_address  Bind to bind_address on the local machine (see FROB_HOST).",
                "-v  Verbose mode.",
            }));
  EXPECT_EQ(paragraph_texts(doc, top[2].children[0]),
            (std::vector<std::string>{"The file ~/.frob/widgets lists known widgets, one per line:",
                                      "alpha 10\nbeta  20"}));
  EXPECT_EQ(paragraph_texts(doc, top[3]),
            (std::vector<std::string>{"The frob utility exits 0 on success, and >0 if an error occurs."}));
  EXPECT_EQ(paragraph_texts(doc, top[4]), (std::vector<std::string>{"scp(1), ssh_config(5)"}));
  EXPECT_EQ(paragraph_texts(doc, top[5]), (std::vector<std::string>{"frob first appeared in 4.4BSD."}));
}

TEST(Mdoc, InlineMacros) {
  EXPECT_EQ(render_mdoc(".Op Fl b Ar bind_address\n"), "[-b bind_address]");
  EXPECT_EQ(render_mdoc(".Fl v\n"), "-v");
  EXPECT_EQ(render_mdoc(".Fn open path flags ;\n"), "open(path, flags);");
  EXPECT_EQ(render_mdoc(".Dq quoted , \n"), "\u201cquoted\u201d,");
  EXPECT_EQ(render_mdoc(".Qq q\n.Sq s\n.Aq a\n.Ql l\n"), "\"q\" \u2018s\u2019 <a> \u2018l\u2019");
  EXPECT_EQ(render_mdoc(".Po\nin\n.Pc\n"), "(in)");
  EXPECT_EQ(render_mdoc(".Ar a Ns Ar b\n"), "ab");
  EXPECT_EQ(render_mdoc(".Xr ls 1 .\n"), "ls(1).");
  EXPECT_EQ(render_mdoc(".Ux\n.At v7\n"), "UNIX AT&T UNIX");
  EXPECT_EQ(render_mdoc(".Lk https://example.org the site\n"), "the site");
  EXPECT_EQ(render_mdoc(".Sm off\n.No a : b\n.Sm on\nc\n"), "a:b c");
  EXPECT_EQ(render_mdoc(".Bl -column A B\n.It x Ta y\n.It z Ta w\n.El\n"), "x  y\nz  w");
  EXPECT_EQ(render_mdoc(".Bl -enum\n.It\none\n.It\ntwo\n.El\n"), "1.  one\n\n2.  two");
  EXPECT_EQ(render_mdoc(".Bl -tag\n.It Xo\n.Fl a\n.Ar b\n.Xc\nbody\n.El\n"), "-a b  body");
  EXPECT_EQ(render_mdoc(".Rs\n.%A J. Doe\n.%T A Title\n.Re\n"), "J. Doe, A Title.");
}

TEST(Mdoc, MalformedInputDoesNotCrash) {
  for (std::string_view body :
       {".El\n.El\n.It\n.It Fl\n", ".Bl -tag\n.It Op\n.Bd -literal\nx\n", ".Op\n.Fl\n.Xr\n.Fn\n.Oo\n",
        ".Ed\n.Ed\n.Re\n.%A\n.Ex\n.Nd\n.Sh\n", ".Pq Ns\n.Ta\n.Xo\n.Xc\n.Sm\n.Lk\n.Bx\n.Eo\n.Ec\n"}) {
    EXPECT_NO_THROW(render_mdoc(body));
    EXPECT_NO_THROW(parse_manpage(body, "x.1"));
  }
}

void check_installed(const char* file) {
  const std::filesystem::path path = std::filesystem::path("/usr/share/man/man1") / file;
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not installed";
  const ManPage page = read_manpage(path);
  EXPECT_FALSE(page.description.empty()) << file;
  EXPECT_GE(page.document.root.children.size(), 5u) << file;
  EXPECT_LE(page.unknown_macros, 3u) << file;
}

TEST(Mdoc, InstalledSsh) { check_installed("ssh.1.gz"); }
TEST(Mdoc, InstalledTmux) { check_installed("tmux.1.gz"); }

}  // namespace
}  // namespace strata
