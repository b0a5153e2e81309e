#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "strata/core/files.h"
#include "strata/data/debian_tasks.h"
#include "strata/data/installed_tasks.h"
#include "strata/data/multitask_examples.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

class InstalledTasks : public testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("strata_installed_tasks_" + std::to_string(::getpid()));
    put("usr/share/man/man1/grep.1", ".TH GREP 1\n.SH NAME\ngrep \\- print lines that match patterns\n.SH DESCRIPTION\n"
                                     "grep searches for patterns in each file.\n");
    put("usr/share/man/man5/passwd.5", ".TH PASSWD 5\n.SH NAME\npasswd \\- the password file\n.SH DESCRIPTION\n"
                                       "The file holds one line per account.\n");
    put("usr/share/man/man5/alias.5", ".so man5/passwd.5\n");  // an alias: no example of its own
    fs::create_directories(root_ / "usr/share/man/man1");
    fs::create_symlink("grep.1", root_ / "usr/share/man/man1/egrep.1");  // a link: skipped
    put("usr/include/foo.h", "/* Copyright: a licence that says nothing of foo. */\n#pragma once\n"
                             "// foo's API\nint foo_open(const char* path);\n");
    put("usr/include/foo/bar.hpp", "namespace foo { class Bar; }\n");
    put("usr/include/zap.h", "int zap(void);\n");
    put("var/lib/dpkg/info/libfoo-dev:amd64.list", "/.\n/usr/include\n/usr/include/foo.h\n/usr/include/foo/bar.hpp\n"
                                                   "/usr/share/doc/libfoo-dev/README\n");
    put("var/lib/dpkg/info/unknown-dev.list", "/usr/include/zap.h\n");  // not in the index: skipped
  }
  void TearDown() override { fs::remove_all(root_); }

  void put(const std::string& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }

  fs::path root_;
};

TEST_F(InstalledTasks, ManPagesGiveTheirSectionAndSkipAliasesAndLinks) {
  const std::vector<InstalledExample> examples = man_section_examples(root_, 6);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].id, "grep.1");
  EXPECT_EQ(examples[0].label, "1");
  EXPECT_EQ(examples[1].label, "5");
  EXPECT_EQ(examples[1].text.find("the password file"), examples[1].text.find("the"));  // the page's first words
  EXPECT_LE(std::count(examples[0].text.begin(), examples[0].text.end(), ' '), 5);  // 6 words at most
}

TEST_F(InstalledTasks, HeadersGetTheirPackagesSectionWithoutComments) {
  const std::vector<InstalledExample> examples =
      header_section_examples(root_, {{"libfoo-dev", "libdevel"}}, {{"libfoo-dev", "foo"}}, 50, 10);
  ASSERT_EQ(examples.size(), 2u);
  EXPECT_EQ(examples[0].id, "/usr/include/foo.h");
  EXPECT_EQ(examples[0].label, "libdevel");
  EXPECT_EQ(examples[0].text, "#pragma once int foo_open(const char* path);");
  EXPECT_EQ(examples[1].id, "/usr/include/foo/bar.hpp");
  EXPECT_EQ(header_section_examples(root_, {{"libfoo-dev", "libdevel"}}, {}, 50, 1).size(), 1u);  // per package
}

TEST_F(InstalledTasks, TheTransferTaskIsMarkedAndLeftOutUnlessNamed) {
  const fs::path out = root_ / "suite";
  std::vector<DebianPackage> packages;
  for (int i = 0; i < 40; ++i) {
    DebianPackage p;
    p.name = i == 0 ? "libfoo-dev" : "pkg" + std::to_string(i);
    p.source = p.name;
    p.section = i % 2 ? "utils" : "libdevel";
    p.priority = "optional";
    p.short_description = "package " + std::to_string(i);
    p.long_description = "Package " + std::to_string(i) + " does a useful thing for the people who use it.";
    packages.push_back(p);
  }
  put("var/lib/dpkg/info/pkg1.list", "/usr/include/zap.h\n");  // a second Section for header-section
  DebianSuiteOptions options;
  options.out_dir = out;
  options.min_class_examples = 0;  // the few examples may all fall outside the training split
  options.installed_root = root_;
  (void)build_debian_suite(packages, options);
  const nlohmann::json tasks = nlohmann::json::parse(read_file(out / "tasks.json"));
  ASSERT_TRUE(tasks.contains("header-section"));
  EXPECT_EQ(tasks["header-section"]["transfer"], true);
  EXPECT_TRUE(tasks.contains("man-section"));
  EXPECT_EQ(tasks["man-section"]["metric"], "macro_f1");  // most man pages are in section 1
  EXPECT_EQ(tasks["header-section"]["metric"], "accuracy");
  for (const SuiteTask& t : read_suite_tasks(out)) EXPECT_NE(t.name, "header-section");
  EXPECT_EQ(read_suite_tasks(out, {"header-section"}).at(0).labels, (std::vector<std::string>{"libdevel", "utils"}));
}

}  // namespace
}  // namespace strata
