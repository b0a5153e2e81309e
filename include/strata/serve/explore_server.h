#pragma once
// `strata explore`'s HTTP side (docs/explore.md): the page, built into the binary, and the
// JSON API over an analysis::Explorer. Loopback by default; server-side files only under the
// allowed roots.
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace strata::analysis {
class Explorer;
}

namespace strata::serve {

struct ExploreServerOptions {
  std::string host = "127.0.0.1";
  int port = 8600;  // 0: any free port (the one chosen is printed)
  std::vector<std::filesystem::path> roots;  // directories whose files a request may name
  std::size_t max_body_bytes = 8 << 20;       // request bodies, and files read by path
  bool access_log = true;
};

// The file `requested` names, if it lies under one of `roots` once symbolic links and ".."
// are resolved (a relative path is taken from the first root). strata::Error otherwise, or
// when no root is configured or the file does not exist.
std::filesystem::path allowed_path(const std::string& requested, const std::vector<std::filesystem::path>& roots);

// Serves until SIGTERM or SIGINT; prints "strata explore: listening on http://HOST:PORT" on
// stdout once it accepts connections. strata::Error when the address cannot be bound.
void explore(analysis::Explorer& explorer, const ExploreServerOptions& options);

}  // namespace strata::serve
