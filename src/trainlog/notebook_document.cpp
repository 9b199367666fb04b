#include "trainlog/notebook_document.hpp"

#include <optional>

#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "base/utf8.hpp"

namespace sparkops::trainlog {

namespace {

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// The tag's name in lower case ("td", "/tr", "br"), from just after its '<'.
std::string tag_name(std::string_view tag) {
  std::string name;
  for (const char c : tag) {
    if (!is_alpha(c) && c != '/' && !(c >= '0' && c <= '9')) break;
    name.push_back(lower(c));
  }
  return name;
}

// "&lt;" -> "<" and the like at `p` (just past '&'); `end` receives the offset after the ';'.
std::optional<std::string> entity_at(std::string_view s, std::size_t p, std::size_t& end) {
  const std::size_t semi = s.find(';', p);
  if (semi == std::string_view::npos || semi - p > 10) return std::nullopt;
  const std::string_view name = s.substr(p, semi - p);
  end = semi + 1;
  if (name == "lt") return "<";
  if (name == "gt") return ">";
  if (name == "amp") return "&";
  if (name == "quot") return "\"";
  if (name == "apos" || name == "#39") return "'";
  if (name == "nbsp") return " ";
  return std::nullopt;
}

// A string or a list of strings (nbformat's multiline strings), joined.
std::string joined_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  if (v.is_array()) {
    for (const auto& part : v) {
      if (part.is_string()) out += part.get<std::string>();
    }
  }
  return out;
}

void append_line_block(std::string& out, std::string_view text) {
  if (text.empty()) return;
  out.append(text);
  if (out.back() != '\n') out.push_back('\n');
}

}  // namespace

bool looks_like_notebook(std::string_view head) {
  const std::string_view t = trim(head);
  // Jupyter writes the keys sorted, so "nbformat" comes after every cell: the head shows "cells"
  // and the first cell's "cell_type".
  return !t.empty() && t.front() == '{' && t.find("\"cells\"") != std::string_view::npos &&
         (t.find("\"cell_type\"") != std::string_view::npos ||
          t.find("\"nbformat\"") != std::string_view::npos);
}

std::string html_as_text(std::string_view html) {
  std::string out;
  bool cell_open_in_row = false;  // a cell was already written in this row: the next one tabs
  std::string pending;            // the current text run, whitespace collapsed at its ends
  const auto flush = [&] {
    const std::string_view t = trim(pending);
    out.append(t);
    pending.clear();
  };
  for (std::size_t p = 0; p < html.size(); ++p) {
    const char c = html[p];
    if (c == '<' && p + 1 < html.size() &&
        (is_alpha(html[p + 1]) || html[p + 1] == '/' || html[p + 1] == '!')) {
      const std::size_t close = html.find('>', p);
      if (close == std::string_view::npos) break;  // a cut-off tag ends the text
      flush();
      const std::string name = tag_name(html.substr(p + 1, close - p - 1));
      if (name == "tr") {
        cell_open_in_row = false;
      } else if (name == "td" || name == "th") {
        if (cell_open_in_row) out.push_back('\t');
        cell_open_in_row = true;
      } else if (name == "/tr" || name == "/div" || name == "/p" || name == "br" || name == "br/" ||
                 name == "/table" || name == "/h1" || name == "/h2" || name == "/h3" ||
                 name == "/li" || name == "/pre") {
        if (!out.empty() && out.back() != '\n') out.push_back('\n');
      }
      p = close;
      continue;
    }
    if (c == '&') {
      std::size_t end = 0;
      if (const auto e = entity_at(html, p + 1, end)) {
        pending += *e;
        p = end - 1;
        continue;
      }
    }
    if (c == '\n' || c == '\r' || c == '\t') {
      if (!pending.empty() && pending.back() != ' ') pending.push_back(' ');
      continue;
    }
    pending.push_back(c);
  }
  flush();
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  return out;
}

Result<std::string> notebook_output_text(std::string_view document) {
  const auto doc = nlohmann::json::parse(document, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return fail(Errc::malformed, "not valid JSON (a notebook document is one JSON object)");
  }
  const auto cells = doc.find("cells");
  if (cells == doc.end() || !cells->is_array()) {
    return fail(Errc::malformed, "a notebook without a \"cells\" list");
  }
  std::string out;
  for (const auto& cell : *cells) {
    if (!cell.is_object()) continue;
    const auto outputs = cell.find("outputs");
    if (outputs == cell.end() || !outputs->is_array()) continue;
    for (const auto& o : *outputs) {
      if (!o.is_object()) continue;
      const std::string type = o.value("output_type", std::string());
      if (type == "stream") {
        append_line_block(out, joined_text(o.value("text", nlohmann::json())));
      } else if (type == "error") {
        append_line_block(out, joined_text(o.value("traceback", nlohmann::json())));
      } else if (const auto data = o.find("data"); data != o.end() && data->is_object()) {
        if (const auto html = data->find("text/html"); html != data->end()) {
          append_line_block(out, html_as_text(joined_text(*html)));
        } else if (const auto plain = data->find("text/plain"); plain != data->end()) {
          append_line_block(out, joined_text(*plain));
        }
      }
    }
  }
  return sanitize_utf8(out);
}

}  // namespace sparkops::trainlog
