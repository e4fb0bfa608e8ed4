// The chat page at / in a real browser: Debian's chromium, headless, driven by puppeteer-core.
// The page loads from `zinc-rt serve` and says which model and tier answer; a message gets a
// streamed reply read from the DOM; Stop ends a reply that would otherwise run to the context
// (the server cancels its generation); the conversation survives a reload; a screenshot is not
// blank. Usage: node browser_test.mjs BASE_URL MODEL [CHROMIUM]
import assert from 'node:assert/strict';
import puppeteer from 'puppeteer-core';

const [baseURL, model, chromium = '/usr/bin/chromium'] = process.argv.slice(2);
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
});

function ok(name) { console.log(`ok - browser: ${name}`); }

async function cancelled() {
  return (await fetch(`${baseURL}/health`).then((r) => r.json())).cancelled;
}

try {
  const page = await browser.newPage();
  await page.setViewport({ width: 900, height: 700 });
  // Ban qwen3-tiny's end-of-generation tokens (1022, 1023) in the page's requests, so that a
  // reply runs to the context unless stopped (random weights could otherwise end it early).
  await page.setRequestInterception(true);
  page.on('request', (req) => {
    if (req.method() !== 'POST' || !req.url().endsWith('/v1/chat/completions')) return req.continue();
    const body = JSON.parse(req.postData());
    body.logit_bias = { 1022: -100, 1023: -100 };
    req.continue({ postData: JSON.stringify(body) });
  });
  page.setDefaultTimeout(30_000);
  await page.goto(baseURL, { waitUntil: 'load' });
  await page.waitForFunction((m) => document.getElementById('model').textContent === m, {}, model);
  const tier = await page.$eval('#tier', (e) => e.textContent);
  assert.ok(tier.length > 0 && tier !== '…', `tier shown: '${tier}'`);
  ok(`page loads, shows model ${model} and tier '${tier}'`);

  // A message gets a streamed reply: text appears in the DOM before the reply is over.
  await page.type('#input', 'Tell me a story.');
  await page.click('#send');
  await page.waitForFunction(() => {
    const c = document.querySelectorAll('.msg.assistant .content');
    return c.length === 1 && c[0].textContent.length > 0;
  });
  const whileStreaming = await page.$eval('#stop', (b) => b.disabled);
  assert.equal(whileStreaming, false, 'the stop button is enabled while the reply streams');
  ok('a message gets a reply streamed into the page');

  // Stop: the reply (no max_tokens: it would run to the context) ends, marked stopped, and
  // the server cancels the generation.
  const before = await cancelled();
  await page.click('#stop');
  await page.waitForFunction(() => document.querySelector('.msg.assistant .stats')?.textContent.includes('stopped'));
  assert.equal(await page.$eval('#send', (b) => b.disabled), false);
  for (let i = 0; i < 50 && (await cancelled()) === before; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(await cancelled(), before + 1, 'the server cancelled the stopped generation');
  ok('stop ends the reply and the server cancels it');

  // The conversation is kept in the browser.
  const kept = await page.$eval('.msg.assistant .content', (e) => e.textContent);
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('.msg.assistant');
  assert.equal(await page.$eval('.msg.user .content', (e) => e.textContent), 'Tell me a story.');
  assert.equal(await page.$eval('.msg.assistant .content', (e) => e.textContent), kept);
  ok('the conversation survives a reload');

  // Markdown and code blocks are rendered; a Qwen3 thinking part is collapsed.
  await page.evaluate(() => localStorage.setItem('zinc-rt-chat', JSON.stringify([
    { role: 'user', content: 'Code?' },
    { role: 'assistant', reasoning: 'They want code.', content: 'Here:\n```python\nprint("<b>")\n```\nUse **`print`**.' },
  ])));
  await page.reload({ waitUntil: 'load' });
  await page.waitForSelector('.msg.assistant pre code');
  assert.equal(await page.$eval('.msg.assistant pre code', (e) => e.textContent), 'print("<b>")\n');
  assert.equal(await page.$eval('.msg.assistant strong code', (e) => e.textContent), 'print');
  assert.equal(await page.$eval('.msg.assistant details.reasoning', (e) => e.open), false);
  assert.equal(await page.$eval('.msg.assistant .reasoning-text', (e) => e.textContent), 'They want code.');
  ok('markdown and code blocks rendered, thinking collapsed');

  // A screenshot with content: count the distinct colours of its pixels in a canvas.
  const png = await page.screenshot({ encoding: 'base64', type: 'png' });
  const colours = await page.evaluate(async (data) => {
    const img = new Image();
    img.src = `data:image/png;base64,${data}`;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = img.width;
    canvas.height = img.height;
    const ctx = canvas.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const px = ctx.getImageData(0, 0, img.width, img.height).data;
    const seen = new Set();
    for (let i = 0; i < px.length; i += 4 * 7) seen.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
    return seen.size;
  }, png);
  assert.ok(colours > 20, `the screenshot has ${colours} colours`);
  ok(`a screenshot is not blank (${colours} colours)`);
} finally {
  await browser.close();
}
