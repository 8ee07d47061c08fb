#include "learners/models/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>

namespace starling {
namespace {

using Json = nlohmann::ordered_json;

struct DtypeInfo {
  const char* name;
  int bytes;
};
constexpr DtypeInfo kDtypes[] = {{"F32", 4}, {"F16", 2}, {"BF16", 2}};

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// IEEE half to float, subnormals, infinities and NaNs included.
float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa · 2⁻²⁴
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) return from_bits(sign | 0x7f800000u | (mantissa << 13));
  return from_bits(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t load16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

uint32_t load32(const unsigned char* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

float f32(const unsigned char* p) { return from_bits(load32(p)); }
float f16(const unsigned char* p) { return half_to_float(load16(p)); }
float bf16(const unsigned char* p) { return from_bits(static_cast<uint32_t>(load16(p)) << 16); }

// The element count of `shape`, or false when it overflows what a file could hold.
bool element_count(const std::vector<int64_t>& shape, uint64_t& count) {
  count = 1;
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && count > (uint64_t{1} << 62) / static_cast<uint64_t>(d)) return false;
    count *= static_cast<uint64_t>(d);
  }
  return true;
}

struct Entry {
  NamedTensor tensor;
  std::string dtype;
  uint64_t begin = 0, end = 0;
};

// One tensor's header entry, checked against the data's length.
Entry parse_entry(const std::string& where, const std::string& name, const Json& j, uint64_t data_bytes) {
  const std::string at = where + ": tensor '" + name + "'";
  if (!j.is_object()) throw SafetensorsError(at + ": expected an object");
  const auto dtype = j.find("dtype"), shape = j.find("shape"), offsets = j.find("data_offsets");
  if (dtype == j.end() || shape == j.end() || offsets == j.end())
    throw SafetensorsError(at + ": needs dtype, shape and data_offsets");
  Entry e;
  if (!dtype->is_string()) throw SafetensorsError(at + ": dtype is not a string");
  e.dtype = dtype->get<std::string>();
  const auto info = std::find_if(std::begin(kDtypes), std::end(kDtypes), [&](const DtypeInfo& d) { return e.dtype == d.name; });
  if (info == std::end(kDtypes)) throw SafetensorsError(at + ": dtype " + e.dtype + " is not one of F32, F16, BF16");
  if (!shape->is_array()) throw SafetensorsError(at + ": shape is not an array");
  for (const Json& d : *shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) throw SafetensorsError(at + ": shape holds a non-integer or negative size");
    e.tensor.shape.push_back(d.get<int64_t>());
  }
  if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
    throw SafetensorsError(at + ": data_offsets must be two non-negative integers");
  e.begin = (*offsets)[0].get<uint64_t>(), e.end = (*offsets)[1].get<uint64_t>();
  if (e.begin > e.end || e.end > data_bytes)
    throw SafetensorsError(at + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                           ") lie outside the " + std::to_string(data_bytes) + " bytes of data");
  uint64_t count = 0;
  if (!element_count(e.tensor.shape, count) || count * static_cast<uint64_t>(info->bytes) != e.end - e.begin)
    throw SafetensorsError(at + ": its shape needs " + std::to_string(count) + " values of " + e.dtype + ", its data holds " +
                           std::to_string(e.end - e.begin) + " bytes");
  e.tensor.name = name;
  return e;
}

// The entries must tile the data exactly: no overlap, no hole.
void check_tiling(const std::string& where, std::vector<Entry>& entries, uint64_t data_bytes) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  uint64_t at = 0;
  for (const Entry& e : entries) {
    if (e.begin != at)
      throw SafetensorsError(where + ": tensor '" + e.tensor.name + "' starts at byte " + std::to_string(e.begin) +
                             (e.begin < at ? ", inside another tensor" : ", leaving a hole before it"));
    at = e.end;
  }
  if (at != data_bytes) throw SafetensorsError(where + ": " + std::to_string(data_bytes - at) + " bytes after the last tensor");
}

