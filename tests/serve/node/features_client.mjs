// zinc-rt serve's structured output, tool calls, metrics and Ollama API, as real clients see
// them. The model (qwen3-tiny) has random weights: whatever parses and validates does so
// because the grammar made it. Usage: node features_client.mjs BASE_URL MODEL
import assert from 'node:assert/strict';
import Ajv from 'ajv';
import OpenAI from 'openai';
import parsePrometheus from 'parse-prometheus-text-format';

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });
const ajv = new Ajv({ strict: false });

async function check(name, body) {
  await body();
  console.log(`ok - ${name}`);
}

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string', maxLength: 8 },
    age: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { enum: ['a', 'b', 'c'] }, minItems: 1, maxItems: 3 },
    address: {
      type: 'object',
      properties: { city: { type: 'string', maxLength: 6 }, zip: { type: ['string', 'null'], maxLength: 5 } },
      required: ['city', 'zip'],
      additionalProperties: false,
    },
    ok: { type: 'boolean' },
    score: { type: 'number' },
  },
  required: ['name', 'age', 'tags', 'address'],
  additionalProperties: false,
};
const validate = ajv.compile(schema);
const messages = [{ role: 'user', content: 'Describe a person as JSON.' }];
const responseFormat = { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } };

await check('json_schema: 20 seeds, whole answers, parse and validate', async () => {
  for (let seed = 1; seed <= 20; seed++) {
    const r = await client.chat.completions.create({ model, messages, seed, max_tokens: 80, response_format: responseFormat });
    const text = r.choices[0].message.content;
    const value = JSON.parse(text);
    assert.ok(validate(value), `seed ${seed}: ${text}: ${ajv.errorsText(validate.errors)}`);
  }
});

await check('json_schema: 20 seeds, streamed, parse and validate', async () => {
  for (let seed = 1; seed <= 20; seed++) {
    const stream = await client.chat.completions.create({
      model, messages, seed, max_tokens: 80, response_format: responseFormat, stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    const value = JSON.parse(text);
    assert.ok(validate(value), `seed ${seed}: ${text}: ${ajv.errorsText(validate.errors)}`);
  }
});

await check('json_object: an object, closed within max_tokens', async () => {
  for (let seed = 1; seed <= 5; seed++) {
    const r = await client.chat.completions.create({
      model, messages, seed, max_tokens: 40, response_format: { type: 'json_object' },
    });
    const value = JSON.parse(r.choices[0].message.content);
    assert.equal(typeof value, 'object');
    assert.ok(!Array.isArray(value) && value !== null);
  }
});

const tools = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', maxLength: 10 }, unit: { enum: ['celsius', 'fahrenheit'] } },
        required: ['city', 'unit'],
        additionalProperties: false,
      },
      strict: true,
    },
  },
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
];
const validateArgs = ajv.compile(tools[0].function.parameters);

await check('tool call round trip (call -> tool result -> answer), streamed', async () => {
  const question = [{ role: 'user', content: 'What is the weather in Oslo?' }];
  const stream = await client.chat.completions.create({
    model, messages: question, tools, seed: 3, max_tokens: 200, stream: true,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
  });
  const calls = [];
  let finish = null;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    for (const d of choice.delta.tool_calls ?? []) {
      calls[d.index] ??= { id: '', name: '', arguments: '' };
      calls[d.index].id += d.id ?? '';
      calls[d.index].name += d.function?.name ?? '';
      calls[d.index].arguments += d.function?.arguments ?? '';
    }
    finish = choice.finish_reason ?? finish;
  }
  assert.equal(finish, 'tool_calls');
  assert.equal(calls.length, 1);
  assert.equal(calls[0].name, 'get_weather');
  assert.match(calls[0].id, /^call_/);
  const args = JSON.parse(calls[0].arguments);
  assert.ok(validateArgs(args), `${calls[0].arguments}: ${ajv.errorsText(validateArgs.errors)}`);

  const followUp = [
    ...question,
    { role: 'assistant', content: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) },
    { role: 'tool', tool_call_id: calls[0].id, content: '{"temperature": 21}' },
  ];
  const answer = await client.chat.completions.create({
    model, messages: followUp, tools, tool_choice: 'none', seed: 3, max_tokens: 8, stream: true,
    stream_options: { include_usage: true },
  });
  let text = '', usage = null;
  for await (const chunk of answer) {
    if (chunk.usage) usage = chunk.usage;
    text += chunk.choices[0]?.delta?.content ?? '';
  }
  assert.equal(typeof text, 'string');
  assert.ok(usage.completion_tokens > 0);
  // The tool's result reached the model: the prompt holds the rendered <tool_response>.
  const rendered = await fetch(`${baseURL}/v1/tokenize`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ content: '<tool_response>\n{"temperature": 21}\n</tool_response>' }),
  }).then((r) => r.json());
  assert.ok(usage.prompt_tokens > rendered.tokens.length);
});

