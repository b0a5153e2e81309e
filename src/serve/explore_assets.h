#pragma once
// The explorer's page (web/explore/), built into the binary so that nothing is fetched or
// looked up at run time. The definitions are generated at build time (cmake/embed_assets.cmake).
#include <span>
#include <string_view>

namespace strata::serve {

struct ExploreAsset {
  const char* path;          // "/", "/explore.js", "/explore.css"
  const char* content_type;  // with charset
  std::string_view body;
};

std::span<const ExploreAsset> explore_assets();

}  // namespace strata::serve
