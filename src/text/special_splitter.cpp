#include "strata/text/special_splitter.h"

#include <algorithm>

namespace strata {

SpecialSplitter::SpecialSplitter(const std::vector<std::pair<std::string, std::int32_t>>& tokens) {
  for (const auto& entry : tokens)
    if (!entry.first.empty())
      by_first_byte_[static_cast<unsigned char>(entry.first[0])].push_back(entry);
  for (auto& candidates : by_first_byte_)
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

}  // namespace strata