await check('tool_choice required: one of the tools is called', async () => {
  const r = await client.chat.completions.create({
    model, messages, tools, tool_choice: 'required', seed: 5, max_tokens: 200,
  });
  const call = r.choices[0].message.tool_calls[0];
  assert.ok(['get_weather', 'get_time'].includes(call.function.name));
  assert.equal(typeof JSON.parse(call.function.arguments), 'object');
  assert.equal(r.choices[0].finish_reason, 'tool_calls');
});

await check('Ollama /api/chat stream read as NDJSON, same text as the whole answer', async () => {
  const body = { model: `${model}:latest`, messages, options: { seed: 4, temperature: 0, num_predict: 12 } };
  const res = await fetch(`${baseURL}/api/chat`, { method: 'POST', body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/x-ndjson');
  const lines = (await res.text()).split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
  assert.ok(lines.length >= 2);
  for (const l of lines.slice(0, -1)) assert.equal(l.done, false);
  const last = lines.at(-1);
  assert.equal(last.done, true);
  assert.ok(['stop', 'length'].includes(last.done_reason));
  assert.ok(last.eval_count > 0 && last.eval_count <= 12);
  assert.ok(last.prompt_eval_count > 0 && last.total_duration > 0);
  const streamed = lines.map((l) => l.message.content).join('');
  const whole = await fetch(`${baseURL}/api/chat`, { method: 'POST', body: JSON.stringify({ ...body, stream: false }) })
    .then((r) => r.json());
  assert.equal(whole.done, true);
  assert.equal(streamed, whole.message.content);
  const tags = await fetch(`${baseURL}/api/tags`).then((r) => r.json());
  assert.equal(tags.models[0].name, model);
  const gen = await fetch(`${baseURL}/api/generate`, {
    method: 'POST', body: JSON.stringify({ model, prompt: 'Hi', stream: false, format: 'json', options: { num_predict: 20, seed: 1 } }),
  }).then((r) => r.json());
  assert.equal(typeof JSON.parse(gen.response), 'object');
});

await check('/metrics parses as Prometheus text and counts these requests', async () => {
  const text = await fetch(`${baseURL}/metrics`).then((r) => r.text());
  const families = Object.fromEntries(parsePrometheus(text).map((f) => [f.name, f]));
  const requests = families.zinc_requests_total;
  assert.equal(requests.type, 'COUNTER');
  const chat200 = requests.metrics.find((m) => m.labels.route === '/v1/chat/completions' && m.labels.status === '200');
  assert.ok(Number(chat200.value) >= 40);
  const ttft = families.zinc_time_to_first_token_seconds;
  assert.equal(ttft.type, 'HISTOGRAM');
  assert.ok(Number(ttft.metrics[0].count) >= 40);
  assert.ok(Number(families.zinc_generated_tokens_total.metrics[0].value) > 0);
  assert.equal(families.zinc_queue_capacity.type, 'GAUGE');
});
