#pragma once
// GET /: the web chat page, shipped inside the binary. Streams replies (a stop button aborts
// the request, which cancels the generation), shows a Qwen3 <think> part collapsed, renders
// markdown and code blocks, says tokens per second per reply and which model and tier answer,
// and keeps the conversation in the browser's localStorage.
#include <string_view>

namespace zinc::serve {

std::string_view chatPageHtml();

}  // namespace zinc::serve
