#pragma once
// The live page of the swarm (live_page.html, built into the binary: no file and nothing
// fetched from outside). It polls /seed.json for the first peer to ask (empty: its own
// origin), then every peer's /state.json it learns of.
#include <string>

namespace starling::monitor {

const std::string& live_page_html();

/// The page's /seed.json: where it starts (an http://host:port URL, or "" for its origin).
std::string seed_json(const std::string& seed_url);

}  // namespace starling::monitor