std::map<std::string, std::string> parse_metadata(const std::string& where, const Json& j) {
  if (!j.is_object()) throw SafetensorsError(where + ": __metadata__ is not an object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) throw SafetensorsError(where + ": __metadata__." + key + " is not a string");
    metadata[key] = value.get<std::string>();
  }
  return metadata;
}

void store32(float f, unsigned char* p) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(bits >> (8 * i));
}

}  // namespace

const NamedTensor* TensorFile::find(const std::string& name) const {
  for (const NamedTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

void write_safetensors(const std::string& path, const TensorFile& file) {
  Json header = Json::object();
  if (!file.metadata.empty()) header["__metadata__"] = file.metadata;
  uint64_t offset = 0;
  std::set<std::string> names;
  for (const NamedTensor& t : file.tensors) {
    uint64_t count = 0;
    if (!element_count(t.shape, count) || count != t.values.size())
      throw SafetensorsError(path + ": tensor '" + t.name + "' has " + std::to_string(t.values.size()) + " values for its shape");
    if (!names.insert(t.name).second || t.name == "__metadata__")
      throw SafetensorsError(path + ": tensor name '" + t.name + "' repeats or is reserved");
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + 4 * count}}};
    offset += 4 * count;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(static_cast<uint64_t>(text.size()) >> (8 * i));
    out.write(reinterpret_cast<const char*>(length), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::vector<unsigned char> bytes;
    for (const NamedTensor& t : file.tensors) {
      bytes.resize(4 * t.values.size());
      for (std::size_t i = 0; i < t.values.size(); ++i) store32(t.values[i], bytes.data() + 4 * i);
      out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    if (!out.flush()) throw SafetensorsError(path + ": cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) throw SafetensorsError(path + ": cannot rename " + temporary + " to it");
}

TensorFile read_safetensors(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw SafetensorsError(path + ": cannot open");
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  unsigned char length[8];
  if (size < 8 || !in.read(reinterpret_cast<char*>(length), 8)) throw SafetensorsError(path + ": shorter than the 8-byte header length");
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | length[i];
  if (header_bytes > kMaxSafetensorsHeader)
    throw SafetensorsError(path + ": header of " + std::to_string(header_bytes) + " bytes, above the limit of " +
                           std::to_string(kMaxSafetensorsHeader));
  if (header_bytes > size - 8)
    throw SafetensorsError(path + ": truncated: the header needs " + std::to_string(header_bytes) + " bytes, the file has " +
                           std::to_string(size - 8) + " after the length");
  std::string text(header_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_bytes));
  const Json header = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) throw SafetensorsError(path + ": the header is not a JSON object");
  const uint64_t data_bytes = size - 8 - header_bytes;
  TensorFile file;
  std::vector<Entry> entries;
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") file.metadata = parse_metadata(path, value);
    else entries.push_back(parse_entry(path, name, value, data_bytes));
  }
  check_tiling(path, entries, data_bytes);
  std::vector<unsigned char> bytes;
  for (Entry& e : entries) {
    bytes.resize(e.end - e.begin);
    in.seekg(static_cast<std::streamoff>(8 + header_bytes + e.begin));
    if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
      throw SafetensorsError(path + ": cannot read tensor '" + e.tensor.name + "'");
    // The dtype is chosen once a tensor, not once a value.
    float (*const decode)(const unsigned char*) = e.dtype == "F32" ? f32 : e.dtype == "F16" ? f16 : bf16;
    const std::size_t width = e.dtype == "F32" ? 4 : 2;
    e.tensor.values.resize(bytes.size() / width);
    for (std::size_t i = 0; i < e.tensor.values.size(); ++i) e.tensor.values[i] = decode(bytes.data() + i * width);
    file.tensors.push_back(std::move(e.tensor));
  }
  return file;
}

}  // namespace starling
