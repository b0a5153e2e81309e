#pragma once
// Runs the built `strata` binary (STRATA_BINARY) as a user would, for the CLI tests.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace strata::test_support {

struct CliResult {
  int exit_code;
  std::string out;
  std::string err;
};

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `args` are shell words after the binary; stdout and stderr go through files in `scratch`.
// `environment`: shell assignments (NAME=value ...) for this run alone.
inline CliResult run_strata(const std::string& args, const std::filesystem::path& scratch,
                            const std::string& environment = "") {
  const std::filesystem::path out = scratch / "stdout.txt", err = scratch / "stderr.txt";
  const std::string command = environment + (environment.empty() ? "" : " ") + std::string(STRATA_BINARY) + " " +
                              args + " >" + out.string() + " 2>" + err.string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// A test fixture with a scratch directory of its own per test (named by `prefix`, the process
// and the test), removed afterwards; run() runs strata in it, write() puts a file there.
class ScratchTest : public testing::Test {
 protected:
  explicit ScratchTest(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + "_" + std::to_string(::getpid()) + "_" +
            testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  CliResult run(const std::string& args) { return run_strata(args, dir_); }

  std::filesystem::path dir_;

 private:
  std::string prefix_;
};

}  // namespace strata::test_support
