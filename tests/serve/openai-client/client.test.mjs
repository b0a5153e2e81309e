// OpenAI's official Node client against a running `strata serve`: completions, chat, streaming,
// seeds, stop strings and errors, as an application would use them. Run by
// tests/cli/test_cli_serve.cpp:
//   node client.test.mjs LM_BASE_URL LM_MODEL [SUMMARIZER_BASE_URL SUMMARIZER_MODEL]
// (base URLs end in /v1). Prints one line per check; exits with the number of failed checks.
import assert from "node:assert/strict";
import OpenAI from "openai";

const [lmUrl, lmModel, sumUrl, sumModel] = process.argv.slice(2);
if (!lmUrl || !lmModel) {
  console.error("usage: node client.test.mjs LM_BASE_URL LM_MODEL [SUMMARIZER_BASE_URL SUMMARIZER_MODEL]");
  process.exit(2);
}
const client = new OpenAI({ baseURL: lmUrl, apiKey: "unused", maxRetries: 0, timeout: 60_000 });

let failed = 0;
async function check(name, body) {
  try {
    await body();
    console.log(`ok - ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok - ${name}\n  ${String(error && error.stack ? error.stack : error).replace(/\n/g, "\n  ")}`);
  }
}

// The status and parameter of the error a call throws.
async function refusal(call) {
  try {
    await call();
  } catch (error) {
    if (error instanceof OpenAI.APIError) return error;
    throw error;
  }
  throw new Error("the request was accepted");
}

const greedy = { model: lmModel, prompt: "list the contents of", max_tokens: 8, temperature: 0 };

await check("models.list names the served model", async () => {
  const models = await client.models.list();
  assert.ok(models.data.some((m) => m.id === lmModel), JSON.stringify(models.data));
  const model = await client.models.retrieve(lmModel);
  assert.equal(model.id, lmModel);
});

let greedyText = "";
await check("a greedy completion has text, a finish reason and usage", async () => {
  const r = await client.completions.create(greedy);
  assert.equal(r.object, "text_completion");
  assert.equal(r.choices.length, 1);
  assert.equal(typeof r.choices[0].text, "string");
  assert.ok(["stop", "length"].includes(r.choices[0].finish_reason), r.choices[0].finish_reason);
  assert.ok(r.usage.prompt_tokens > 0);
  assert.ok(r.usage.completion_tokens >= 1 && r.usage.completion_tokens <= 8, JSON.stringify(r.usage));
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  greedyText = r.choices[0].text;
  const again = await client.completions.create(greedy);
  assert.equal(again.choices[0].text, greedyText, "greedy decoding is deterministic");
});

await check("sampling with a seed repeats; n choices come back indexed", async () => {
  const request = { ...greedy, temperature: 1.0, top_p: 0.9, seed: 7, n: 3, max_tokens: 12 };
  const a = await client.completions.create(request);
  const b = await client.completions.create(request);
  assert.deepEqual(a.choices.map((c) => c.index), [0, 1, 2]);
  assert.deepEqual(a.choices.map((c) => c.text), b.choices.map((c) => c.text));
});

await check("two prompts in one request give one choice each, in order", async () => {
  const r = await client.completions.create({ ...greedy, prompt: ["list the contents of", "print the"] });
  assert.equal(r.choices.length, 2);
  assert.equal(r.choices[0].text, greedyText);
});

await check("a streamed completion sends the same text as the whole one", async () => {
  const stream = await client.completions.create({ ...greedy, stream: true, stream_options: { include_usage: true } });
  let text = "";
  let reason = null;
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      text += choice.text;
      if (choice.finish_reason) reason = choice.finish_reason;
    }
  }
  assert.equal(text, greedyText);
  assert.ok(["stop", "length"].includes(reason), String(reason));
  assert.ok(usage && usage.completion_tokens >= 1, JSON.stringify(usage));
});

await check("a stop string ends the text before it", async () => {
  assert.ok(greedyText.length >= 3, `greedy text too short to cut: ${JSON.stringify(greedyText)}`);
  const k = Math.floor(greedyText.length / 2);
  const stop = greedyText.slice(k, k + 2);
  const r = await client.completions.create({ ...greedy, stop: [stop] });
  assert.equal(r.choices[0].text, greedyText.slice(0, greedyText.indexOf(stop)));
  assert.equal(r.choices[0].finish_reason, "stop");
});

