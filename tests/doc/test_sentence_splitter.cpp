#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "strata/doc/manpage.h"
#include "strata/doc/sentence_splitter.h"

namespace strata {
namespace {

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  for (Span s : split_sentences(text)) out.emplace_back(text.substr(s.begin, s.size()));
  return out;
}

using Sentences = std::vector<std::string>;

TEST(SentenceSplitter, EmptyAndWhitespace) {
  EXPECT_TRUE(split_sentences("").empty());
  EXPECT_TRUE(split_sentences(" \n\t ").empty());
}

TEST(SentenceSplitter, SpansAreTrimmedAndExact) {
  const std::vector<Span> spans = split_sentences("  Hello there.  World!  ");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0], (Span{2, 14}));
  EXPECT_EQ(spans[1], (Span{16, 22}));
}

TEST(SentenceSplitter, TerminalPunctuation) {
  EXPECT_EQ(split("It works. Does it? Yes! Fine."), (Sentences{"It works.", "Does it?", "Yes!", "Fine."}));
  EXPECT_EQ(split("What?! No way."), (Sentences{"What?!", "No way."}));
  EXPECT_EQ(split("No final stop"), (Sentences{"No final stop"}));
}

TEST(SentenceSplitter, Abbreviations) {
  EXPECT_EQ(split("Use a tool, e.g. grep. It helps."), (Sentences{"Use a tool, e.g. grep.", "It helps."}));
  EXPECT_EQ(split("Pick one, i.e. the first. Done."), (Sentences{"Pick one, i.e. the first.", "Done."}));
  EXPECT_EQ(split("E.g. this starts a sentence."), (Sentences{"E.g. this starts a sentence."}));
  EXPECT_EQ(split("Dr. Smith met Mr. Jones vs. Mrs. Brown."), (Sentences{"Dr. Smith met Mr. Jones vs. Mrs. Brown."}));
  EXPECT_EQ(split("See Fig. 3 and cf. Table 2 in No. 5 of the series."),
            (Sentences{"See Fig. 3 and cf. Table 2 in No. 5 of the series."}));
  EXPECT_EQ(split("He said e.g., this one."), (Sentences{"He said e.g., this one."}));
}

TEST(SentenceSplitter, AbbreviationsThatMayEndASentence) {
  EXPECT_EQ(split("Apples, pears, etc. The end."), (Sentences{"Apples, pears, etc.", "The end."}));
  EXPECT_EQ(split("Apples, pears, etc. and more."), (Sentences{"Apples, pears, etc. and more."}));
  EXPECT_EQ(split("Smith et al. showed it."), (Sentences{"Smith et al. showed it."}));
  EXPECT_EQ(split("He moved to the U.S. in 1990."), (Sentences{"He moved to the U.S. in 1990."}));
  EXPECT_EQ(split("He lives in the U.S. The end."), (Sentences{"He lives in the U.S.", "The end."}));
}

TEST(SentenceSplitter, InitialsAndEnumerations) {
  EXPECT_EQ(split("J. R. R. Tolkien wrote it. Then he slept."),
            (Sentences{"J. R. R. Tolkien wrote it.", "Then he slept."}));
  EXPECT_EQ(split("1. Introduction to the tool."), (Sentences{"1. Introduction to the tool."}));
  EXPECT_EQ(split("iv. The fourth point."), (Sentences{"iv. The fourth point."}));
  EXPECT_EQ(split("(a) First. (b) Second."), (Sentences{"(a) First.", "(b) Second."}));
}

TEST(SentenceSplitter, NumbersVersionsFilesAndUrls) {
  EXPECT_EQ(split("Pi is 3.14 roughly. Version v1.2.3 is out. Ping 192.168.0.1 now."),
            (Sentences{"Pi is 3.14 roughly.", "Version v1.2.3 is out.", "Ping 192.168.0.1 now."}));
  EXPECT_EQ(split("Read ls.1 and visit www.example.com today. Done."),
            (Sentences{"Read ls.1 and visit www.example.com today.", "Done."}));
  EXPECT_EQ(split("It costs $4.50. Cheap."), (Sentences{"It costs $4.50.", "Cheap."}));
}

