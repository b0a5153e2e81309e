#pragma once
// The Hugging Face parity fixtures (../shared/hf-fixtures, written by transformers itself) and a
// scratch directory per test; a test skips, saying why, where the fixtures are absent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace strata::test_support {

inline std::filesystem::path hf_fixtures() { return std::filesystem::path(STRATA_SHARED_DIR) / "hf-fixtures"; }

class HfScratchTest : public testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::is_directory(hf_fixtures()))
      GTEST_SKIP() << "no " << hf_fixtures().string() << ": the Hugging Face parity fixtures are not here";
    std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = std::filesystem::temp_directory_path() / ("strata_hf_" + std::to_string(::getpid()) + "_" + name);
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
};

}  // namespace strata::test_support
