#include "cli/json_log.h"

#include "job/progress.h"

#include <nlohmann/json.hpp>
#include <spdlog/formatter.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>
#include <memory>

namespace starling::cli {

using job::ProgressLine;

namespace {

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since = msg.time.time_since_epoch();
    const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since).count();
    const auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since).count() % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char time[40];
    const std::size_t n = std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(time + n, sizeof time - n, ".%03dZ", static_cast<int>(millis));
    const nlohmann::json line{{"time", time},
                              {"level", spdlog::level::to_string_view(msg.level).data()},
                              {"logger", std::string(msg.logger_name.data(), msg.logger_name.size())},
                              {"message", std::string(msg.payload.data(), msg.payload.size())}};
    // Invalid UTF-8 in a message (a file name, say) is replaced, not thrown on.
    const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override { return std::make_unique<JsonFormatter>(); }
};

}  // namespace

void use_json_log() {
  spdlog::set_formatter(std::make_unique<JsonFormatter>());
  ProgressLine::log_lines(true);
}

}  // namespace starling::cli
