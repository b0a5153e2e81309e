#pragma once
// CovSim (thesis ch. 3, Eq. 3.7): how alike the tasks' input covariances are at the first
// layer. For task i with first-layer inputs X_i [m_i, d] (here: the real tokens' vectors after
// the embeddings and the conditional alignment), X_iᵀX_i = U D Uᵀ keeps the r_i leading
// eigenpairs that cover 99 % of the spectrum, A_i = U_i D_i^½, and
//   CovSim_ij = ‖A_iᵀ A_j‖_F / (‖A_i‖_F ‖A_j‖_F),   CovSim_i = mean over j ≠ i.
// A task whose inputs span another's directions with the same weights scores high; inputs in
// orthogonal subspaces score 0. The thesis reads a rise over training (Fig. 3.7) as the
// conditional alignment bringing the tasks' inputs together.
#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace strata::analysis {

struct CovarianceSimilarity {
  std::vector<std::vector<double>> pairs;  // [T][T], CovSim_ij (1 on the diagonal by definition)
  std::vector<double> per_task;            // CovSim_i
  std::vector<std::int64_t> ranks;         // r_i
  double mean = 0;                         // mean of per_task
};

// inputs[i]: task i's first-layer inputs [m_i, d]. strata::Error for fewer than 2 tasks,
// widths that differ, or a task without inputs.
CovarianceSimilarity covariance_similarity(const std::vector<at::Tensor>& inputs, double coverage = 0.99);

// `strata mtl covsim`: the model's CovSim on up to `examples` examples of each of its tasks in
// `split` of `suite` (empty = the run's data.valid): {"model", "split", "examples", "tasks":
// {NAME: {"covsim", "rank"}}, "mean", "pairs"}.
nlohmann::ordered_json task_covariance_report(const std::filesystem::path& model, std::filesystem::path suite,
                                              const std::string& split, std::size_t examples);

}  // namespace strata::analysis
