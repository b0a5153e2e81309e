#pragma once
// The man-page summarisation corpus: input = a page's sections after NAME as a structured
// document, target = the NAME line's description (after "\-"). Built from the installed
// English pages (/usr/share/man/man*/), split train/validation/test by a hash of the name.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata {

class Tokenizer;

struct ManpageCorpusOptions {
  std::filesystem::path man_root = "/usr/share/man";  // scans man_root/man*/ (English pages)
  std::size_t min_body_words = 40;     // shorter bodies are skipped
  std::size_t min_summary_words = 2;   // shorter descriptions are skipped
  // Shell globs on the page name ("gcloud*"): matching pages are skipped as "excluded". For
  // keeping one package's generated pages from dominating the corpus.
  std::vector<std::string> exclude;
  int validation_percent = 5;
  int test_percent = 5;
  const Tokenizer* tokenizer = nullptr;  // adds token-length stats when given
  bool quiet = false;                    // no progress output
};

// A 64-bit FNV-1a hash of `text`, the same on every platform (std::hash is not): what
// split_of buckets and corpora key their deterministic draws by.
std::uint64_t stable_hash(std::string_view text);

// Which split a page goes to. The hash is of the page *name*, not name+section, so pages
// that share a name (printf(1), printf(3)) land in one split and cannot leak across.
std::string split_of(std::string_view page_name, int validation_percent, int test_percent);

// The names split_of returns, in the order corpora write them.
inline constexpr const char* kSplitNames[] = {"train", "validation", "test"};

// Parses every page, writes OUT/{train,validation,test}.jsonl (native form, with extra
// fields "name", "section", "source") and OUT/stats.json, each atomically. Returns the stats.
nlohmann::json build_manpage_corpus(const ManpageCorpusOptions& options,
                                    const std::filesystem::path& out_dir);

// Recomputes stats.json for a corpus directory (e.g. after a tokenizer was trained on it).
nlohmann::json corpus_stats(const std::filesystem::path& corpus_dir, const Tokenizer* tokenizer);

}  // namespace strata
