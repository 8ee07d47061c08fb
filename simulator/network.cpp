#include "simulator/network.h"

#include <cctype>
#include <cstdlib>
#include <utility>
#include <vector>

namespace starling::simulator {
namespace {

// A positive (or, where allowed, zero) number followed by one of `units` (longest match first); false otherwise.
bool number_with_unit(const std::string& text, const std::vector<std::pair<std::string, double>>& units, double& out,
                      bool zero_allowed) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !(value > 0 || (zero_allowed && value == 0)) || value > 1e30) return false;
  const std::string unit(end);
  for (const auto& [name, scale] : units)
    if (unit == name) {
      out = value * scale;
      return true;
    }
  return false;
}

const std::vector<std::pair<std::string, double>> kRates = {
    {"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1.0}};
const std::vector<std::pair<std::string, double>> kTimes = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
const std::vector<std::pair<std::string, double>> kSizes = {
    {"kib", 1024.0}, {"mib", 1048576.0}, {"kb", 1e3}, {"mb", 1e6}, {"b", 1.0}};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

NetworkSpec parse_network(const std::string& spec) {
  NetworkSpec out;
  out.text = spec;
  const std::string s = lower(spec);
  if (s == "loopback") {
    out.loopback = true;
    return out;
  }
  std::vector<std::string> fields;
  for (std::size_t from = 0;;) {
    const auto colon = s.find(':', from);
    fields.push_back(s.substr(from, colon == std::string::npos ? std::string::npos : colon - from));
    if (colon == std::string::npos) break;
    from = colon + 1;
  }
  double bits = 0, latency = kDefaultLatency, burst = 0;
  const std::string expected =
      "expected RATE[:LATENCY[:BURST]] such as 10gbit, 1gbit:50us, 100mbit:1ms, 100mbit:50us:125kb, or loopback";
  if (fields.size() > 3 || !number_with_unit(fields[0], kRates, bits, false))
    throw SpecError("--network '" + spec + "': bad rate; " + expected);
  if (fields.size() > 1 && !number_with_unit(fields[1], kTimes, latency, true))
    throw SpecError("--network '" + spec + "': bad latency; " + expected);
  if (fields.size() > 2 && !number_with_unit(fields[2], kSizes, burst, false))
    throw SpecError("--network '" + spec + "': bad burst; " + expected);
  out.link.alpha_seconds = latency;
  out.link.beta_bytes_per_second = bits / 8.0;
  out.link.burst_bytes = burst;
  return out;
}

}  // namespace starling::simulator
