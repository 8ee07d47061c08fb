#include "simulator/stragglers.h"

#include "simulator/network.h"

#include <cmath>
#include <cstdlib>

namespace starling::simulator {
namespace {

// The number at text[from, to) or SpecError.
double field(const std::string& text, std::size_t from, std::size_t to, const std::string& spec) {
  const std::string s = text.substr(from, to == std::string::npos ? std::string::npos : to - from);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v) || v < 0)
    throw SpecError("--straggler '" + spec + "': expected none, lognormal:SIGMA or bimodal:P:FACTOR");
  return v;
}

}  // namespace

double Stragglers::draw(std::mt19937_64& rng) const {
  switch (kind) {
    case Kind::lognormal: return std::exp(sigma * std::normal_distribution<double>()(rng) - sigma * sigma / 2);
    case Kind::bimodal: return std::uniform_real_distribution<double>()(rng) < probability ? factor : 1.0;
    case Kind::none: break;
  }
  return 1.0;
}

double Stragglers::mean() const { return kind == Kind::bimodal ? 1.0 + probability * (factor - 1.0) : 1.0; }

Stragglers parse_stragglers(const std::string& text) {
  Stragglers s;
  if (text.empty() || text == "none") return s;
  const std::string bad = "--straggler '" + text + "': expected none, lognormal:SIGMA (0..3) or bimodal:P:FACTOR (P in [0,1], FACTOR ≥ 1)";
  if (text.rfind("lognormal:", 0) == 0) {
    s.kind = Stragglers::Kind::lognormal;
    s.sigma = field(text, 10, std::string::npos, text);
    if (s.sigma > 3) throw SpecError(bad);
    return s;
  }
  if (text.rfind("bimodal:", 0) == 0) {
    const auto colon = text.find(':', 8);
    if (colon == std::string::npos) throw SpecError(bad);
    s.kind = Stragglers::Kind::bimodal;
    s.probability = field(text, 8, colon, text);
    s.factor = field(text, colon + 1, std::string::npos, text);
    if (s.probability > 1 || s.factor < 1) throw SpecError(bad);
    return s;
  }
  throw SpecError(bad);
}

}  // namespace starling::simulator
