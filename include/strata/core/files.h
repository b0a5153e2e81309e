#pragma once
// Reading and writing whole files. Writers never leave a partial file where a good one
// stood: they write a temporary beside the target and rename it into place.
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace strata {

// The file's bytes; strata::Error naming the path when it cannot be read.
std::string read_file(const std::filesystem::path& path);

// Like read_file, but transparently inflates gzip data (detected by its magic bytes).
std::string read_maybe_gzip(const std::filesystem::path& path);

// An output file that appears under its final name only when commit() is called.
// Destroying it uncommitted removes the temporary and leaves any old file untouched.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  void commit();

 private:
  std::filesystem::path path_;
  std::filesystem::path temp_;
  std::ofstream out_;
  bool committed_ = false;
};

void write_file_atomic(const std::filesystem::path& path, std::string_view contents);

}  // namespace strata
