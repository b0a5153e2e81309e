#include "strata/analysis/bias_analysis.h"

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "strata/analysis/bias_figure.h"
#include "strata/analysis/bias_matrix.h"
#include "strata/attn/spec.h"
#include "strata/core/error.h"
#include "strata/core/files.h"
#include "strata/recipes/loaded_model.h"

#include "analysis_output.h"

namespace strata::analysis {

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // keys in the order written

// The tables of one side (encoder or decoder) that share a relation, summed over heads.
struct TableGroup {
  std::string side;  // "encoder", "decoder" or "sections" (HIERENC's section layers)
  attn::Relation relation;
  std::vector<std::string> tables;  // parameter names
  std::vector<double> sum;          // relation_count entries
  std::int64_t rows = 0;            // heads summed over all tables
  std::int64_t heads = 0;           // heads of one table

  std::vector<float> mean() const {
    std::vector<float> out;
    for (const double v : sum) out.push_back(static_cast<float>(v / static_cast<double>(rows)));
    return out;
  }
};

// Adds parameter `name` (expected [heads, relation_count]) to the group of its side and
// relation, opening a new group for a relation the side has not used yet.
void add_table(std::vector<TableGroup>& groups, const std::string& side, const attn::Relation& relation,
               const std::string& name, const torch::OrderedDict<std::string, at::Tensor>& params,
               const std::string& model, const std::string& why) {
  const at::Tensor* found = params.find(name);
  if (found == nullptr)
    throw Error(fmt::format("model {}: {} uses {} but the checkpoint has no parameter {}", model, why,
                            relation_description(relation), name));
  const std::int64_t count = attn::relation_count(relation);
  const at::Tensor table = found->detach().to(at::kCPU, at::kDouble).contiguous();
  if (table.dim() != 2 || table.size(1) != count)
    throw Error(fmt::format("model {}: parameter {} has shape [{}], expected [heads, {}] for {}", model, name,
                            fmt::join(table.sizes(), ", "), count, relation_description(relation)));
  auto group = std::find_if(groups.begin(), groups.end(), [&](const TableGroup& g) {
    return g.side == side && g.relation == relation;
  });
  if (group == groups.end()) {
    group = groups.insert(groups.end(), TableGroup{side, relation, {}, std::vector<double>(count, 0.0), 0, table.size(0)});
  }
  const double* data = table.data_ptr<double>();
  for (std::int64_t h = 0; h < table.size(0); ++h)
    for (std::int64_t id = 0; id < count; ++id) group->sum[id] += data[h * count + id];
  group->rows += table.size(0);
  group->tables.push_back(name);
}

// The n entries of the table furthest from 0 with the given sign, largest |value| first.
std::vector<std::int32_t> extremes(const std::vector<float>& table, bool positive, std::size_t n) {
  std::vector<std::int32_t> ids;
  for (std::size_t id = 0; id < table.size(); ++id)
    if (positive ? table[id] > 0 : table[id] < 0) ids.push_back(static_cast<std::int32_t>(id));
  std::stable_sort(ids.begin(), ids.end(), [&](std::int32_t a, std::int32_t b) {
    return std::abs(table[a]) > std::abs(table[b]);
  });
  if (ids.size() > n) ids.resize(n);
  return ids;
}

std::string figure_title(const TableGroup& group) {
  const std::size_t layers = group.tables.size();
  const char* system = group.side == "encoder"   ? "HIBRIDS-ENC"
                       : group.side == "decoder" ? "HIBRIDS-DEC"
                                                 : "HIBRIDS in the HIERENC section layers";
  return fmt::format("{}: {}, mean over {} {} × {} heads", system, relation_description(group.relation), layers,
                     layers == 1 ? "table" : "tables", group.heads);
}

}  // namespace

