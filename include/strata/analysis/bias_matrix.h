#pragma once
// What a learned tree-relation bias table says about a section tree (seed 001 §7.1, Figure 5):
// for every (query section, key section) pair, the table entry its relation selects. The
// numbers behind `strata analyze biases`; strata/analysis/bias_figure.h draws them.
#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "strata/attn/spec.h"
#include "strata/doc/layout.h"

namespace strata::analysis {

// The example structure of seed 001 Figure 5: root ─ §1 ─ §1.1 ─ §1.1.1 ─ §1.1.1.1, §1 ─ §1.2,
// root ─ §2 ─ §2.1, in document order (indices 1…7; headings "1", "1.1", …; the root's "").
SectionTree figure5_tree();

// The label of entry `id` of a relation's bias table. Hibrids: "(PathLen, LvlDiff)" as the
// table stores them (clamped to ±max), "*" for an ablated coordinate, "±n" for |PathLen| when
// not asymmetric, e.g. "(-1, -1)", "(*, 2)", "(±3, 0)". HibridsSelected: the
// selected_relation_name ("parent", …). Bucketed relations: "bucket k". strata::Error when
// id is outside [0, relation_count).
std::string relation_label(const attn::Relation& relation, std::int32_t id);
std::vector<std::string> relation_labels(const attn::Relation& relation);  // one per id
// One line naming the relation and its parameters: "hibrids(max_path=4, max_level=2)",
// "hibrids(max_path=4, max_level=2, no level)", "hibrids_selected", "t5_buckets(buckets=32,
// max_distance=128)", "none".
std::string relation_description(const attn::Relation& relation);

// The S × S bias matrix of a tree relation over the sections of a tree (the root excluded:
// row/column k is tree section k + 1), query section x on rows and key section y on columns.
struct BiasMatrix {
  attn::Relation relation;
  std::vector<std::string> sections;     // headings, S entries
  std::vector<float> values;             // S * S, row-major: values[x * S + y]
  std::vector<std::int32_t> ids;         // the table id of each cell
  std::vector<std::string> labels;       // relation_label of each cell's id
  std::vector<std::uint8_t> clamped;     // 1 where the pair shares an edge entry (Hibrids)
  std::vector<float> table;              // the mean table the cells were read from
  std::int64_t size() const { return static_cast<std::int64_t>(sections.size()); }
  float at(std::int64_t x, std::int64_t y) const { return values[x * size() + y]; }
  const std::string& label(std::int64_t x, std::int64_t y) const { return labels[x * size() + y]; }
};

// Cell (x, y) = mean_table[tree_relation_id(relation, SectionPair{path_len, lvl_diff,
// depth[x], y - x})], as the attention engine reads the table. strata::Error unless relation
// is a tree relation, mean_table has relation_count(relation) entries and the tree has at
// least one section besides the root.
BiasMatrix bias_matrix(const attn::Relation& relation, std::span<const float> mean_table,
                       const SectionTree& tree);

// {"relation": {spec JSON of the relation}, "sections": [...], "values": [[...]] (raw, not
// ×100), "relations": [[label, ...]], "ids": [[...]], "clamped": [[x, y], ...],
// "table": [{"id": 0, "relation": label, "value": v}, ...]}.
nlohmann::ordered_json to_json(const BiasMatrix& matrix);

}  // namespace strata::analysis
