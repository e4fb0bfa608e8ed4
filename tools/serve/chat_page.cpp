#include "tools/serve/chat_page.h"

namespace zinc::serve {

// One self-contained page: no build step, no CDN (these machines may have no internet). It
// talks to this server's own /v1/chat/completions with streaming, keeps the conversation in
// localStorage, and renders a small, HTML-escaped subset of markdown.
std::string_view chatPageHtml() {
    return R"zinc(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>zinc-rt chat</title>
<style>
  :root { --bg: #f6f7f9; --fg: #1d2330; --muted: #6b7280; --user: #dbeafe; --bot: #ffffff; --accent: #2563eb; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.5 system-ui, sans-serif; background: var(--bg); color: var(--fg);
         display: flex; flex-direction: column; height: 100vh; }
  header { display: flex; gap: 1em; align-items: center; padding: .6em 1em; background: #1d2330; color: #fff; }
  header h1 { font-size: 1.05em; margin: 0; }
  header .info { color: #c7cede; font-size: .85em; }
  header button { margin-left: auto; }
  #log { flex: 1; overflow-y: auto; padding: 1em; }
  .msg { max-width: 52em; margin: 0 auto .8em; padding: .6em .9em; border-radius: 8px; background: var(--bot);
         box-shadow: 0 1px 2px rgba(0,0,0,.08); }
  .msg.user { background: var(--user); }
  .msg .role { font-size: .75em; color: var(--muted); text-transform: uppercase; }
  .msg details { color: var(--muted); font-size: .9em; margin: .3em 0; }
  .msg pre { background: #111827; color: #e5e7eb; padding: .6em; border-radius: 6px; overflow-x: auto; }
  .msg code { background: #eef0f3; padding: 0 .2em; border-radius: 3px; }
  .msg pre code { background: none; padding: 0; }
  .stats { font-size: .75em; color: var(--muted); margin-top: .3em; }
  .error { color: #b91c1c; }
  form { display: flex; gap: .5em; padding: .8em 1em; background: #fff; border-top: 1px solid #e5e7eb; }
  textarea { flex: 1; resize: vertical; min-height: 2.6em; font: inherit; padding: .4em; }
  button { font: inherit; padding: .3em 1em; border: 0; border-radius: 6px; background: var(--accent); color: #fff; cursor: pointer; }
  button:disabled { opacity: .5; cursor: default; }
  #stop { background: #b91c1c; }
</style>
</head>
<body>
<header>
  <h1>zinc-rt</h1>
  <span class="info">model <b id="model">…</b> · tier <span id="tier">…</span></span>
  <button id="clear" type="button">New chat</button>
</header>
<main id="log"></main>
<form id="form">
  <textarea id="input" placeholder="Message (Enter sends, Shift+Enter for a new line)"></textarea>
  <button id="send" type="submit">Send</button>
  <button id="stop" type="button" disabled>Stop</button>
</form>
<script>
"use strict";
const $ = (id) => document.getElementById(id);
const store = "zinc-rt-chat";
let conversation = JSON.parse(localStorage.getItem(store) || "[]");
let modelId = "";
let controller = null;

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = localStorage.getItem("zinc-rt-api-key");
  if (key) h["Authorization"] = "Bearer " + key;
  return h;
}

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// A small markdown subset: fenced code, inline code, bold, italics, headings, lists, links.
function renderMarkdown(text) {
  const parts = text.split(/```/);
  return parts.map((part, i) => {
    if (i % 2 === 1) {
      const nl = part.indexOf("\n");
      const lang = nl >= 0 ? part.slice(0, nl).trim() : "";
      const code = nl >= 0 ? part.slice(nl + 1) : part;
      return `<pre><code class="lang-${escapeHtml(lang)}">${escapeHtml(code)}</code></pre>`;
    }
    let h = escapeHtml(part);
    h = h.replace(/`([^`\n]+)`/g, "<code>$1</code>");
    h = h.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>");
    h = h.replace(/(^|[^*])\*([^*\n]+)\*/g, "$1<em>$2</em>");
    h = h.replace(/^#{1,6} (.*)$/gm, "<strong>$1</strong>");
    h = h.replace(/^\s*[-*] (.*)$/gm, "• $1");
    h = h.replace(/\[([^\]]+)\]\((https?:[^)\s]+)\)/g, '<a href="$2" rel="noopener" target="_blank">$1</a>');
    return h.replace(/\n/g, "<br>");
  }).join("");
}

function messageElement(m) {
  const div = document.createElement("div");
  div.className = "msg " + m.role;
  div.innerHTML = `<div class="role">${m.role}</div>`;
  if (m.reasoning) {
    const d = document.createElement("details");
    d.className = "reasoning";
    d.innerHTML = `<summary>Thinking</summary><div class="reasoning-text"></div>`;
    d.querySelector(".reasoning-text").innerHTML = renderMarkdown(m.reasoning);
    div.appendChild(d);
  }
  const c = document.createElement("div");
  c.className = "content";
  c.innerHTML = renderMarkdown(m.content || "");
  div.appendChild(c);
  if (m.stats) {
    const s = document.createElement("div");
    s.className = "stats";
    s.textContent = m.stats;
    div.appendChild(s);
  }
  return div;
}

function render() {
  const log = $("log");
  log.replaceChildren(...conversation.map(messageElement));
  log.scrollTop = log.scrollHeight;
}

function save() { localStorage.setItem(store, JSON.stringify(conversation)); }

async function loadInfo() {
  try {
    const health = await (await fetch("/health")).json();
    $("model").textContent = modelId = health.model || "";
    $("tier").textContent = health.tier || "";
  } catch (e) { $("model").textContent = "(server not reachable)"; }
}

// Reads server-sent events from a fetch response, calling onEvent with each parsed data line.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data !== "[DONE]") onEvent(JSON.parse(data));
      }
    }
  }
}

async function send(text) {
  conversation.push({ role: "user", content: text });
  const reply = { role: "assistant", content: "", reasoning: "" };
  conversation.push(reply);
  render();
  const history = conversation.slice(0, -1).map((m) => ({ role: m.role, content: m.content }));
  controller = new AbortController();
  $("send").disabled = true;
  $("stop").disabled = false;
  const started = performance.now();
  let firstAt = 0, tokens = 0;
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST", headers: headers(), signal: controller.signal,
      body: JSON.stringify({ model: modelId, messages: history, stream: true, stream_options: { include_usage: true } }),
    });
    if (response.status === 401) {
      const key = prompt("This server needs an API key:");
      if (key) localStorage.setItem("zinc-rt-api-key", key);
      throw new Error("the server needs an API key (401); send again");
    }
    if (!response.ok) throw new Error((await response.json()).error?.message || response.statusText);
    await readEvents(response, (chunk) => {
      if (chunk.usage) tokens = chunk.usage.completion_tokens;
      const delta = chunk.choices?.[0]?.delta || {};
      if (delta.content || delta.reasoning_content) {
        if (!firstAt) firstAt = performance.now();
        reply.content += delta.content || "";
        reply.reasoning += delta.reasoning_content || "";
        render();
      }
    });
  } catch (e) {
    if (e.name !== "AbortError") reply.error = String(e.message || e);
    else reply.stopped = true;
  } finally {
    const seconds = ((firstAt ? performance.now() - firstAt : 0) / 1000);
    const rate = tokens > 1 && seconds > 0 ? ((tokens - 1) / seconds).toFixed(1) + " tok/s" : "";
    reply.stats = [tokens ? tokens + " tokens" : "", rate, reply.stopped ? "stopped" : "",
                   reply.error ? "error: " + reply.error : ""].filter(Boolean).join(" · ");
    controller = null;
    $("send").disabled = false;
    $("stop").disabled = true;
    save();
    render();
  }
}

$("form").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("input").value.trim();
  if (!text || controller) return;
  $("input").value = "";
  send(text);
});
$("input").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("form").requestSubmit(); }
});
$("stop").addEventListener("click", () => controller && controller.abort());
$("clear").addEventListener("click", () => { conversation = []; save(); render(); });
loadInfo();
render();
</script>
</body>
</html>
)zinc";
}

}  // namespace zinc::serve
