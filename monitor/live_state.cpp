#include "monitor/live_state.h"

#include "gossip/control/state_hashes.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace starling::monitor {
namespace {

const char* state_of(const gossip::PeerStatus& p) {
  return p.finished ? "finished" : !p.alive ? "dead" : p.suspected ? "suspected" : "alive";
}

// Halves a curve that reached its bound, keeping its first and last points.
template <typename P>
void append_bounded(std::vector<P>& curve, P point) {
  if (curve.size() >= kMaxCurvePoints) {
    std::vector<P> half;
    for (std::size_t i = 0; i < curve.size(); i += 2) half.push_back(curve[i]);
    curve = std::move(half);
  }
  curve.push_back(point);
}

}  // namespace

LiveState::LiveState(LiveIdentity who) : who_(std::move(who)) {}

void LiveState::update(const actors::NodeSnapshot& snapshot) {
  std::lock_guard<std::mutex> lock(mutex_);
  actors::NodeSnapshot s = snapshot;
  if (!s.peers_read) {  // the peers as last read
    s.peers = last_.peers, s.drops = last_.drops, s.members = last_.members;
    s.view_changes = last_.view_changes, s.neighbours = last_.neighbours, s.state_digest = last_.state_digest;
  }
  const double dt = s.wall_seconds - peers_wall_;
  for (const gossip::PeerStatus& p : snapshot.peers_read ? s.peers : std::vector<gossip::PeerStatus>{}) {
    const auto before = std::find_if(last_.peers.begin(), last_.peers.end(), [&](const auto& b) { return b.id == p.id; });
    if (dt > 0 && before != last_.peers.end())
      sent_per_second_[p.id] = static_cast<double>(p.traffic.bytes_sent - before->traffic.bytes_sent) / dt;
  }
  if (snapshot.peers_read) peers_wall_ = s.wall_seconds;
  last_.wall_seconds = s.wall_seconds;  // the events' time
  if (!started_) event_locked("training started");
  started_ = true;
  for (const gossip::PeerStatus& p : s.peers) {
    std::string& was = states_[p.id];
    if (was != state_of(p) && !(was.empty() && std::string(state_of(p)) == "alive"))
      event_locked("peer " + std::to_string(p.id) + " is " + state_of(p));
    was = state_of(p);
  }
  if (s.view_changes > last_.view_changes)
    event_locked("view change: " + std::to_string(s.members.size()) + " members");
  for (const auto& [id, n] : s.neighbours) {
    uint64_t& seen = clipped_[id];
    if (n.clipped > seen && seen == 0) event_locked("neighbour " + std::to_string(id) + "'s update clipped");
    seen = n.clipped;
  }
  if (s.final) event_locked("training finished");
  if (s.step > last_.step || train_.empty()) append_bounded(train_, Point{s.wall_seconds, double(s.step), s.loss});
  last_ = s;
  last_at_ = std::chrono::steady_clock::now();
}

void LiveState::update(const EvalPoint& p, double value) {
  std::lock_guard<std::mutex> lock(mutex_);
  append_bounded(validation_, Point{p.wall_seconds, double(p.step), value});
}

void LiveState::event(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex_);
  event_locked(text);
}

void LiveState::event_locked(const std::string& text) {
  if (events_.size() >= kMaxEvents) events_.pop_front();
  events_.emplace_back(last_.wall_seconds, text);
}

std::string LiveState::json() const {
  using nlohmann::json;
  std::lock_guard<std::mutex> lock(mutex_);
  json j;
  j["id"] = who_.id;
  j["run"] = who_.run;
  j["endpoint"] = who_.endpoint;
  j["metric"] = who_.metric;
  j["state"] = last_.final ? "finished" : started_ ? "training" : "starting";
  j["step"] = last_.step;
  j["total_steps"] = last_.total_steps;
  j["epoch"] = last_.epoch;
  j["loss"] = last_.loss;
  j["samples_per_second"] = last_.samples_per_second;
  j["learners"] = last_.learners;
  j["wall_seconds"] = last_.wall_seconds;
  j["snapshot_age_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_at_).count();
  j["members"] = last_.members;
  j["view_changes"] = last_.view_changes;
  j["drops"] = last_.drops;
  if (last_.state_digest) {
    j["state_round"] = last_.state_digest->first;
    j["state_hash"] = gossip::digest_text(last_.state_digest->second);  // as the log and the summary write it
  }
  auto curve = [](const std::vector<Point>& points) {
    json a = json::array();
    for (const Point& p : points) a.push_back({p.wall, p.step, p.value});
    return a;
  };
  j["train"] = curve(train_);
  j["validation"] = curve(validation_);
  json peers = json::array();
  for (const PeerAddress& a : who_.peers) {
    json p{{"id", a.id}, {"endpoint", a.endpoint}, {"monitor", a.monitor_url}};
    const auto it = std::find_if(last_.peers.begin(), last_.peers.end(), [&](const gossip::PeerStatus& s) { return s.id == a.id; });
    if (it != last_.peers.end()) {
      p["bytes_sent"] = it->traffic.bytes_sent;
      p["bytes_received"] = it->traffic.bytes_received;
      if (const auto r = sent_per_second_.find(a.id); r != sent_per_second_.end()) p["sent_per_second"] = r->second;
      p["silent_seconds"] = it->silent_seconds ? json(*it->silent_seconds) : json(nullptr);
      p["state"] = state_of(*it);
    }
    if (const auto n = last_.neighbours.find(a.id); n != last_.neighbours.end()) {
      p["rounds"] = n->second.rounds;
      p["clipped"] = n->second.clipped;
    }
    peers.push_back(std::move(p));
  }
  j["peers"] = std::move(peers);
  json events = json::array();
  for (const auto& [wall, text] : events_) events.push_back({{"wall", wall}, {"text", text}});
  j["events"] = std::move(events);
  return j.dump();
}

}  // namespace starling::monitor
