// Linearised question-summary hierarchies (seed 001), the robust parser a model's output goes
// through, and the JSONL files of hierarchies.
#include "fuzz_input.h"
#include "strata/eval/qs_hierarchy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = strata::fuzz::as_text(data, size);
  strata::fuzz::refusing_is_fine([&] {
    const strata::QsHierarchy parsed = strata::parse_hierarchy(text);
    strata::hierarchy_f1(parsed, strata::parse_hierarchy(strata::linearize(parsed)));
  });
  const strata::fuzz::TempFile file(text, "hierarchies.jsonl");
  return strata::fuzz::refusing_is_fine([&] { strata::load_qs_hierarchies(file.path()); });
}
