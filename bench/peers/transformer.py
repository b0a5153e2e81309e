"""PyTorch 2.6's nn.Transformer trained on bench_training's model and batches, the peer of
strata's Seq2Seq there: 6 + 6 post-norm layers, d_model 256, 4 heads, d_ff 1024, vocabulary
8000, GELU, dropout 0.1 (residual branches, attention weights, after the activation), learned
positions, output projection tied to the token embedding; batches of B rows with sources of
448-512 tokens and targets of 48-64 (right-padded; key padding and causal masks); summed token
cross-entropy / labelled tokens; AdamW (lr 1e-4). A step is forward + loss + backward +
optimizer step with zero_grad. tokens/s counts real source + target tokens, as strata does.

Prints one JSON line: torch's version, the BLAS and its kernel, the median step and tokens/s.
With --lockstep, bench_training drives the rounds one at a time between its own (the
protocol is in sdpa.py's lockstep), and round N trains on batch N mod 4.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn

from sdpa import blas_description, lockstep, malloc_description

VOCAB, D_MODEL, HEADS, D_FF, LAYERS, DROPOUT = 8000, 256, 4, 1024, 6, 0.1
SOURCE_LEN, TARGET_LEN, PAD, START, EOS = 512, 64, 2, 0, 1


class Peer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        # One position table for the source and one for the target, as strata's model has.
        self.source_positions = nn.Embedding(1024, D_MODEL)
        self.target_positions = nn.Embedding(1024, D_MODEL)
        self.dropout = nn.Dropout(DROPOUT)
        self.transformer = nn.Transformer(D_MODEL, HEADS, LAYERS, LAYERS, D_FF, DROPOUT,
                                          activation="gelu", batch_first=True)

    def embed_tokens(self, tokens, table):
        positions = torch.arange(tokens.shape[1]).unsqueeze(0)
        return self.dropout(self.embed(tokens) + table(positions))

    def forward(self, source, inputs, source_pad):
        causal = nn.Transformer.generate_square_subsequent_mask(inputs.shape[1])
        hidden = self.transformer(self.embed_tokens(source, self.source_positions),
                                  self.embed_tokens(inputs, self.target_positions), tgt_mask=causal,
                                  src_key_padding_mask=source_pad, memory_key_padding_mask=source_pad)
        return hidden @ self.embed.weight.t()


def make_batches(count, rows, generator):
    batches = []
    for _ in range(count):
        source = torch.full((rows, SOURCE_LEN), PAD)
        inputs = torch.full((rows, TARGET_LEN), PAD)
        labels = torch.full((rows, TARGET_LEN), -100)
        tokens = labelled = 0
        for r in range(rows):
            ls = int(torch.randint(SOURCE_LEN - 64, SOURCE_LEN + 1, (1,), generator=generator))
            lt = int(torch.randint(TARGET_LEN - 16, TARGET_LEN + 1, (1,), generator=generator))
            source[r, :ls] = torch.randint(4, VOCAB, (ls,), generator=generator)
            target = torch.randint(4, VOCAB, (lt,), generator=generator)
            target[-1] = EOS
            inputs[r, 0] = START
            inputs[r, 1:lt] = target[:-1]
            labels[r, :lt] = target
            tokens += ls + lt
            labelled += lt
        batches.append((source, inputs, labels, source == PAD, tokens, labelled))
    return batches


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--lockstep", action="store_true", help="rounds on request, one per stdin line")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Peer()
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loss_fn = nn.CrossEntropyLoss(ignore_index=-100, reduction="sum")
    batches = make_batches(4, args.batch, torch.Generator().manual_seed(7))

    def step(batch):
        source, inputs, labels, source_pad, _, labelled = batch
        optimizer.zero_grad(set_to_none=True)
        logits = model(source, inputs, source_pad)
        loss = loss_fn(logits.reshape(-1, VOCAB), labels.reshape(-1)) / labelled
        loss.backward()
        optimizer.step()

    for i in range(args.warmup):
        step(batches[i % len(batches)])
    settings = {
        "torch": torch.__version__,
        "blas": blas_description(),
        "malloc": malloc_description(),
        "threads": torch.get_num_threads(),
        "parameters": sum(p.numel() for p in model.parameters()),
    }

    def timed_round(i):
        batch = batches[i % len(batches)]
        step(batch)
        return {"tokens": batch[4]}

    def summary(answers):
        times = [a["ms"] for a in answers]
        return dict(settings, median_step_ms=statistics.median(times) if times else None,
                    tokens_per_s=statistics.median(a["tokens"] / (a["ms"] / 1000.0) for a in answers)
                    if answers else None, rounds_ms=times)

    if args.lockstep:
        lockstep(timed_round, settings, summary)
        return
    answers = []
    for i in range(args.rounds):
        start = time.perf_counter()
        extra = timed_round(i)
        answers.append(dict(extra, ms=(time.perf_counter() - start) * 1000.0))
    print(json.dumps(summary(answers)))


if __name__ == "__main__":
    main()
