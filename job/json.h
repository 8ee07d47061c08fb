#pragma once
// A minimal JSON object writer for summaries: flat or nested objects, numbers, strings,
// null, and arrays of strings, integers or objects. Keys keep the order they were added in.
// And the reader of one field of such a summary, as a job's summary reads its peers'.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace starling::job {

class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, long long value);
  JsonObject& add(const std::string& key, int value) { return add(key, static_cast<long long>(value)); }
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add(const std::string& key, std::optional<double> value);
  JsonObject& add(const std::string& key, const std::vector<std::string>& values);
  JsonObject& add(const std::string& key, const std::vector<int64_t>& values);
  JsonObject& add(const std::string& key, const JsonObject& object);
  JsonObject& add(const std::string& key, const std::vector<JsonObject>& objects);

  /// Pretty-printed with two-space indentation.
  std::string str(int indent = 0) const;

 private:
  JsonObject& raw(const std::string& key, std::string json);
  std::vector<std::pair<std::string, std::string>> fields_;
};

std::string json_quote(const std::string& text);

/// Writes `text` to `path` through a temporary file and rename; throws std::runtime_error.
void write_file_atomic(const std::string& path, const std::string& text);

/// The value text of `"key": value` in a summary written by JsonObject (one field a line).
std::string summary_field(const std::string& json, const std::string& key);
/// That value as a number; nullopt when missing, null or not a number.
std::optional<double> summary_number(const std::string& json, const std::string& key);

}  // namespace starling::job