TEST(SentenceSplitter, Ellipses) {
  EXPECT_EQ(split("Wait... then go. Hmm\u2026 Next one."), (Sentences{"Wait... then go.", "Hmm\u2026", "Next one."}));
  EXPECT_EQ(split("It trails off... And stops."), (Sentences{"It trails off...", "And stops."}));
  EXPECT_EQ(split("ls [OPTION]... [FILE]..."), (Sentences{"ls [OPTION]... [FILE]..."}));
  EXPECT_EQ(split("--prefixes a,b,... An alias."), (Sentences{"--prefixes a,b,... An alias."}));
}

TEST(SentenceSplitter, ClosingQuotesAndBrackets) {
  EXPECT_EQ(split("\"He left.\" She stayed."), (Sentences{"\"He left.\"", "She stayed."}));
  EXPECT_EQ(split("(See ls(1).) Then stop."), (Sentences{"(See ls(1).)", "Then stop."}));
  EXPECT_EQ(split("\u201cReally?\u201d she asked. \u201cYes.\u201d"),
            (Sentences{"\u201cReally?\u201d she asked.", "\u201cYes.\u201d"}));
  EXPECT_EQ(split("It ended (finally.) 'Good.' Next."), (Sentences{"It ended (finally.)", "'Good.'", "Next."}));
}

TEST(SentenceSplitter, PunctuationStandingAlone) {
  EXPECT_EQ(split("-a, --all  do not ignore entries starting with ."),
            (Sentences{"-a, --all  do not ignore entries starting with ."}));
  EXPECT_EQ(split("do not list implied . and .. entries"), (Sentences{"do not list implied . and .. entries"}));
  EXPECT_EQ(split("print ? instead of nongraphic characters"), (Sentences{"print ? instead of nongraphic characters"}));
}

TEST(SentenceSplitter, NewlinesInsideProseAreNotBoundaries) {
  EXPECT_EQ(split("This line\ncontinues here. And ends."), (Sentences{"This line\ncontinues here.", "And ends."}));
  EXPECT_EQ(split("one\n\ntwo"), (Sentences{"one", "two"}));
  EXPECT_EQ(split("one\n  \t\ntwo"), (Sentences{"one", "two"}));
}

TEST(SentenceSplitter, ListLinesAreBoundaries) {
  EXPECT_EQ(split("- one\n- two. Still two\n  continued\n- three"),
            (Sentences{"- one", "- two.", "Still two\n  continued", "- three"}));
  EXPECT_EQ(split("1. First\n2. Second\n3) Third"), (Sentences{"1. First", "2. Second", "3) Third"}));
  EXPECT_EQ(split("(a) alpha\n(b) beta\nb) gamma"), (Sentences{"(a) alpha", "(b) beta", "b) gamma"}));
  EXPECT_EQ(split("\u2022 bullet one\n\u2022 bullet two"), (Sentences{"\u2022 bullet one", "\u2022 bullet two"}));
  EXPECT_EQ(split("-a  all entries\n--brief  fewer words\n-1  one per line"),
            (Sentences{"-a  all entries", "--brief  fewer words", "-1  one per line"}));
  // Not a list: the first line does not start with an item marker.
  EXPECT_EQ(split("Options are\n- a dash line"), (Sentences{"Options are\n- a dash line"}));
}