void run_bias_analysis(const BiasAnalysisOptions& options) {
  recipes::LoadedModel loaded;
  const models::Seq2Seq model = recipes::load_seq2seq(options.model, loaded);
  const models::ModelConfig& config = loaded.config;
  const auto params = model->named_parameters(/*recurse=*/true);

  std::vector<TableGroup> groups;
  auto wants = [&](const char* side) { return options.layers == "all" || options.layers == side; };
  if (wants("encoder"))
    for (std::int64_t i = 0; i < config.encoder_layers; ++i) {
      const attn::Relation& relation = models::ModelConfig::spec_of(config.encoder_attention, i).bias;
      if (!attn::is_tree_relation(relation.kind)) continue;
      add_table(groups, "encoder", relation, fmt::format("encoder.layers.{}.self_attn.relation_bias", i), params,
                options.model, fmt::format("encoder layer {}", i));
    }
  if (wants("decoder") && attn::is_tree_relation(config.decoder_hibrids.kind))
    add_table(groups, "decoder", config.decoder_hibrids, "decoder.hibrids_bias", params, options.model,
              "decoder_hibrids");
  if (wants("sections") && attn::is_tree_relation(config.section_encoder_hibrids.kind))
    for (std::int64_t i = 0; i < config.section_encoder_layers; ++i)
      add_table(groups, "sections", config.section_encoder_hibrids,
                fmt::format("section_encoder.layers.{}.self_attn.relation_bias", i), params, options.model,
                fmt::format("section encoder layer {}", i));
  if (groups.empty()) {
    const std::string which = options.layers == "all"       ? "its encoder_attention/decoder_hibrids/section_encoder_hibrids"
                              : options.layers == "encoder" ? "its encoder_attention"
                              : options.layers == "decoder" ? "its decoder_hibrids"
                                                            : "its section_encoder_hibrids";
    throw Error(fmt::format("model {} has no HIBRIDS bias table ({} use{} no tree relation)", options.model, which,
                            options.layers == "all" ? "" : "s"));
  }

  const fs::path out = output_dir(options.out, options.model, "biases");
  const SectionTree tree = figure5_tree();
  Json figures = Json::array();
  std::vector<std::string> written;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const TableGroup& group = groups[g];
    // A side whose layers use different relations gets one figure per relation.
    const auto same_side = std::count_if(groups.begin(), groups.end(), [&](const TableGroup& o) { return o.side == group.side; });
    const auto rank = std::count_if(groups.begin(), groups.begin() + static_cast<std::ptrdiff_t>(g),
                                    [&](const TableGroup& o) { return o.side == group.side; });
    const std::string name = same_side == 1 ? group.side : fmt::format("{}-{}", group.side, rank + 1);
    const std::vector<float> mean = group.mean();
    const BiasMatrix matrix = bias_matrix(group.relation, mean, tree);
    const std::string title = figure_title(group);

    Json files = Json::array();
    if (options.format != "png") {
      write_file_atomic(out / (name + ".svg"), bias_svg(matrix, title));
      files.push_back(name + ".svg");
    }
    if (options.format != "svg") {
      write_file_atomic(out / (name + ".png"), bias_png(matrix));
      files.push_back(name + ".png");
    }
    for (const auto& f : files) written.push_back(f.get<std::string>());

    fmt::print("{}: {}\n  averaged: {}\n", name, title, fmt::join(group.tables, ", "));
    Json figure;
    figure["name"] = name;
    figure["side"] = group.side;
    figure["title"] = title;
    figure["tables"] = group.tables;
    figure["heads"] = group.heads;
    figure["files"] = files;
    for (const bool positive : {true, false}) {
      const std::vector<std::int32_t> ids = extremes(mean, positive, 3);
      std::vector<std::string> parts;
      Json list = Json::array();
      for (const std::int32_t id : ids) {
        const std::string label = relation_label(group.relation, id);
        parts.push_back(fmt::format("{} {}", label, hundredfold(mean[id])));
        list.push_back({{"id", id}, {"relation", label}, {"value", std::stod(fmt::format("{}", mean[id]))}});
      }
      fmt::print("  largest {} (× 100): {}\n", positive ? "positive" : "negative",
                 parts.empty() ? std::string("none") : fmt::format("{}", fmt::join(parts, ", ")));
      figure[positive ? "largest_positive" : "largest_negative"] = std::move(list);
    }
    const Json drawn = to_json(matrix);
    for (const auto& [key, value] : drawn.items()) figure[key] = value;
    figures.push_back(std::move(figure));
  }
  Json report;
  report["model"] = loaded.checkpoint.string();
  report["tree"] = "seed 001 Figure 5: §1 (§1.1 (§1.1.1 (§1.1.1.1)), §1.2), §2 (§2.1)";
  report["layers"] = options.layers;
  report["figures"] = std::move(figures);
  write_file_atomic(out / "biases.json", report.dump(2) + "\n");
  written.emplace_back("biases.json");
  fmt::print("wrote {}: {}\n", out.string(), fmt::join(written, ", "));
}

}  // namespace strata::analysis
