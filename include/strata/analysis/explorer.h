#pragma once
// The model side of `strata explore` (docs/explore.md): one or two trained runs, documents
// read through each, and the JSON views the page draws — attention weights binned to a view,
// the spec's mask and block-mask tiles, learned relation biases over the document's sections,
// and the run's saved head analyses. Torch-free header: the HTTP floor includes it.
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strata/core/error.h"

namespace strata::analysis {

// An error with the HTTP status it answers: 400 a bad parameter, 404 an unknown run or
// document, 422 a document the model cannot take.
class ExploreError : public Error {
 public:
  ExploreError(int status, const std::string& message) : Error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

struct ExplorerOptions {
  std::vector<std::string> runs;       // run directories or checkpoints; ids "a", "b", ...
  std::int64_t max_tokens = 16384;     // a document's tokens kept (never past the model's positions)
  std::size_t documents = 8;           // documents kept; the oldest is forgotten
  int threads = 0;                     // libtorch threads; 0 = as configured
};

struct AttentionQuery {
  std::string run, doc;
  std::int64_t layer = 0;
  std::optional<std::int64_t> head;  // none: the mean over heads
  std::optional<std::int64_t> q0, q1, k0, k1;  // none: the whole range
  std::int64_t max_cells = 256;                // per side
};

class Explorer {
 public:
  explicit Explorer(const ExplorerOptions& options);
  ~Explorer();
  Explorer(const Explorer&) = delete;
  Explorer& operator=(const Explorer&) = delete;

  // GET /api/runs (without the server's own fields).
  nlohmann::ordered_json runs() const;
  // Reads `text` (format "auto", "markdown", "man" or "plain") through every run and keeps it;
  // `path` is recorded when the text came from a server-side file. The document's JSON.
  nlohmann::ordered_json add_document(std::string_view text, std::string_view format, const std::string& name,
                                      const std::string& path = "");
  nlohmann::ordered_json document(const std::string& id) const;
  nlohmann::ordered_json attention(const AttentionQuery& query) const;
  nlohmann::ordered_json biases(const std::string& run, const std::string& doc) const;
  nlohmann::ordered_json analyses(const std::string& run) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The binning of a view: `cells` ≤ max edges over [begin, end), as even as integers allow
// (edge c = begin + ⌊c · (end − begin) / cells⌋, cells = min(max, end − begin)).
std::vector<std::int64_t> bin_edges(std::int64_t begin, std::int64_t end, std::int64_t max_cells);

}  // namespace strata::analysis
