// Debian's Packages and Translation-en files (deb822) on small hand-made fixtures.
#include "strata/data/debian_archive.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "strata/core/error.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPackages =
    "Package: grep\n"
    "Source: grep (3.8-5)\n"
    "Priority: required\n"
    "Section: utils\n"
    "Tag: implemented-in::c, interface::commandline, role::program,\n"
    " scope::utility, use::searching\n"
    "Description-md5: aaaa\n"
    "\n"
    "Package: libfoo1\n"
    "Priority: optional\n"
    "Section: contrib/libs\r\n"
    "Description-md5: bbbb\n"
    "\n"
    "\n"
    "# a comment line\n"
    "Package: bar\n"
    "Section: non-free/games\n"
    "Description: a game\n"
    " Played on the\n"
    " command line.\n";

constexpr const char* kTranslation =
    "Package: grep\n"
    "Description-md5: aaaa\n"
    "Description-en: GNU grep, egrep and fgrep\n"
    " 'grep' is a utility to search for text in files; it can be used from the\n"
    " command line or in scripts.\n"
    " .\n"
    " Example:\n"
    "   grep -r pattern dir\n"
    "\n"
    "Package: libfoo1\n"
    "Description-md5: bbbb\n"
    "Description-en: the foo library\n";

class DebianArchive : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("strata_debian_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  // The message of the strata::Error that reading `packages` and `translation` throws.
  std::string error_of(const std::string& packages, const std::string& translation) {
    try {
      (void)read_debian_packages(write("Packages", packages), write("Translation-en", translation));
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "no error";
    return "";
  }
  fs::path dir_;
};

TEST_F(DebianArchive, ParsesStanzasFieldsAndContinuations) {
  const std::vector<Deb822Stanza> stanzas = parse_deb822(kPackages, "Packages");
  ASSERT_EQ(stanzas.size(), 3u);
  EXPECT_EQ(stanzas[0].line, 1u);
  EXPECT_EQ(stanzas[1].line, 9u);
  EXPECT_EQ(stanzas[2].line, 16u);  // after two blank lines and a comment
  EXPECT_EQ(*stanzas[0].find("package"), "grep");  // names compare case-insensitively
  EXPECT_EQ(*stanzas[0].find("Tag"),
            "implemented-in::c, interface::commandline, role::program,\nscope::utility, use::searching");
  EXPECT_EQ(*stanzas[1].find("Section"), "contrib/libs");  // the CR of a CRLF line dropped
  EXPECT_EQ(stanzas[1].find("Tag"), nullptr);
}

TEST_F(DebianArchive, DescriptionsBecomeParagraphsWithVerbatimLinesKept) {
  // Lines as parse_deb822 gives them (the continuation space dropped): a further leading space
  // marks a verbatim line.
  EXPECT_EQ(description_text("first line\nsecond line\n.\nnew paragraph\n verbatim  line\n"),
            "first line second line\n\nnew paragraph\n verbatim  line");
  EXPECT_EQ(description_text(""), "");
}

TEST_F(DebianArchive, JoinsPackagesWithTheirTranslations) {
  const std::vector<DebianPackage> packages =
      read_debian_packages(write("Packages", kPackages), write("Translation-en", kTranslation));
  ASSERT_EQ(packages.size(), 3u);
  const DebianPackage& grep = packages[0];
  EXPECT_EQ(grep.name, "grep");
  EXPECT_EQ(grep.source, "grep");  // the version dropped
  EXPECT_EQ(grep.section, "utils");
  EXPECT_EQ(grep.priority, "required");
  EXPECT_EQ(grep.tags, (std::vector<std::string>{"implemented-in::c", "interface::commandline", "role::program",
                                                 "scope::utility", "use::searching"}));
  EXPECT_EQ(grep.short_description, "GNU grep, egrep and fgrep");
  EXPECT_EQ(grep.long_description,
            "'grep' is a utility to search for text in files; it can be used from the command line or in "
            "scripts.\n\nExample:\n  grep -r pattern dir");
  EXPECT_EQ(packages[1].source, "libfoo1");  // no Source field: the package's own name
  EXPECT_EQ(packages[1].section, "libs");    // the area dropped
  EXPECT_EQ(packages[1].short_description, "the foo library");
  EXPECT_EQ(packages[1].long_description, "");
  // No translation: the index's own Description.
  EXPECT_EQ(packages[2].section, "games");
  EXPECT_EQ(packages[2].short_description, "a game");
  EXPECT_EQ(packages[2].long_description, "Played on the command line.");
}

TEST_F(DebianArchive, MalformedStanzasNameFileLineAndField) {
  std::string message = error_of("Package: a\nnot a field line\n", kTranslation);
  EXPECT_NE(message.find("Packages:2:"), std::string::npos) << message;
  EXPECT_NE(message.find("expected 'Field: value'"), std::string::npos) << message;

  message = error_of(" continued\nPackage: a\n", kTranslation);
  EXPECT_NE(message.find("Packages:1:"), std::string::npos) << message;

  message = error_of("Package: a\nSection: x\nsection: y\n", kTranslation);
  EXPECT_NE(message.find("Packages:3: field 'section': given twice"), std::string::npos) << message;

  message = error_of("Package: a\n\nSection: utils\n", kTranslation);
  EXPECT_NE(message.find("Packages:3: field 'Package': missing"), std::string::npos) << message;

  message = error_of(kPackages, "Package: grep\nDescription-md5: aaaa\n");
  EXPECT_NE(message.find("Translation-en:1: field 'Description-en': missing"), std::string::npos) << message;

  message = error_of(": value\n", kTranslation);
  EXPECT_NE(message.find("Packages:1:"), std::string::npos) << message;
}

}  // namespace
}  // namespace strata