let chatText = "";
await check("a chat completion answers as the assistant", async () => {
  const r = await client.chat.completions.create({
    model: lmModel,
    messages: [{ role: "user", content: "list the files" }],
    max_tokens: 8,
    temperature: 0,
  });
  assert.equal(r.object, "chat.completion");
  assert.equal(r.choices[0].message.role, "assistant");
  assert.equal(typeof r.choices[0].message.content, "string");
  chatText = r.choices[0].message.content;
});

await check("a streamed chat sends the role first, then the same content", async () => {
  const stream = await client.chat.completions.create({
    model: lmModel,
    messages: [{ role: "user", content: "list the files" }],
    max_tokens: 8,
    temperature: 0,
    stream: true,
  });
  let role = null;
  let content = "";
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta ?? {};
    if (delta.role && role === null) role = delta.role;
    content += delta.content ?? "";
  }
  assert.equal(role, "assistant");
  assert.equal(content, chatText);
});

await check("a chat without max_tokens writes at most what the model's context leaves", async () => {
  const model = await client.models.retrieve(lmModel);
  const r = await client.chat.completions.create({ model: lmModel, messages: [{ role: "user", content: "list" }], temperature: 0 });
  assert.ok(r.usage.prompt_tokens + r.usage.completion_tokens <= model.context_tokens, JSON.stringify(r.usage));
});

await check("an unknown model is 404 model_not_found", async () => {
  const e = await refusal(() => client.completions.create({ ...greedy, model: "no-such-model" }));
  assert.equal(e.status, 404);
  assert.equal(e.code, "model_not_found");
});

await check("bad and unsupported parameters are 400 naming the field", async () => {
  const tooLong = await refusal(() => client.completions.create({ ...greedy, max_tokens: 100000 }));
  assert.equal(tooLong.status, 400);
  assert.equal(tooLong.param, "max_tokens");
  const echo = await refusal(() => client.completions.create({ ...greedy, echo: true }));
  assert.equal(echo.status, 400);
  assert.equal(echo.param, "echo");
  const hot = await refusal(() => client.completions.create({ ...greedy, temperature: 3 }));
  assert.equal(hot.param, "temperature");
  const role = await refusal(() =>
    client.chat.completions.create({ model: lmModel, messages: [{ role: "tool", content: "x", tool_call_id: "1" }] }),
  );
  assert.equal(role.status, 400);
  assert.equal(role.param, "messages[0].role");
});

// Below the client: bodies it would never send, and the server's own routes.
const root = lmUrl.replace(/\/v1\/?$/, "");
async function raw(path, init) {
  const response = await fetch(root + path, init);
  return { status: response.status, body: await response.json() };
}

await check("malformed JSON, unknown routes and oversized bodies get JSON errors", async () => {
  const malformed = await raw("/v1/completions", { method: "POST", body: "{not json", headers: { "Content-Type": "application/json" } });
  assert.equal(malformed.status, 400);
  assert.match(malformed.body.error.message, /not valid JSON/);
  const unknown = await raw("/v1/nothing-here", { method: "GET" });
  assert.equal(unknown.status, 404);
  assert.equal(typeof unknown.body.error.message, "string");
  const big = await raw("/v1/completions", { method: "POST", body: "x".repeat(100_000), headers: { "Content-Type": "application/json" } });
  assert.equal(big.status, 413);
  assert.match(big.body.error.message, /max-body-bytes/);
});

await check("/health reports the model and its queue", async () => {
  const health = await raw("/health", { method: "GET" });
  assert.equal(health.status, 200);
  assert.equal(health.body.status, "ok");
  assert.equal(health.body.model, lmModel);
});

if (sumUrl && sumModel) {
  const summarizerRoot = sumUrl.replace(/\/v1\/?$/, "");
  await check("a seq2seq model summarizes through /v1/summarize and refuses completions", async () => {
    const response = await fetch(summarizerRoot + "/v1/summarize", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: sumModel, input: ["# ls\n\nlist the contents of a directory. print files.", "print a line"], max_tokens: 8 }),
    });
    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.data.length, 2);
    assert.equal(typeof body.data[1].summary, "string");
    assert.ok(body.usage.prompt_tokens > 0);
    const summarizer = new OpenAI({ baseURL: sumUrl, apiKey: "unused", maxRetries: 0 });
    const e = await refusal(() => summarizer.completions.create({ model: sumModel, prompt: "x" }));
    assert.equal(e.status, 400);
    assert.match(e.message, /summarize/);
  });
}

process.exit(failed);
