#include "strata/train/analysis_batch.h"

#include <torch/torch.h>

#include "strata/models/collate.h"

namespace strata::train {

AnalysisBatch encoder_analysis_batch(models::EncoderModel model, const std::vector<const Layout*>& rows) {
  models::EncoderBatch batch = models::collate_encoder(rows, model->config().pad_id, /*with_layout=*/true);
  AnalysisBatch out{batch.ids, batch.padding, batch.layout, {}};
  out.forward = [model, batch]() mutable { model->encode(batch.ids, batch.padding, &batch.layout); };
  return out;
}

}  // namespace strata::train
