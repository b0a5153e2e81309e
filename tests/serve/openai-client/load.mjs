// A bounded load test of `strata serve` on loopback with OpenAI's Node client: REQUESTS
// completions, CONCURRENCY at a time, each asking for MAX_TOKENS tokens greedily. Prints one JSON
// object: requests/s, tokens/s, latency p50/p90/p99 (ms), and how many were answered, refused
// (429) or failed. Run by bench/serve-load.sh.
//   node load.mjs BASE_URL MODEL REQUESTS CONCURRENCY MAX_TOKENS
import OpenAI from "openai";

const [baseURL, model, requests = "64", concurrency = "4", maxTokens = "32"] = process.argv.slice(2);
const total = Number(requests);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0, timeout: 600_000 });
const prompts = ["list the contents of", "print the name of", "copy files to", "show the manual page of"];

const latencies = [];
let answered = 0, refused = 0, failed = 0, tokens = 0, next = 0;
const started = performance.now();
async function worker() {
  while (next < total) {
    const i = next++;
    const t0 = performance.now();
    try {
      const r = await client.completions.create({ model, prompt: prompts[i % prompts.length], max_tokens: Number(maxTokens), temperature: 0 });
      latencies.push(performance.now() - t0);
      tokens += r.usage.completion_tokens;
      answered += 1;
    } catch (error) {
      if (error instanceof OpenAI.APIError && error.status === 429) refused += 1;
      else failed += 1;
    }
  }
}
await Promise.all(Array.from({ length: Number(concurrency) }, worker));
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const quantile = (q) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] : null);
console.log(JSON.stringify({
  requests: total, concurrency: Number(concurrency), max_tokens: Number(maxTokens), answered, refused, failed,
  seconds, requests_per_second: answered / seconds, tokens_per_second: tokens / seconds,
  p50_ms: quantile(0.5), p90_ms: quantile(0.9), p99_ms: quantile(0.99),
}));
