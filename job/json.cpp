#include "job/json.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace starling::job {

std::string json_quote(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

namespace {

// Shifts every line after the first of a multi-line value by `pad`.
std::string reindent(const std::string& text, const std::string& pad) {
  std::string shifted;
  for (char ch : text) shifted += ch == '\n' ? "\n" + pad : std::string(1, ch);
  return shifted;
}

}  // namespace

JsonObject& JsonObject::raw(const std::string& key, std::string json) {
  fields_.emplace_back(key, std::move(json));
  return *this;
}

JsonObject& JsonObject::add(const std::string& key, const std::string& value) { return raw(key, json_quote(value)); }

JsonObject& JsonObject::add(const std::string& key, double value) {
  if (!std::isfinite(value)) return raw(key, "null");
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", value);
  return raw(key, buf);
}

JsonObject& JsonObject::add(const std::string& key, long long value) { return raw(key, std::to_string(value)); }

JsonObject& JsonObject::add(const std::string& key, bool value) { return raw(key, value ? "true" : "false"); }

JsonObject& JsonObject::add(const std::string& key, std::optional<double> value) {
  return value ? add(key, *value) : raw(key, "null");
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<std::string>& values) {
  std::string json = "[";
  for (std::size_t i = 0; i < values.size(); ++i) json += (i ? ", " : "") + json_quote(values[i]);
  return raw(key, json + "]");
}

JsonObject& JsonObject::add(const std::string& key, const std::vector<int64_t>& values) {
  std::string json = "[";
  for (std::size_t i = 0; i < values.size(); ++i) json += (i ? ", " : "") + std::to_string(values[i]);
  return raw(key, json + "]");
}

JsonObject& JsonObject::add(const std::string& key, const JsonObject& object) { return raw(key, "\x01" + object.str(0)); }

JsonObject& JsonObject::add(const std::string& key, const std::vector<JsonObject>& objects) {
  std::string json = "[";
  for (std::size_t i = 0; i < objects.size(); ++i) json += (i ? ",\n  " : "\n  ") + reindent(objects[i].str(0), "  ");
  return raw(key, "\x01" + json + (objects.empty() ? "]" : "\n]"));
}

std::string JsonObject::str(int indent) const {
  const std::string pad(static_cast<std::size_t>(indent) + 2, ' ');
  std::string out = "{\n";
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    std::string value = fields_[i].second;
    if (!value.empty() && value[0] == '\x01') value = reindent(value.substr(1), pad);  // nested, several lines
    out += pad + json_quote(fields_[i].first) + ": " + value + (i + 1 < fields_.size() ? ",\n" : "\n");
  }
  return out + std::string(static_cast<std::size_t>(indent), ' ') + "}";
}

void write_file_atomic(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error(tmp + ": cannot write");
  }
  std::filesystem::rename(tmp, target);
}

std::optional<double> summary_number(const std::string& json, const std::string& key) {
  const std::string v = summary_field(json, key);
  if (v.empty() || v == "null") return std::nullopt;
  try {
    return std::stod(v);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string summary_field(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\": ";
  const auto at = json.find(needle);
  if (at == std::string::npos) return "";
  const auto start = at + needle.size();
  const auto end = json.find_first_of(",\n", start);
  return json.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace starling::job