// Deterministic noise over the characters the rules look at: the invariants must hold.
TEST(SentenceSplitter, InvariantsOnNoise) {
  const std::string alphabet[] = {"a", "B", "1", ".", "?", "!", " ", "\n", "\"", ")", "(", "e.g.",
                                  "\u2026", "- ", "etc", "...", "\u201d", "\xe2", "\t"};
  std::uint64_t state = 12345;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int length = round % 40;
    for (int k = 0; k < length; ++k) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      text += alphabet[(state >> 33) % std::size(alphabet)];
    }
    std::size_t previous_end = 0;
    for (Span s : split_sentences(text)) {
      ASSERT_LT(s.begin, s.end) << text;
      ASSERT_LE(s.end, text.size()) << text;
      ASSERT_GE(s.begin, previous_end) << text;
      ASSERT_FALSE(std::isspace(static_cast<unsigned char>(text[s.begin]))) << text;
      ASSERT_FALSE(std::isspace(static_cast<unsigned char>(text[s.end - 1]))) << text;
      previous_end = s.end;
    }
  }
}

// Real man page text through read_manpage: sentence boundaries must be plausible.
bool ends_with_terminal(std::string_view s) {
  while (!s.empty() && std::string_view("\"')]}").find(s.back()) != std::string_view::npos) s.remove_suffix(1);
  for (std::string_view closer : {"\u201d", "\u2019"})
    while (s.ends_with(closer)) s.remove_suffix(closer.size());
  return !s.empty() && (s.back() == '.' || s.back() == '?' || s.back() == '!' || s.ends_with("\u2026"));
}

bool ends_with_word(std::string_view sentence, std::string_view word) {
  if (!sentence.ends_with(word)) return false;
  const std::size_t before = sentence.size() - word.size();
  return before == 0 || sentence[before - 1] == ' ' || sentence[before - 1] == '(';
}

TEST(SentenceSplitter, InstalledManPages) {
  std::size_t pages = 0, sentences = 0;
  for (const char* file : {"/usr/share/man/man1/ls.1.gz", "/usr/share/man/man7/man-pages.7.gz",
                           "/usr/share/man/man1/grep.1.gz", "/usr/share/man/man1/bash.1.gz",
                           "/usr/share/man/man7/man.7.gz"}) {
    if (!std::filesystem::exists(file)) continue;
    ++pages;
    const ManPage page = read_manpage(file);
    const Document& doc = page.document;
    for_each_section(doc.root, [&](const Section& section) {
      for (const Paragraph& p : section.paragraphs) {
        ASSERT_FALSE(p.sentences.empty()) << file;
        EXPECT_EQ(p.sentences.front().begin, p.span.begin) << file;
        EXPECT_EQ(p.sentences.back().end, p.span.end) << file;
        for (std::size_t k = 0; k < p.sentences.size(); ++k) {
          ++sentences;
          const std::string_view s = doc.slice(p.sentences[k]);
          if (k + 1 == p.sentences.size()) continue;
          // A sentence inside a paragraph ends with terminal punctuation or at a line break
          // (a list item or a line of a no-fill block).
          const bool line_end = doc.text[p.sentences[k].end] == '\n';
          EXPECT_TRUE(ends_with_terminal(s) || line_end) << file << ": [" << s << "]";
          for (std::string_view abbreviation : {"e.g.", "i.e.", "E.g.", "cf.", "vs.", "Dr.", "Mr.", "Fig."})
            EXPECT_FALSE(ends_with_word(s, abbreviation)) << file << ": [" << s << "]";
          // No sentence boundary between the digits of a number ("3.14", "2.6.39").
          const std::string_view next = doc.slice(p.sentences[k + 1]);
          EXPECT_FALSE(s.back() == '.' && s.size() > 1 && std::isdigit(static_cast<unsigned char>(s[s.size() - 2])) &&
                       std::isdigit(static_cast<unsigned char>(next.front())) &&
                       p.sentences[k + 1].begin == p.sentences[k].end)
              << file;
        }
      }
    });
  }
  if (pages == 0) GTEST_SKIP() << "no man pages installed under /usr/share/man (package manpages)";
  EXPECT_GT(sentences, 100u);
}

}  // namespace
}  // namespace strata
