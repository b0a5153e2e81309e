// Seq2SeqTask with an ExampleRedraw (denoising pretraining's fresh noise per epoch): the
// trainer asks for every epoch's examples, on a fresh run and on a resumed one.
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "strata/train/seq2seq_task.h"
#include "strata/train/trainer.h"
#include "support/word_tokenizer.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

models::ModelConfig tiny_redraw_config() {
  models::ModelConfig c;
  c.vocab_size = 30;
  c.d_model = 16;
  c.heads = 2;
  c.d_ff = 32;
  c.encoder_layers = 1;
  c.decoder_layers = 1;
  c.max_positions = 32;
  c.pad_id = 0;
  c.bos_id = 1;
  c.eos_id = 2;
  c.decoder_start_id = 1;
  return c;
}

std::vector<Seq2SeqExample> examples(int count) {
  std::vector<Seq2SeqExample> out(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    out[i].source.token = {5, 6, 7, 2};
    out[i].target = {5, 2};
  }
  return out;
}

// Each epoch's source is the loaded one with `epoch` extra tokens; records the epochs asked for.
struct Recorder {
  std::set<std::int64_t> epochs;
  int calls = 0;
  ExampleRedraw redraw() {
    return [this](const Seq2SeqExample& loaded, std::size_t, std::int64_t epoch) {
      epochs.insert(epoch);
      ++calls;
      Seq2SeqExample out = loaded;
      out.source.token.insert(out.source.token.begin(), static_cast<std::size_t>(epoch), 9);
      return out;
    };
  }
};

TEST(Seq2SeqRedraw, EachEpochRedrawsTheExamplesAndTheirCosts) {
  const test_support::WordTokenizer tokenizer;
  Recorder recorder;
  Seq2SeqTask task(models::Seq2Seq(tiny_redraw_config()), tokenizer, examples(3), examples(2), 4, recorder.redraw());
  EXPECT_EQ(task.costs(Split::Train), (std::vector<std::size_t>{6, 6, 6}));  // epoch 0: 4 + 2
  task.start_epoch(2);
  EXPECT_EQ(task.costs(Split::Train), (std::vector<std::size_t>{8, 8, 8}));
  task.start_epoch(2);  // the same epoch again: nothing to redraw
  EXPECT_EQ(recorder.calls, 6);
  EXPECT_EQ(task.costs(Split::Valid), (std::vector<std::size_t>{6, 6}));  // validation stays as loaded
}

TEST(Seq2SeqRedraw, TheTrainerStartsEveryEpochAndAResumedRunItsCurrentOne) {
  const fs::path dir = fs::temp_directory_path() / ("strata_redraw_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const test_support::WordTokenizer tokenizer;
  TrainOptions o;
  o.max_steps = 6;  // 2 batches an epoch: epochs 0, 1 and 2
  o.schedule.total_steps = 6;
  o.max_tokens = 16;
  o.eval_every = 3;
  o.eval_docs = 0;
  o.threads = 1;
  RunInfo run;
  run.run_dir = dir;
  run.model_config = tiny_redraw_config().to_json();
  run.quiet = true;
  {
    Recorder recorder;
    torch::manual_seed(1);
    Seq2SeqTask task(models::Seq2Seq(tiny_redraw_config()), tokenizer, examples(4), examples(2), 4, recorder.redraw());
    o.max_steps = 3;
    EXPECT_EQ(run_training(task, o, run).steps, 3);
    EXPECT_EQ(recorder.epochs, (std::set<std::int64_t>{0, 1}));
  }
  Recorder recorder;
  Seq2SeqTask task(models::Seq2Seq(tiny_redraw_config()), tokenizer, examples(4), examples(2), 4, recorder.redraw());
  recorder.epochs.clear();  // forget the constructor's epoch 0
  o.max_steps = 6;
  run.resume = true;
  EXPECT_EQ(run_training(task, o, run).steps, 6);
  EXPECT_EQ(recorder.epochs, (std::set<std::int64_t>{1, 2}));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace strata::train
