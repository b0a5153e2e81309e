#include "strata/core/files.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

#include "strata/core/error.h"

namespace strata {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(path.string() + ": read error");
  return data;
}

std::string read_maybe_gzip(const std::filesystem::path& path) {
  std::string raw = read_file(path);
  if (raw.size() < 2 || static_cast<unsigned char>(raw[0]) != 0x1f ||
      static_cast<unsigned char>(raw[1]) != 0x8b)
    return raw;
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw Error(path.string() + ": zlib init failed");
  zs.next_in = reinterpret_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());
  std::string out;
  char buffer[1 << 15];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buffer);
    zs.avail_out = sizeof(buffer);
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&zs);
      throw Error(path.string() + ": corrupt gzip data");
    }
    out.append(buffer, sizeof(buffer) - zs.avail_out);
    if (rc == Z_OK && zs.avail_in == 0 && zs.avail_out != 0) {
      inflateEnd(&zs);
      throw Error(path.string() + ": truncated gzip data");
    }
  }
  inflateEnd(&zs);
  return out;
}

AtomicFile::AtomicFile(std::filesystem::path path) : path_(std::move(path)) {
  if (path_.has_parent_path()) std::filesystem::create_directories(path_.parent_path());
  temp_ = path_;
  temp_ += ".tmp." + std::to_string(::getpid());
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw Error(path_.string() + ": cannot write: " + std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    out_.close();
    std::error_code ec;
    std::filesystem::remove(temp_, ec);
  }
}

void AtomicFile::commit() {
  out_.flush();
  if (!out_) throw Error(path_.string() + ": write failed (disk full?)");
  out_.close();
  std::error_code ec;
  std::filesystem::rename(temp_, path_, ec);
  if (ec) throw Error(path_.string() + ": cannot rename into place: " + ec.message());
  committed_ = true;
}

void write_file_atomic(const std::filesystem::path& path, std::string_view contents) {
  AtomicFile file(path);
  file.stream().write(contents.data(), static_cast<std::streamsize>(contents.size()));
  file.commit();
}

}  // namespace strata
