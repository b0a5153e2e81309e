#include "analysis_output.h"

namespace strata::analysis {

std::filesystem::path output_dir(const std::string& out, const std::filesystem::path& beside, const std::string& name) {
  const std::filesystem::path dir = out.empty() ? beside / name : std::filesystem::path(out);
  std::filesystem::create_directories(dir);
  return dir;
}

nlohmann::ordered_json report_of(const std::filesystem::path& checkpoint, const std::string& data,
                                 const nlohmann::ordered_json& body) {
  nlohmann::ordered_json report;
  report["model"] = checkpoint.string();
  report["data"] = data;
  for (const auto& [key, value] : body.items()) report[key] = value;
  return report;
}

}  // namespace strata::analysis
