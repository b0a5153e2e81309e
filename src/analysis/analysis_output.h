#pragma once
// Where an analysis writes and how its JSON report begins: the same for every analysis.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace strata::analysis {

// `out` when given, else `beside / name` (the model's run directory, say); created.
std::filesystem::path output_dir(const std::string& out, const std::filesystem::path& beside, const std::string& name);

// {"model": checkpoint, "data": data} followed by the analysis's own fields.
nlohmann::ordered_json report_of(const std::filesystem::path& checkpoint, const std::string& data,
                                 const nlohmann::ordered_json& body);

}  // namespace strata::analysis
