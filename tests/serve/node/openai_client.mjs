// zinc-rt serve as the official openai package sees it: models list, chat completion,
// streamed chat completion (with usage), completion, prefix reuse across turns, and the SDK's
// own error class for an unknown model. Usage: node openai_client.mjs BASE_URL MODEL
import assert from 'node:assert/strict';
import OpenAI, { NotFoundError } from 'openai';

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'not-needed', maxRetries: 0, timeout: 60_000 });

async function check(name, body) {
  await body();
  console.log(`ok - openai: ${name}`);
}

await check('models list', async () => {
  const ids = [];
  for await (const m of client.models.list()) ids.push(m.id);
  assert.deepEqual(ids, [model]);
});

const question = [{ role: 'user', content: 'Tell me a story.' }];
let answer;
await check('chat completion', async () => {
  const r = await client.chat.completions.create({ model, messages: question, max_tokens: 12, temperature: 0 });
  assert.equal(r.object, 'chat.completion');
  assert.equal(r.model, model);
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].message.role, 'assistant');
  assert.equal(typeof r.choices[0].message.content, 'string');
  assert.ok(['stop', 'length'].includes(r.choices[0].finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 12);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  answer = r;
});

await check('streamed chat completion equals the whole one', async () => {
  const stream = await client.chat.completions.create({
    model, messages: question, max_tokens: 12, temperature: 0, stream: true, stream_options: { include_usage: true },
  });
  let text = '', finish = null, usage = null, chunks = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    if (chunk.choices.length === 0) continue;
    chunks++;
    text += chunk.choices[0].delta.content ?? '';
    finish = chunk.choices[0].finish_reason ?? finish;
  }
  assert.ok(chunks >= 2);
  assert.equal(text, answer.choices[0].message.content);
  assert.equal(finish, answer.choices[0].finish_reason);
  assert.equal(usage.completion_tokens, answer.usage.completion_tokens);
  assert.equal(usage.prompt_tokens, answer.usage.prompt_tokens);
});

await check('the next turn reuses the cached prefix', async () => {
  const messages = [...question, { role: 'assistant', content: answer.choices[0].message.content },
    { role: 'user', content: 'And then?' }];
  const r = await client.chat.completions.create({ model, messages, max_tokens: 4, seed: 7 });
  assert.ok(r.usage.prompt_tokens_details.cached_tokens >= answer.usage.prompt_tokens - 1,
    `cached ${r.usage.prompt_tokens_details.cached_tokens} of ${r.usage.prompt_tokens}`);
});

await check('completion', async () => {
  const r = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 8, seed: 3 });
  assert.equal(r.object, 'text_completion');
  assert.equal(typeof r.choices[0].text, 'string');
  assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 8);
});

await check('streamed completion', async () => {
  const stream = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 8, seed: 3, stream: true });
  let chunks = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'text_completion');
    assert.equal(typeof chunk.choices[0].text, 'string');
    chunks++;
  }
  assert.ok(chunks >= 1);
});

await check('unknown model is a NotFoundError', async () => {
  await assert.rejects(
    client.chat.completions.create({ model: 'no-such-model', messages: question, max_tokens: 2 }),
    (e) => e instanceof NotFoundError && e.status === 404 && e.code === 'model_not_found');
});
