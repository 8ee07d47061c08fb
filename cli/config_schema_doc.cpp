#include "cli/config_schema_doc.h"

#include "cli/config_schema.h"

#include <toml++/toml.h>

#include <iomanip>
#include <limits>
#include <sstream>

namespace starling::cli {
namespace {

const char* type_name(KeyKind kind) {
  switch (kind) {
    case KeyKind::flag: return "boolean";
    case KeyKind::integer: return "integer";
    case KeyKind::integer_or_auto: return "integer_or_auto";
    case KeyKind::number: return "number";
    case KeyKind::number_or_adaptive: return "number_or_adaptive";
    case KeyKind::text: return "string";
    case KeyKind::path: return "path";
    case KeyKind::choice: return "choice";
    case KeyKind::integers: return "integers";
    case KeyKind::layers: return "layers";
  }
  return "?";
}

// Enough digits that a bound such as 0.99999999 does not print as 1.
std::string number_text(double value) {
  std::ostringstream out;
  out << std::setprecision(10) << value;
  return out.str();
}

// Integer bounds as a reader knows them: 2^31 − 1 rather than 2147483647.
std::string integer_text(int64_t value) {
  if (value == std::numeric_limits<int64_t>::max()) return "2^63 − 1";
  if (value == std::numeric_limits<int32_t>::max()) return "2^31 − 1";
  return std::to_string(value);
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "`\"" : ", `\"") + name + "\"`";
  return out;
}

std::string default_cell(const KeyType& t) {
  const KeyValue& v = t.fallback;
  if (t.required) return "required";
  switch (t.kind) {
    case KeyKind::flag: return v.flag ? "true" : "false";
    case KeyKind::integer:
    case KeyKind::integer_or_auto: return std::to_string(v.integer);
    case KeyKind::number: return number_text(v.number);
    case KeyKind::number_or_adaptive: return v.number == 0.0 ? "`\"adaptive\"`" : number_text(v.number);
    case KeyKind::text:
    case KeyKind::path:
    case KeyKind::choice: return "`\"" + v.text + "\"`";
    case KeyKind::integers: {
      std::string out;
      for (int i : v.integers) out += (out.empty() ? "" : ", ") + std::to_string(i);
      return "`[" + out + "]`";
    }
    case KeyKind::layers: return "—";
  }
  return "";
}

std::string allowed_cell(const KeyType& t) {
  switch (t.kind) {
    case KeyKind::integer: return "[" + integer_text(t.int_min) + ", " + integer_text(t.int_max) + "]";
    case KeyKind::integer_or_auto:
      return "[" + integer_text(t.int_min) + ", " + integer_text(t.int_max) + "] or `\"auto\"`";
    case KeyKind::number:
    case KeyKind::number_or_adaptive:
      return (t.open_min ? "(" : "[") + number_text(t.min) + ", " +
             (t.max == std::numeric_limits<double>::max() ? "inf)" : number_text(t.max) + "]") +
             (t.kind == KeyKind::number_or_adaptive ? " or `\"adaptive\"`" : "");
    case KeyKind::choice: return quoted_list(t.choices);
    case KeyKind::integers: return "positive integers";
    case KeyKind::path: return "relative to the config file";
    default: return "";
  }
}

// The default, in the key's own type.
void add_default(toml::table& row, const KeyType& t) {
  const KeyValue& v = t.fallback;
  switch (t.kind) {
    case KeyKind::flag: row.insert("default", v.flag); break;
    case KeyKind::integer:
    case KeyKind::integer_or_auto: row.insert("default", v.integer); break;
    case KeyKind::number:
    case KeyKind::number_or_adaptive: row.insert("default", v.number); break;
    case KeyKind::text:
    case KeyKind::path:
    case KeyKind::choice: row.insert("default", v.text); break;
    case KeyKind::integers: {
      toml::array list;
      for (int i : v.integers) list.push_back(i);
      row.insert("default", std::move(list));
      break;
    }
    case KeyKind::layers: break;
  }
}

void add_range(toml::table& row, const KeyType& t) {
  if (t.kind == KeyKind::integer || t.kind == KeyKind::integer_or_auto) {
    row.insert("min", t.int_min);
    row.insert("max", t.int_max);
  } else if (t.kind == KeyKind::number || t.kind == KeyKind::number_or_adaptive) {
    row.insert("min", t.min);
    if (t.max != std::numeric_limits<double>::max()) row.insert("max", t.max);
    row.insert("min_exclusive", t.open_min);
  } else if (t.kind == KeyKind::choice) {
    toml::array choices;
    for (const auto& c : t.choices) choices.push_back(c);
    row.insert("choices", std::move(choices));
  }
}

}  // namespace

std::string schema_markdown() {
  std::ostringstream out;
  out << "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
  for (const KeySpec& k : config_schema()) {
    const std::string type = k.type.kind == KeyKind::integer_or_auto      ? "integer"
                             : k.type.kind == KeyKind::number_or_adaptive ? "number"
                                                                          : type_name(k.type.kind);
    out << "| `" << k.name << "` | " << type << " | " << default_cell(k.type) << " | " << allowed_cell(k.type) << " | "
        << k.doc << (k.per_peer ? " (per peer)" : "") << " |\n";
  }
  return out.str();
}

std::string schema_json() {
  toml::array rows;
  for (const KeySpec& k : config_schema()) {
    toml::table row;
    row.insert("key", k.name);
    row.insert("type", type_name(k.type.kind));
    if (!k.type.required) add_default(row, k.type);
    add_range(row, k.type);
    row.insert("required", k.type.required);
    row.insert("doc", k.doc);
    row.insert("per_peer", k.per_peer);
    rows.push_back(std::move(row));
  }
  std::ostringstream out;
  out << toml::json_formatter{rows} << "\n";
  return out.str();
}

}  // namespace starling::cli
