#include "strata/analysis/bias_matrix.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "strata/core/error.h"

namespace strata::analysis {

using attn::Relation;
using attn::RelationKind;

SectionTree figure5_tree() {
  SectionTree tree;
  tree.parent = {-1, 0, 1, 2, 3, 1, 0, 6};
  tree.depth = {0, 1, 2, 3, 4, 2, 1, 2};
  tree.heading = {"", "1", "1.1", "1.1.1", "1.1.1.1", "1.2", "2", "2.1"};
  return tree;
}

std::string relation_label(const Relation& relation, std::int32_t id) {
  const std::int64_t count = attn::relation_count(relation);
  if (id < 0 || id >= count)
    throw Error(fmt::format("relation id {} is outside the {} table's [0, {})", id,
                            attn::relation_name(relation.kind), count));
  switch (relation.kind) {
    case RelationKind::HibridsSelected:
      return std::string(attn::selected_relation_name(static_cast<attn::SelectedRelation>(id)));
    case RelationKind::T5Buckets:
    case RelationKind::SectionDistance: return fmt::format("bucket {}", id);
    case RelationKind::None: break;  // count 0: unreachable
    case RelationKind::Hibrids: {
      const std::int64_t levels = relation.level ? 2 * relation.max_level + 1 : 1;
      const std::int64_t p = id / levels, l = id % levels;
      std::string path = "*", level = "*";
      if (relation.path) {
        if (relation.asymmetric) path = std::to_string(p - relation.max_path);
        else path = p == 0 ? std::string("0") : fmt::format("±{}", p);
      }
      if (relation.level) level = std::to_string(l - relation.max_level);
      return fmt::format("({}, {})", path, level);
    }
  }
  return {};
}

std::vector<std::string> relation_labels(const Relation& relation) {
  std::vector<std::string> labels;
  const std::int64_t count = attn::relation_count(relation);
  for (std::int64_t id = 0; id < count; ++id)
    labels.push_back(relation_label(relation, static_cast<std::int32_t>(id)));
  return labels;
}

std::string relation_description(const Relation& r) {
  switch (r.kind) {
    case RelationKind::None:
    case RelationKind::HibridsSelected: return std::string(attn::relation_name(r.kind));
    case RelationKind::Hibrids:
      return fmt::format("hibrids(max_path={}, max_level={}{}{}{})", r.max_path, r.max_level,
                         r.path ? "" : ", no path", r.level ? "" : ", no level",
                         r.asymmetric ? "" : ", symmetric path");
    case RelationKind::T5Buckets:
    case RelationKind::SectionDistance:
      return fmt::format("{}(buckets={}, max_distance={})", attn::relation_name(r.kind), r.buckets,
                         r.max_distance);
  }
  return {};
}

BiasMatrix bias_matrix(const Relation& relation, std::span<const float> mean_table,
                       const SectionTree& tree) {
  if (!attn::is_tree_relation(relation.kind))
    throw Error(fmt::format("a bias matrix needs a tree relation (hibrids, hibrids_selected), not {}",
                            attn::relation_name(relation.kind)));
  const std::int64_t count = attn::relation_count(relation);
  if (static_cast<std::int64_t>(mean_table.size()) != count)
    throw Error(fmt::format("the {} bias table has {} entries, expected relation_count = {}",
                            attn::relation_name(relation.kind), mean_table.size(), count));
  if (tree.size() < 2 || tree.depth.size() != tree.parent.size())
    throw Error("a bias matrix needs a section tree with at least one section below the root");
  BiasMatrix m;
  m.relation = relation;
  m.table.assign(mean_table.begin(), mean_table.end());
  const int sections = tree.size() - 1;
  for (int x = 1; x <= sections; ++x)
    m.sections.push_back(static_cast<std::size_t>(x) < tree.heading.size() ? tree.heading[x]
                                                                           : std::to_string(x));
  const std::vector<std::string> labels = relation_labels(relation);
  for (int x = 1; x <= sections; ++x)
    for (int y = 1; y <= sections; ++y) {
      const attn::SectionPair pair{tree.path_len(x, y), tree.lvl_diff(x, y), tree.depth[x], y - x};
      const std::int32_t id = attn::tree_relation_id(relation, pair);
      m.ids.push_back(id);
      m.values.push_back(mean_table[id]);
      m.labels.push_back(labels[id]);
      m.clamped.push_back(attn::tree_relation_clamped(relation, pair) ? 1 : 0);
    }
  return m;
}

namespace {

// The double nearest the float's shortest decimal form: 0.04f is written 0.04, not
// 0.03999999910593033.
double shortest(float value) { return std::strtod(fmt::format("{}", value).c_str(), nullptr); }

}  // namespace

nlohmann::ordered_json to_json(const BiasMatrix& m) {
  using Json = nlohmann::ordered_json;
  const std::int64_t s = m.size();
  Json values = Json::array(), labels = Json::array(), ids = Json::array(), clamped = Json::array();
  for (std::int64_t x = 0; x < s; ++x) {
    Json value_row = Json::array(), label_row = Json::array(), id_row = Json::array();
    for (std::int64_t y = 0; y < s; ++y) {
      const std::size_t at = static_cast<std::size_t>(x * s + y);
      value_row.push_back(shortest(m.values[at]));
      label_row.push_back(m.labels[at]);
      id_row.push_back(m.ids[at]);
      if (m.clamped[at]) clamped.push_back(Json::array({x, y}));
    }
    values.push_back(std::move(value_row));
    labels.push_back(std::move(label_row));
    ids.push_back(std::move(id_row));
  }
  Json table = Json::array();
  for (std::size_t id = 0; id < m.table.size(); ++id)
    table.push_back({{"id", id},
                     {"relation", relation_label(m.relation, static_cast<std::int32_t>(id))},
                     {"value", shortest(m.table[id])}});
  attn::LayerSpec spec;
  spec.bias = m.relation;
  Json out;
  out["relation"] = Json::parse(attn::to_json(spec)["bias"].dump());
  out["sections"] = m.sections;
  out["values"] = std::move(values);
  out["relations"] = std::move(labels);
  out["ids"] = std::move(ids);
  out["clamped"] = std::move(clamped);
  out["table"] = std::move(table);
  return out;
}

}  // namespace strata::analysis
